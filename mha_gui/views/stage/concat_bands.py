"""The concat stage's decoration: which columns of H came from which head."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from mha_gui import theme
from mha_gui.engine.panels.stage_panels import symbol
from mha_gui.views.widgets import safe_items


class ConcatBands:
    """Head-coloured Z_i bands over H's column blocks, and one outline per block, shown
    for the inspected head (`show`). The items live on H's plot (its canvas owns them)."""

    def __init__(self, plot, c, pal: theme.Palette, room: float = 0.6):
        """`room`: the rows of view above H's first row the bands take (its top margin)."""
        self.config = c
        self.labels: dict[int, pg.TextItem] = {}
        self.bands: dict[int, QGraphicsRectItem] = {}  # each head's coloured band
        self.outlines: dict[int, QGraphicsRectItem] = {}
        self.off_marks: dict[int, QGraphicsRectItem] = {}  # hatched: a switched-off head
        for i in range(c.h):
            mark = QGraphicsRectItem(QRectF(i * c.d_v, 0.0, c.d_v, c.n))
            mark.setBrush(QBrush(QColor(pal.muted), Qt.BrushStyle.BDiagPattern))
            mark.setPen(QPen(Qt.PenStyle.NoPen))
            mark.setZValue(2.6)
            mark.setVisible(False)
            plot.addItem(mark, ignoreBounds=True)
            self.off_marks[i] = mark
            band = QGraphicsRectItem(
                QRectF(i * c.d_v + 0.04, -0.93 * room, c.d_v - 0.08, 0.77 * room)
            )
            band.setBrush(QBrush(QColor(theme.head_color(i))))
            band.setPen(QPen(Qt.PenStyle.NoPen))
            plot.addItem(band, ignoreBounds=True)
            self.bands[i] = band
            label = safe_items.TextItem("", color="#ffffff")
            label.setHtml(f"<b>{symbol('Z', i, c).html}</b>")
            label.setColor("#ffffff")
            label.setAnchor((0.5, 0.5))
            label.setPos(i * c.d_v + c.d_v / 2, -0.55 * room)
            label.setZValue(4)
            plot.addItem(label, ignoreBounds=True)
            self.labels[i] = label
            outline = QGraphicsRectItem(QRectF(i * c.d_v, -0.97 * room, c.d_v, c.n + 0.97 * room))
            pen = QPen(QColor(theme.head_color(i)))
            pen.setCosmetic(True)
            pen.setWidthF(4.0)
            outline.setPen(pen)
            outline.setZValue(5)
            outline.setVisible(False)
            plot.addItem(outline, ignoreBounds=True)
            self.outlines[i] = outline
            if i:
                line = safe_items.InfiniteLine(
                    pos=i * c.d_v, angle=90, pen=pg.mkPen(pal.background, width=2)
                )
                line.setZValue(2.5)
                plot.addItem(line, ignoreBounds=True)

    def set_off(self, heads) -> None:
        """Hatch the columns of the switched-off heads (their Z, all zeros) and name them
        "Z_i off" in their band."""
        for i, mark in self.off_marks.items():
            if mark.isVisible() != (i in heads):
                mark.setVisible(i in heads)
                self.labels[i].setHtml(
                    f"<b>{symbol('Z', i, self.config).html}{' off' if i in heads else ''}</b>"
                )

    def show(self, head: int) -> None:
        """Outline the inspected head's block (none for another head)."""
        for i, outline in self.outlines.items():
            outline.setVisible(i == head)
