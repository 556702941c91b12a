"""A small n×n weights grid for the train panel: the target (paintable by hand: a click
switches a cell between 0 and 1; blocked cells are grey and refused) or the head's
weights now (read only). Painted by export/training_gif.paint_grid, like the GIF."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSizePolicy, QWidget

from mha_gui import theme
from mha_gui.export.training_gif import paint_grid
from mha_gui.views.widgets.drawing_widget import guarded_paint


class TargetGrid(QWidget):
    """Shows an n×n matrix on the weights scale; `editable` grids toggle cells on click.

    `toggled(row, col)` follows an accepted click, `refused(message)` a click on a
    blocked cell (nothing changes)."""

    toggled = Signal(int, int)
    refused = Signal(str)

    def __init__(self, editable: bool = False, parent=None, objectName: str = ""):
        super().__init__(parent)
        self.setObjectName(objectName)
        self.editable = editable
        self.matrix = np.zeros((1, 1))
        self.blocked: np.ndarray | None = None
        self.labels: list[str] = []
        self.theme_name = "light"
        self.colormap = theme.DEFAULT_COLORMAP
        self._grid = QRectF()
        self.setMinimumSize(150, 150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(200, 200)

    def set_matrix(self, matrix: np.ndarray, blocked=None, labels=None) -> None:
        self.matrix = np.array(matrix, dtype=float)
        self.blocked = None if blocked is None else np.asarray(blocked, bool)
        if labels is not None:
            self.labels = [str(t) for t in labels]
        self.update()

    def set_theme(self, name: str) -> None:
        self.theme_name = name
        self.update()

    def set_colormap(self, name: str) -> None:
        self.colormap = name
        self.update()

    def shown(self) -> np.ndarray:
        """What the colours show: each row divided by its sum (rows of 0 stay 0)."""
        sums = self.matrix.sum(axis=1, keepdims=True)
        return np.divide(self.matrix, sums, out=np.zeros_like(self.matrix), where=sums > 0)

    def paintEvent(self, event):
        pal = theme.palette(self.theme_name)
        with guarded_paint(self, QColor(pal.background)) as p:
            p.fillRect(self.rect(), QColor(pal.background))
            self._grid = paint_grid(
                p,
                QRectF(self.rect()).adjusted(2, 2, -2, -2),
                self.shown(),
                palette=pal,
                lut=theme.colormap_for("weights", self.colormap),
                blocked=self.blocked,
                labels=self.labels or None,
            )

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        n = self.matrix.shape[0]
        g = self._grid
        if g.width() <= 0 or not g.contains(x, y):
            return None
        r = min(n - 1, int((y - g.top()) / g.height() * n))
        c = min(n - 1, int((x - g.left()) / g.width() * n))
        return r, c

    def mousePressEvent(self, event):
        if not self.editable:
            return
        cell = self.cell_at(event.position().x(), event.position().y())
        if cell is None:
            return
        r, c = cell
        if self.blocked is not None and self.blocked[r, c]:
            self.refused.emit(
                f"query {r} cannot see key {c} (blocked by the mask): a target must be 0 there"
            )
            return
        self.toggled.emit(r, c)
