"""Theme, colour map, projector zoom and "show values" for the heatmap views.

The attention view and the query strip react to these the same way — validate, store,
rebuild once — so the rule lives here once. `bind_display(settings)` subscribes a view
to a DisplaySettings model (views/settings/display_settings.py): it applies the current values
and every later change through the view's set_theme / set_colormap / set_zoom /
set_show_values / set_weights_range. A view lacking one fails when bound, never silently.
"""

from __future__ import annotations

from mha_gui import theme

# What a view follows by default: each name calls the view's `set_<name>`.
DISPLAY_SETTINGS = ("theme", "colormap", "zoom", "show_values")
# A view that colours attention weights follows their colour range too.
HEATMAP_SETTINGS = (*DISPLAY_SETTINGS, "weights_range")


def bind_display(view, settings, names: tuple[str, ...] = DISPLAY_SETTINGS) -> None:
    """Subscribe `view` to the settings `names` (through its `set_<name>` methods)."""
    for name in names:
        settings.follow(name, getattr(view, f"set_{name}"))


class DisplayOptions:
    """Mixin for a heatmap view with `_theme`, `_colormap`, `_zoom`, `rebuild()`,
    `set_show_values()` and `set_weights_range()`."""

    def bind_display(self, settings) -> None:
        """Follow a DisplaySettings: current values now, every change later."""
        bind_display(self, settings, HEATMAP_SETTINGS)

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
