"""What a heatmap panel draws over its colours, given the plot and palette it draws in.

`PanelMarks` owns four kinds of marks, each made once per panel and then only shown,
hidden or given a new path: the blocked cells (grey, hatched, a × on small matrices),
the exercise's blanks (dashed empty boxes with their numbers), a switched-off head's
cover ("off", greyed and hatched: not colour alone) and the query row's outline.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem

from mha_gui import theme
from mha_gui.views.widgets import safe_items


def _path_item(pen: QPen, brush: QBrush, z: float) -> QGraphicsPathItem:
    item = QGraphicsPathItem()
    item.setPen(pen)
    item.setBrush(brush)
    item.setZValue(z)
    return item


def _cosmetic(colour: str, width: float, style=Qt.PenStyle.SolidLine) -> QPen:
    pen = QPen(QColor(colour))
    pen.setCosmetic(True)
    pen.setWidthF(width)
    pen.setStyle(style)
    return pen


class PanelMarks:
    """The marks of a `rows` × `cols` panel drawn in `plot`, coloured from `palette`.

    `hidden` (the blanks' cells), `blank_numbers` ((row, col) -> its 1-based number) and
    `off` say what is shown; `query_rect` is the query row's outline.
    """

    def __init__(self, plot, rows: int, cols: int, palette: theme.Palette):
        self.plot, self.rows, self.cols, self.palette = plot, rows, cols, palette
        self.hidden: frozenset[tuple[int, int]] = frozenset()
        self.blank_numbers: dict[tuple[int, int], int] = {}
        self.off = False
        no_pen = QPen(Qt.PenStyle.NoPen)
        self.blocked_fill = _path_item(no_pen, QBrush(QColor(palette.blocked)), 1)
        self.blocked_hatch = _path_item(_cosmetic(palette.hatch, 1.6), QBrush(), 1.5)
        # diagonal lines: readable at any size
        lines = QBrush(QColor(palette.hatch), Qt.BrushStyle.BDiagPattern)
        self.blocked_lines = _path_item(no_pen, lines, 1.2)
        # hidden cells (exercise blanks): an opaque neutral box with an outline, above the
        # colours and the hatching, below the query outline
        dashed = _cosmetic(palette.muted, 1.5, Qt.PenStyle.DashLine)
        self.hidden_boxes = _path_item(dashed, QBrush(QColor(palette.panel)), 2.5)
        for item in (self.blocked_lines, self.blocked_fill, self.blocked_hatch, self.hidden_boxes):
            plot.addItem(item, ignoreBounds=True)
        self._blank_items: list[pg.TextItem] = []  # the blanks' numbers, as listed

        # a head switched off: greyed and hatched (not colour alone), with "off" on it
        whole = QRectF(0.0, 0.0, float(cols), float(rows))
        self.off_cover = QGraphicsRectItem(whole)
        cover = QColor(palette.panel)
        cover.setAlpha(170)
        self.off_cover.setBrush(QBrush(cover))
        self.off_cover.setPen(no_pen)
        self.off_cover.setZValue(2.6)
        self.off_hatch = QGraphicsRectItem(whole)
        self.off_hatch.setBrush(QBrush(QColor(palette.muted), Qt.BrushStyle.BDiagPattern))
        self.off_hatch.setPen(no_pen)
        self.off_hatch.setZValue(2.7)
        self.off_text = safe_items.TextItem("off", color=palette.text, anchor=(0.5, 0.5))
        self.off_text.setPos(cols / 2, rows / 2)
        self.off_text.setZValue(2.8)
        for item in (self.off_cover, self.off_hatch, self.off_text):
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)

        self.query_rect = QGraphicsRectItem()
        self.query_rect.setPen(_cosmetic(palette.highlight, 3.0))
        self.query_rect.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.query_rect.setZValue(3)
        self.query_rect.setVisible(False)
        plot.addItem(self.query_rect, ignoreBounds=True)

    # ------------------------------------------------------------------ blocked ---
    def draw_blocked(self, blocked: np.ndarray | None) -> None:
        """Grey, hatched rectangles over the `blocked` cells (a × in each, up to 48 rows)."""
        fill, cross = QPainterPath(), QPainterPath()
        if blocked is not None:
            for r in range(self.rows):
                cols = np.flatnonzero(blocked[r])
                if not cols.size:
                    continue
                # contiguous runs become one rectangle each
                breaks = np.flatnonzero(np.diff(cols) > 1)
                starts = np.concatenate(([cols[0]], cols[breaks + 1]))
                ends = np.concatenate((cols[breaks], [cols[-1]]))
                for a, b in zip(starts, ends, strict=True):
                    fill.addRect(QRectF(float(a), float(r), float(b - a + 1), 1.0))
                if self.rows <= 48:
                    for c in cols:
                        m = 0.3
                        cross.moveTo(c + m, r + m)
                        cross.lineTo(c + 1 - m, r + 1 - m)
                        cross.moveTo(c + 1 - m, r + m)
                        cross.lineTo(c + m, r + 1 - m)
        self.blocked_fill.setPath(fill)
        self.blocked_lines.setPath(fill)
        self.blocked_hatch.setPath(cross)

    # ------------------------------------------------------------------- blanks ---
    def set_hidden(self, cells, cell_px: float) -> bool:
        """Draw `cells` as empty boxes (see HeatmapPanel.set_hidden), numbered at a size
        for cells of `cell_px` pixels; True when what is hidden changed."""
        order = dict(cells) if isinstance(cells, dict) else {}
        hidden = frozenset(
            (int(r), int(c)) for r, c in cells if 0 <= r < self.rows and 0 <= c < self.cols
        )
        numbers = {cell: int(order[cell]) + 1 for cell in hidden if cell in order}
        if hidden == self.hidden and numbers == self.blank_numbers:
            return False
        self.hidden, self.blank_numbers = hidden, numbers
        path = QPainterPath()
        m = 0.06  # a margin: neighbouring blanks stay separate boxes
        for r, c in sorted(hidden):
            path.addRect(QRectF(c + m, r + m, 1 - 2 * m, 1 - 2 * m))
        self.hidden_boxes.setPath(path)
        self._draw_blank_numbers(cell_px)
        return True

    def _draw_blank_numbers(self, cell_px: float) -> None:
        """The blanks' numbers in their boxes (TextItems made once per blank shown)."""
        numbers = sorted(self.blank_numbers.items())
        while len(self._blank_items) < len(numbers):
            item = safe_items.TextItem("", color=self.palette.text, anchor=(0.5, 0.5))
            item.setZValue(2.9)
            self.plot.addItem(item, ignoreBounds=True)
            self._blank_items.append(item)
        font = QFont()
        font.setPixelSize(max(8, min(18, round(cell_px * 0.5))))
        font.setBold(True)
        for i, item in enumerate(self._blank_items):
            if i < len(numbers):
                (r, c), number = numbers[i]
                item.setText(str(number))
                item.setFont(font)
                item.setPos(c + 0.5, r + 0.5)
            item.setVisible(i < len(numbers))

    def blank_number_texts(self) -> dict[tuple[int, int], str]:
        """{(row, col): the number drawn in that blank's box} (what a student sees)."""
        items = [i for i in self._blank_items if i.isVisible()]
        return {
            (math.floor(i.pos().y()), math.floor(i.pos().x())): i.textItem.toPlainText()
            for i in items
        }

    # ---------------------------------------------------------------- off, query ---
    def set_off(self, off: bool, cell_px: float) -> None:
        """Greyed, hatched and labelled "off" (the numbers stay readable underneath)."""
        off = bool(off)
        if off == self.off:
            return
        self.off = off
        font = QFont()
        font.setPixelSize(max(10, min(28, round(cell_px * min(self.rows, self.cols) * 0.3))))
        font.setBold(True)
        self.off_text.setFont(font)
        for item in (self.off_cover, self.off_hatch, self.off_text):
            item.setVisible(off)

    def set_query(self, row: int | None) -> None:
        """Outline query row `row` (None: none)."""
        if row is None or not 0 <= row < self.rows:
            self.query_rect.setVisible(False)
            return
        rect = QRectF(0.0, float(row), float(self.cols), 1.0)
        if self.query_rect.rect() != rect:
            self.query_rect.setRect(rect)
        self.query_rect.setVisible(True)
