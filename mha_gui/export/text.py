"""Fonts and text for the figures: sizes in logical units, rich text with sub/superscripts.

Figures print engine text (`W_i^Q`, `d_model`, `10^{−5}`) with real subscripts; measuring
and drawing go through the same QTextDocument so a label is laid out where it is painted.
"""

from __future__ import annotations

import os
import sys

from mha_gui.engine.layer.numbers import minus
from mha_gui.engine.panels.notation import rich_text
from mha_gui.export.painter import painter_on, saved

FONT_FAMILY = "DejaVu Sans"


def ensure_app():
    """A QApplication for fonts and painting; created on demand, offscreen if headless."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication([])
        ensure_app._app = app  # keep a reference for the process lifetime
    return app


def make_font(px: float, bold: bool = False):
    from PySide6.QtGui import QFont

    f = QFont(FONT_FAMILY)
    f.setPixelSize(max(1, int(round(px))))
    f.setBold(bold)
    f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return f


_metrics_cache: dict = {}


def text_width(text: str, px: float, bold: bool = False) -> float:
    from PySide6.QtGui import QFontMetricsF

    key = (int(round(px)), bold)
    fm = _metrics_cache.get(key)
    if fm is None:
        fm = _metrics_cache[key] = QFontMetricsF(make_font(px, bold))
    return fm.horizontalAdvance(text)


def qcolor(c):
    from PySide6.QtGui import QColor

    if isinstance(c, str):
        return QColor(c)
    return QColor(int(c[0]), int(c[1]), int(c[2]))


def rich_html(text: str) -> str:
    """Plain formula text to Qt rich text (engine/panels/notation.py `rich_text`, the one
    typesetter of the window and the figures): `W_i^Q` → W<sub>i</sub><sup>Q</sup>."""
    return rich_text(text)


def _rich_doc(text: str, px: float, color: str, bold: bool = False, width: float | None = None):
    """A QTextDocument of `text` as rich text: on one line, or wrapped to `width`."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(make_font(px, bold))
    if width is None:
        doc.setHtml(f'<span style="color:{color}; white-space:pre">{rich_html(text)}</span>')
    else:
        doc.setTextWidth(width)
        doc.setHtml(f'<span style="color:{color}">{rich_html(minus(text))}</span>')
    return doc


def _paint_doc(painter, doc, x: float, y: float) -> None:
    with saved(painter):
        painter.translate(x, y)
        doc.drawContents(painter)


def rich_width(text: str, px: float, bold: bool = False) -> float:
    return _rich_doc(text, px, "#000000", bold).idealWidth()


def draw_rich(painter, x: float, y: float, text: str, px: float, color: str, bold=False) -> None:
    _paint_doc(painter, _rich_doc(text, px, color, bold), x, y)


def draw_rich_wrapped(
    painter, x: float, y: float, width: float, text: str, px: float, color: str, bold=False
) -> float:
    """Rich text (`W_O`, `d_model` get their subscripts) wrapped to `width`; returns
    the height used."""
    doc = _rich_doc(text, px, color, bold, width=width)
    _paint_doc(painter, doc, x, y)
    return doc.size().height()


def wrapped_height(text: str, px: float, width: float, bold: bool = False) -> float:
    """The height `draw_rich_wrapped` takes for `text` at `width` (measured on a QPicture)."""
    from PySide6.QtGui import QPicture

    picture = QPicture()
    with painter_on(picture) as painter:
        return draw_rich_wrapped(painter, 0, 0, width, text, px, "#000000", bold)


def draw_plain_wrapped(
    painter, x: float, y: float, width: float, text: str, px: float, color: str, bold=False
) -> float:
    """Plain text (a token or a path may hold `<`, `_` or `^`: printed as they are)
    wrapped to `width`; returns its height. With painter None it is only measured."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QFontMetricsF

    flags = Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap
    font = make_font(px, bold)
    box = QFontMetricsF(font).boundingRect(QRectF(0, 0, width, 10_000), flags, text)
    if painter is not None:
        painter.setFont(font)
        painter.setPen(qcolor(color))
        painter.drawText(QRectF(x, y, width, box.height() + 2), flags, text)
    return box.height()


def elide(text: str, px: float, width: float, bold: bool = False) -> str:
    if text_width(text, px, bold) <= width:
        return text
    while text and text_width(text + "…", px, bold) > width:
        text = text[:-1]
    return text + "…"
