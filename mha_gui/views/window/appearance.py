"""The application-wide look, following the display settings: the palette and
pyqtgraph's colours follow the theme, the application font follows the zoom.

What the application looked like before any of this — its own palette (the "system"
theme) and font size (zoom 100 %) — is remembered the first time, so switching back
restores it.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle

from mha_gui import theme
from mha_gui.export.painter import saved
from mha_gui.views.widgets.never_raises import never_raises

_system_palette: QPalette | None = None
_base_point_size: float | None = None


def capture_system_look() -> None:
    """Remember the application's own palette and font size (once per process)."""
    global _system_palette, _base_point_size
    app = QApplication.instance()
    if _system_palette is None:
        _system_palette = QPalette(app.palette())
    if _base_point_size is None:
        _base_point_size = app.font().pointSizeF()


def system_theme() -> str:
    """ "light" or "dark": how the system palette looks."""
    base = (_system_palette or QApplication.instance().palette()).color(QPalette.ColorRole.Window)
    return "dark" if base.lightness() < 128 else "light"


class _VisibleIndicators(QProxyStyle):
    """The application's style, with check box and radio indicators outlined in the
    muted text colour: Fusion outlines them in the window colour darkened, which on the
    dark theme's panel is almost invisible (an unchecked box looked like nothing)."""

    _FRAMED = (QStyle.PrimitiveElement.PE_IndicatorCheckBox,)

    @never_raises()
    def drawPrimitive(self, element, option, painter, widget=None) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element in self._FRAMED:
            with saved(painter):
                colour = option.palette.color(QPalette.ColorRole.PlaceholderText)
                colour.setAlpha(255)
                painter.setPen(QPen(colour, 1))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(option.rect.adjusted(0, 0, -1, -1))


def _outline_indicators(app) -> None:
    if not isinstance(app.style(), _VisibleIndicators):
        app.setStyle(_VisibleIndicators(app.style().name()))


def follow(settings) -> None:
    """Apply a DisplaySettings' theme and zoom to the application, now and on change."""
    capture_system_look()
    _outline_indicators(QApplication.instance())
    settings.changed.connect(lambda name, value: _apply(settings, name))
    for name in ("theme", "zoom"):
        _apply(settings, name)


def _apply(settings, name: str) -> None:
    app = QApplication.instance()
    if name == "theme":
        choice = settings.theme
        if choice == "system":
            app.setPalette(QPalette(_system_palette))
        else:
            app.setPalette(qpalette(theme.palette(choice)))
        p = theme.palette(settings.theme_name())
        pg.setConfigOptions(background=p.background, foreground=p.text, antialias=True)
    elif name == "zoom":
        font = app.font()
        font.setPointSizeF(max(1.0, (_base_point_size or 10.0) * settings.zoom))
        app.setFont(font)


def qpalette(p: theme.Palette) -> QPalette:
    """A QPalette from one of the shared theme palettes (window and figures match)."""
    pal = QPalette()
    C = QPalette.ColorRole
    text, muted = QColor(p.text), QColor(p.muted)
    pal.setColor(C.Window, QColor(p.panel))
    pal.setColor(C.WindowText, text)
    pal.setColor(C.Base, QColor(p.background))
    pal.setColor(C.AlternateBase, QColor(p.panel))
    pal.setColor(C.Text, text)
    pal.setColor(C.Button, QColor(p.panel))
    pal.setColor(C.ButtonText, text)
    pal.setColor(C.ToolTipBase, QColor(p.background))
    pal.setColor(C.ToolTipText, text)
    pal.setColor(C.PlaceholderText, muted)
    pal.setColor(C.BrightText, QColor("#ff5252"))
    select, select_text, link = theme.SELECTION.get(p.name, theme.SELECTION["light"])
    pal.setColor(C.Highlight, QColor(select))
    pal.setColor(C.HighlightedText, QColor(select_text))
    pal.setColor(C.Link, QColor(link))
    grid = QColor(p.grid)
    pal.setColor(C.Mid, grid)
    pal.setColor(C.Midlight, grid.lighter(110))
    pal.setColor(C.Dark, grid.darker(130))
    pal.setColor(C.Light, QColor(p.background).lighter(110))
    pal.setColor(C.Shadow, QColor("#000000"))
    for role in (C.WindowText, C.Text, C.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, muted)
    return pal
