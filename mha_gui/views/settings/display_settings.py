"""Display settings — theme, colour map, zoom, show values, weights colour range — as
one small model.

`DisplaySettings` holds the values the View menu changes. Views do not get them pushed by
the window: they subscribe, and a change reaches every subscriber.

Signals:
    changed(name, value)     any setting, with its stored value (theme may be "system")
    themeChanged(str)        the effective theme, "light" or "dark" (what views draw in)
    colormapChanged(str)     a key of theme.COLORMAP_CHOICES
    zoomChanged(float)       projector zoom factor, ZOOM_STEPS[0] … ZOOM_STEPS[-1]
    showValuesChanged(bool)  numbers printed in heatmap cells
    weightsRangeChanged(str) what the weights' colours show: "fixed" (0–1), or divided by
                             the "head"'s or the "row"'s largest weight
    stageLayoutChanged(str)  the stage area's layout: "grid" (every head alike),
                             "one-big" (the inspected head large, the others as
                             thumbnails) or "auto" (grid up to four heads, else one-big)

Each is emitted only when a value really changes. `set(name, value, save=True)` validates
(ValueError for a bad value, nothing changes), stores and emits; with `save=True` — what a
user's action passes — it also writes the QSettings key. Values are read from QSettings
once, when the model is built; nothing is written unless the user changes something, so a
fresh start leaves the settings file as it was.

A view subscribes with one line: `settings.follow("colormap", self.set_colormap)` (the
slot gets the current value now and every new one later), or
`bind_display(self, settings)` (views/settings/display_options.py) for theme, colour map,
zoom and show values through its set_<name> methods; a heatmap view's HeatmapOptions
(`options.bind(settings)`) follows the weights colour range too.

Adding a setting: one FIELDS entry and one Signal line (and a menu entry in menus.py).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings, Signal

from mha_gui import theme
from mha_gui.engine.panels.stage_panels import check_weights_range

THEMES = ("light", "dark", "system", "high-contrast-light", "high-contrast-dark")
STAGE_LAYOUTS = ("auto", "grid", "one-big")
ZOOM_STEPS = (0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5)


def qsettings() -> QSettings:
    """The app's settings store (tests move it into a temporary folder)."""
    return QSettings("mha-gui", "mha-gui")


def _theme(value) -> str:
    if value not in THEMES:
        raise ValueError(f"unknown theme {value!r}; choose {', '.join(THEMES)}")
    return str(value)


def _zoom(value) -> float:
    try:
        factor = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"zoom {value!r} is not a number") from None
    if not math.isfinite(factor):
        raise ValueError(f"zoom {value!r} is not a finite number")
    return max(ZOOM_STEPS[0], min(ZOOM_STEPS[-1], factor))


def _stage_layout(value) -> str:
    if value not in STAGE_LAYOUTS:
        raise ValueError(f"unknown stage layout {value!r}; choose {', '.join(STAGE_LAYOUTS)}")
    return str(value)


def _flag(value) -> bool:
    if isinstance(value, str):  # what QSettings gives back from an INI file
        text = value.strip().lower()
        if text not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            raise ValueError(f"{value!r} is not true or false")
        return text in ("1", "true", "yes", "on")
    return bool(value)


@dataclass(frozen=True)
class Field:
    key: str  # the QSettings key
    default: object
    check: Callable[[object], object]  # the value to store, or ValueError
    signal: str  # the name of the signal that carries the (effective) value


FIELDS: dict[str, Field] = {
    "theme": Field("view/theme", "light", _theme, "themeChanged"),
    "colormap": Field(
        "view/colormap", theme.DEFAULT_COLORMAP, theme.check_colormap, "colormapChanged"
    ),
    "zoom": Field("view/zoom", 1.0, _zoom, "zoomChanged"),
    "show_values": Field("view/showValues", True, _flag, "showValuesChanged"),
    "weights_range": Field(
        "view/weightsRange", "fixed", check_weights_range, "weightsRangeChanged"
    ),
    "stage_layout": Field("view/stageLayout", "auto", _stage_layout, "stageLayoutChanged"),
}


def next_zoom(factor: float, step: int) -> float:
    """The next zoom step up (step > 0) or down from `factor`, within ZOOM_STEPS."""
    if step > 0:
        bigger = [z for z in ZOOM_STEPS if z > factor + 1e-9]
        return bigger[0] if bigger else ZOOM_STEPS[-1]
    smaller = [z for z in ZOOM_STEPS if z < factor - 1e-9]
    return smaller[-1] if smaller else ZOOM_STEPS[0]


class DisplaySettings(QObject):
    changed = Signal(str, object)
    themeChanged = Signal(str)
    colormapChanged = Signal(str)
    zoomChanged = Signal(float)
    showValuesChanged = Signal(bool)
    weightsRangeChanged = Signal(str)
    stageLayoutChanged = Signal(str)

    def __init__(self, parent: QObject | None = None, *, load: bool = True):
        super().__init__(parent)
        self._values = {name: f.default for name, f in FIELDS.items()}
        if load:
            self.load()

    # ------------------------------------------------------------------ reading ----
    def value(self, name: str):
        """The stored value of a setting (the theme may be "system")."""
        _field(name)
        return self._values[name]

    def effective(self, name: str):
        """What subscribers get: the stored value, with "system" resolved to a theme."""
        value = self.value(name)
        if name == "theme" and value == "system":
            from mha_gui.views.window.appearance import system_theme

            return system_theme()
        return value

    @property
    def theme(self) -> str:
        return self._values["theme"]

    def theme_name(self) -> str:
        """The effective theme, "light" or "dark"."""
        return self.effective("theme")

    @property
    def colormap(self) -> str:
        return self._values["colormap"]

    @property
    def zoom(self) -> float:
        return self._values["zoom"]

    @property
    def show_values(self) -> bool:
        return self._values["show_values"]

    @property
    def weights_range(self) -> str:
        return self._values["weights_range"]

    @property
    def stage_layout(self) -> str:
        return self._values["stage_layout"]

    # ------------------------------------------------------------------ writing ----
    def set(self, name: str, value, save: bool = True) -> bool:
        """Validate and store; True if the value changed. `save` writes it to QSettings."""
        field = _field(name)
        value = field.check(value)
        if value == self._values[name]:
            return False
        self._values[name] = value
        if save:
            qsettings().setValue(field.key, value)
        self.changed.emit(name, value)
        getattr(self, field.signal).emit(self.effective(name))
        return True

    def follow(self, name: str, slot: Callable) -> None:
        """Call `slot(value)` now and on every change of one setting (effective value)."""
        getattr(self, _field(name).signal).connect(slot)
        slot(self.effective(name))

    def load(self) -> None:
        """Read every setting from QSettings (a missing or bad entry keeps the default).

        Writes nothing and emits nothing: call it before anything subscribes.
        """
        store = qsettings()
        for name, field in FIELDS.items():
            raw = store.value(field.key)
            if raw is None:
                continue
            with contextlib.suppress(ValueError):  # a hand-edited or older value
                self._values[name] = field.check(raw)


def _field(name: str) -> Field:
    try:
        return FIELDS[name]
    except KeyError:
        raise ValueError(f"unknown display setting {name!r}; choose {', '.join(FIELDS)}") from None
