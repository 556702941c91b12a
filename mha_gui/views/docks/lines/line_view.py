"""The token lines dock: which keys each query reads, every head at once.

Hover a token to see only its lines; click a head's chip to hide or show that head (view
state, not an undo step); click a query to follow it. The figure is
export/figures/lines.py: the same Drawing paints this dock and
`mha-gui export --view lines [--head I]`.
"""

from __future__ import annotations

from mha_gui.engine.panels.stage_panels import check_weights_range
from mha_gui.export.figures.lines import MIN_WIDTH, WIDTH, LinesDrawing
from mha_gui.views.docks.dock_width import widen_on_show
from mha_gui.views.widgets.drawing_widget import FIGURE_SETTINGS, NUMBER_SIGNALS, DrawingWidget
from mha_gui.views.window.registry import ViewSpec, register_view


class LineView(DrawingWidget):
    """Every head's lines; hover a token for its lines alone, click a head's chip to hide
    or show it, click a query to follow it. Follows View ▸ Weights range. Laid out for
    the dock's width at full size; taller than the dock, it scrolls."""

    reflow = (MIN_WIDTH, WIDTH)
    min_scale = 1.0

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.hidden: set[int] = set()
        self.focus: tuple[str, int] | None = None
        self.weights_range = "fixed"
        self.follow((*NUMBER_SIGNALS, "viewChanged"), settings, (*FIGURE_SETTINGS, "weights_range"))
        self.hitClicked.connect(self._clicked)

    def set_head_visible(self, head: int, visible: bool) -> None:
        """Show or hide one head's lines (view state: no undo step, nothing saved)."""
        (self.hidden.discard if visible else self.hidden.add)(int(head))
        self.refresh()

    def set_weights_range(self, name: str) -> None:
        self.weights_range = check_weights_range(name)
        self.refresh()

    def _clicked(self, item) -> None:
        kind, index = item
        if kind == "head":
            self.set_head_visible(index, index in self.hidden)
        elif kind == "query":
            self.document.set_query(index)

    def hovered(self, found) -> None:
        focus = found if found is not None and found[0] in ("query", "key") else None
        if focus != self.focus:
            self.focus = focus
            self.refresh()

    def leaveEvent(self, event):
        self.hovered(None)
        super().leaveEvent(event)

    def make_drawing(self, interactive: bool = True, width: float | None = None) -> LinesDrawing:
        doc = self.document
        c = doc.config
        self.hidden = {i for i in self.hidden if i < c.h}
        if self.focus is not None and self.focus[1] >= c.n:
            self.focus = None
        return LinesDrawing(
            doc,
            hidden=self.hidden,
            focus=self.focus,
            query=doc.view.query,
            inspected=doc.view.head,
            weights_range=self.weights_range,
            interactive=interactive,
            width=self.layout_width() if width is None else width,
        )

    def showEvent(self, event) -> None:
        super().showEvent(event)
        widen_on_show(self, lambda: WIDTH * self.zoom)  # as wide as the figure, if it may

    def export_drawing(self, vector: bool) -> LinesDrawing:
        """The figure on paper: at its own width, without "hover a token…" (a file has
        no mouse)."""
        return self.make_drawing(interactive=False, width=WIDTH)


register_view(ViewSpec("lines", LineView, "lineView", "Token lines", figure="lines"))

__all__ = ["LineView"]
