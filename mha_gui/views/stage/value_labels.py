"""The numbers printed in a small heatmap panel's cells.

`ValueLabels` makes one TextItem per cell once per shape (a TextItem costs ~0.4 ms to
create) and afterwards only sets texts, colours and, when the cells' size or the widest
number asks for another, the font — never on an edit that keeps it: setting the font of
every label on every edit was a fifth of a toy edit's time. Numbers print only in
matrices of at most `value_limit` rows and columns, at a legible size (else on hover).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont

from mha_gui import theme
from mha_gui.engine.layer.numbers import NumberFormat
from mha_gui.views.stage.square_grid import text_width
from mha_gui.views.widgets import safe_items

VALUE_MIN_PX = 10  # numbers in cells only at a legible size; smaller: on hover only
# the widest number takes at most this share of its cell: a fifth of a cell between two
# numbers (at 0.9, causal-6x16's "0.17 0.17 0.17" at 150 % read as one run)
VALUE_FILL = 0.8


class ValueLabels:
    """The cell numbers of a `rows` × `cols` panel drawn in `plot`; `items[r][c]` is the
    label of cell (r, c) (an empty list: the matrix is too large to print)."""

    def __init__(self, plot, rows: int, cols: int, palette, value_limit: int, show: bool):
        self.plot, self.rows, self.cols, self.palette = plot, rows, cols, palette
        self.show = show
        self.font_px = 0  # the size the cells and the widest number allow
        self._font_set = 0  # the size the labels carry (kept while they are hidden)
        self.items: list[list[pg.TextItem]] = []
        if rows <= value_limit and cols <= value_limit:
            for r in range(rows):
                row = []
                for c in range(cols):
                    item = safe_items.TextItem("", color=palette.text, anchor=(0.5, 0.5))
                    item.setPos(c + 0.5, r + 0.5)
                    item.setZValue(2)
                    plot.addItem(item, ignoreBounds=True)
                    row.append(item)
                self.items.append(row)

    def fit(self, matrix: np.ndarray | None, fmt: NumberFormat, cell=None) -> bool:
        """Choose the font size for the cells' size (`cell`: (width, height) in pixels;
        by default the view box's share) and the widest number of `matrix`; True when it
        changed (the labels then need printing again)."""
        rect = self.plot.getViewBox().sceneBoundingRect()
        if rect.width() <= 0 or not self.items:
            return False
        cw, ch = cell if cell is not None else (rect.width() / self.cols, rect.height() / self.rows)
        size = int(min(ch * 0.42, 18))
        if size >= VALUE_MIN_PX and matrix is not None:
            # the widest number must fit its cell; else a smaller font, or none. Widest
            # as printed: "−0.058" is wider than the extremes −0.07 and 0.071 (sampling
            # only those let one head's numbers run together while the others hid)
            texts = {fmt.cell(float(v)) for v in matrix[np.isfinite(matrix)]}
            widest = text_width(texts, size)
            if widest > cw * VALUE_FILL:
                size = int(size * cw * VALUE_FILL / widest)
        if size == self.font_px:
            return False
        self.font_px = size
        if size >= VALUE_MIN_PX and size != self._font_set:
            self._font_set = size
            font = QFont()
            font.setPixelSize(size)
            for row in self.items:
                for item in row:
                    item.setFont(font)
        return True

    def update(self, matrix, display, levels, lut, fmt: NumberFormat, blocked, hidden) -> None:
        """Print `matrix` in `fmt`, each number in the colour that reads on its cell's
        colour (`display` on `levels` through `lut`); blocked and `hidden` cells empty."""
        if not self.items or matrix is None:
            return
        visible = self.show and self.font_px >= VALUE_MIN_PX
        colours = theme.colors_for(display, levels, lut) if visible else None
        for r, row in enumerate(self.items):
            for c, item in enumerate(row):
                if not visible:
                    item.setVisible(False)
                    continue
                if (blocked is not None and blocked[r, c]) or (r, c) in hidden:
                    text, colour = "", self.palette.text
                else:
                    text = fmt.cell(float(matrix[r, c]))
                    colour = theme.text_color_on(colours[r, c])
                if item.textItem.toPlainText() != text:
                    item.setText(text)
                if item.color.name() != colour:
                    item.setColor(colour)
                item.setVisible(True)
