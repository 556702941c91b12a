"""Theme, colour map, projector zoom, "show values" and the weights' colour range of a
heatmap view: `HeatmapOptions`, one object the view owns and its parts read.

The attention view and the query strip react to these the same way — validate, store,
rebuild once — so the rule lives here once. `bind_display(target, settings)` subscribes
an object to a DisplaySettings model (views/settings/display_settings.py): it applies the
current values and every later change through the target's set_theme / set_colormap /
set_zoom / set_show_values (/ set_weights_range) methods. A target lacking one fails when
bound, never silently.
"""

from __future__ import annotations

from collections.abc import Callable

from mha_gui import theme
from mha_gui.engine.panels.stage_panels import check_weights_range

# What a view follows by default: each name calls the view's `set_<name>`.
DISPLAY_SETTINGS = ("theme", "colormap", "zoom", "show_values")
# A view that colours attention weights follows their colour range too.
HEATMAP_SETTINGS = (*DISPLAY_SETTINGS, "weights_range")


def bind_display(view, settings, names: tuple[str, ...] = DISPLAY_SETTINGS) -> None:
    """Subscribe `view` to the settings `names` (through its `set_<name>` methods)."""
    for name in names:
        settings.follow(name, getattr(view, f"set_{name}"))


class HeatmapOptions:
    """The display options of one heatmap view, validated as they are set.

    The view says what a change means for it: `restyle()` when the panels must be built
    again (theme, colour map, zoom), `show_values(on)` and `weights_range(name)` for the
    two that need less. Each is called only when the value really changed.
    """

    def __init__(
        self,
        restyle: Callable[[], None],
        show_values: Callable[[bool], None],
        weights_range: Callable[[str], None],
        zoom_scale: Callable[[float], float] = lambda zoom: zoom,
    ):
        self.theme = "light"
        self.colormap = theme.DEFAULT_COLORMAP
        self.zoom = 1.0
        self.show_values = True
        self.weights_range = "fixed"
        self._restyle, self._show_values, self._weights_range = (
            restyle,
            show_values,
            weights_range,
        )
        self._zoom_scale = zoom_scale

    # ------------------------------------------------------------ reading -------
    @property
    def palette(self) -> theme.Palette:
        return theme.palette(self.theme)

    def pt(self, size: float) -> str:
        """A font size in points at this zoom (a view may grow slower: `zoom_scale`)."""
        return f"{size * self._zoom_scale(self.zoom):.3g}pt"

    def lut(self, role: str):
        """The lookup table of a colour role ("values" or "weights") in this colour map."""
        return theme.colormap_for(role, self.colormap)

    # ------------------------------------------------------------ setting -------
    def bind(self, settings) -> None:
        """Follow a DisplaySettings: current values now, every change later."""
        bind_display(self, settings, HEATMAP_SETTINGS)

    def set_theme(self, name: str) -> None:
        theme.palette(name)  # validates
        if name != self.theme:
            self.theme = name
            self._restyle()

    def set_colormap(self, name: str) -> None:
        """View ▸ Colormap: the colour map of signed values (and of the weights)."""
        theme.check_colormap(name)
        if name != self.colormap:
            self.colormap = name
            self._restyle()

    def set_zoom(self, factor: float) -> None:
        """Projector zoom: titles, tick labels and colour bars grow with the fonts."""
        if factor != self.zoom:
            self.zoom = float(factor)
            self._restyle()

    def set_show_values(self, show: bool) -> None:
        self.show_values = bool(show)
        self._show_values(self.show_values)

    def set_weights_range(self, name: str) -> None:
        """View ▸ Weights colour range: fixed 0–1, per-head or per-row maximum."""
        if check_weights_range(name) != self.weights_range:
            self.weights_range = name
            self._weights_range(name)
