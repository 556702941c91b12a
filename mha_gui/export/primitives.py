"""Small painting primitives the drawings share (neuron view, token lines, contributions).

Everything here paints on a QPainter already scaled to a drawing's logical units and
takes its colours from a theme palette (mha_gui/theme.py), so a drawing on screen and
its exported file look the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mha_gui.export.painter import saved
from mha_gui.export.text import make_font, qcolor


def paint_text(painter, x, y, w, h, s, px, color, align=None, bold=False) -> None:
    """Plain text in the box (x, y, w, h): left and vertically centred unless `align`."""
    from PySide6.QtCore import QRectF, Qt

    painter.setFont(make_font(px, bold))
    painter.setPen(qcolor(color))
    flags = align if align is not None else (Qt.AlignLeft | Qt.AlignVCenter)
    painter.drawText(QRectF(x, y, w, h), flags, s)


def make_pen(color: str, width: float = 1.0, dashed: bool = False):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPen

    pen = QPen(qcolor(color))
    pen.setWidthF(width)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen


def outline(painter, rect, color: str, width: float = 1.0) -> None:
    """The rectangle's outline only (no fill)."""
    from PySide6.QtCore import Qt

    with saved(painter):
        painter.setPen(make_pen(color, width))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(rect)


@contextmanager
def page(painter, drawing, pal, antialias: bool = True) -> Iterator:
    """A drawing's paint() runs inside this: the painter saved, text (and shape)
    antialiasing on, the drawing's background filled; restored when the block is left,
    even by an exception."""
    from PySide6.QtCore import QRectF

    with saved(painter):
        if antialias:
            painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        painter.setRenderHint(painter.RenderHint.TextAntialiasing, True)
        painter.fillRect(QRectF(0, 0, drawing.width, drawing.height), qcolor(pal.background))
        yield painter


def hatch(painter, rect, color: str, step: float, clip=None) -> None:
    """Diagonal lines (↗) `step` apart across `rect`, clipped to `clip` (default `rect`);
    the painter's pen and clip are restored afterwards."""
    from PySide6.QtCore import QLineF

    with saved(painter):
        painter.setClipRect(rect if clip is None else clip)
        painter.setPen(make_pen(color))
        x, y, w, h = rect.x(), rect.y(), rect.width(), rect.height()
        t = -h
        while t < w:
            painter.drawLine(QLineF(x + t, y + h, x + t + h, y))
            t += step


def paint_hatched(painter, x, y, w, h, pal) -> None:
    """A blocked box: the theme's blocked fill with diagonal hatching (as in the heatmaps)."""
    from PySide6.QtCore import QRectF

    painter.fillRect(QRectF(x, y, w, h), qcolor(pal.blocked))
    hatch(painter, QRectF(x, y, w, h), pal.hatch, 7.0)


def hatched_outline(painter, rect, pal) -> None:
    """The hatched outline of a bar that is not there (e.g. what a switched-off head would
    add), hatched like a blocked cell."""
    from PySide6.QtCore import Qt

    if rect.width() <= 0:
        return
    hatch(painter, rect, pal.hatch, 6.0, clip=rect.adjusted(-1, -1, 1, 1))
    with saved(painter):
        painter.setPen(make_pen(pal.hatch, 1.4))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect)
