"""The MHA / GQA / MQA dock: the layer's K/V cache and parameters for every choice of
h_kv, side by side. The figure is export/figures/kv_cache.py (`mha-gui export --view
kv-cache` writes it); this dock lays it out for its own width and follows every
configuration change.
"""

from __future__ import annotations

from mha_gui.export.figures.kv_cache import KvCacheDrawing
from mha_gui.views.docks.dock_width import widen_on_show
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.window.registry import ViewSpec, register_view


class KvCacheView(DrawingWidget):
    """The figure as a dock; follows every configuration change."""

    # laid out for the dock's width, never below 3/4 size: a low dock scrolls down rather
    # than shrinking the text to a few pixels
    min_scale = 0.75

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.follow(("configChanged",), settings)  # it follows every shape change too

    def make_drawing(self) -> KvCacheDrawing:
        """Laid out for this widget's width (at the zoom): stacked bars in a narrow dock."""
        return KvCacheDrawing(self.document.config, self.width() / self.zoom)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        widen_on_show(self, lambda: 0, lambda: self.sizeHint().height())  # a taller dock

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self.refresh()


register_view(
    ViewSpec("kv-cache", KvCacheView, "kvCacheView", "MHA / GQA / MQA", "kv-cache", "bottom")
)

__all__ = ["KvCacheView"]
