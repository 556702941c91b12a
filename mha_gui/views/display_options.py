"""Theme, colour map and projector zoom for the heatmap views, set by the View menu.

The attention view and the query strip react to these the same way — validate, store,
rebuild once — so the rule lives here once.
"""

from __future__ import annotations

from mha_gui import theme


class DisplayOptions:
    """Mixin for a view with `_theme`, `_colormap`, `_zoom` and a `rebuild()` method."""

    def set_theme(self, name: str) -> None:
        theme.palette(name)  # validates
        if name != self._theme:
            self._theme = name
            self.rebuild()

    def set_colormap(self, name: str) -> None:
        """View ▸ Colormap: the colour map of signed values (and of the weights)."""
        theme.check_colormap(name)
        if name != self._colormap:
            self._colormap = name
            self.rebuild()

    def set_zoom(self, factor: float) -> None:
        """Projector zoom: titles, tick labels and colour bars grow with the fonts."""
        if factor != self._zoom:
            self._zoom = float(factor)
            self.updateGeometry()  # a view whose size hint depends on the zoom
            self.rebuild()
