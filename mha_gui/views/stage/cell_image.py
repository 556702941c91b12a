"""A heatmap panel's image: its pixels, and the cell under the mouse.

`CellImage` is a pyqtgraph ImageItem that reports hovered, clicked and right-clicked
cells to its panel (a weak reference: the panel owns the image, not the other way), and
draws its pixels by one look-up in a packed colour table (see `render`).
"""

from __future__ import annotations

import math
import weakref

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QToolTip

from mha_gui.views.stage.panel_images import colour_pixels, packed_lut
from mha_gui.views.widgets import safe_items


class CellImage(safe_items.ImageItem):
    """An ImageItem that reports hovered and clicked cells to its panel."""

    def __init__(self, panel):
        super().__init__(axisOrder="row-major")
        self._panel = weakref.ref(panel)
        self._last_cell: tuple[int, int] | None = None
        self.setAcceptHoverEvents(True)

    @property
    def panel(self):
        return self._panel()

    def setLookupTable(self, lut, update=True):
        self._lut32 = packed_lut(lut)
        self._lut_opaque = self._lut32 is not None and bool((self._lut32 >> 24 == 255).all())
        self._ready = None
        super().setLookupTable(lut, update)

    def setImage(self, image=None, autoLevels=None, **kargs):
        self._ready = None  # pixels made for the previous image
        super().setImage(image, autoLevels, **kargs)

    def set_pixels(self, pixels: np.ndarray, levels: tuple[float, float]) -> None:
        """The image's pixels, already coloured on `levels` (on the worker, for a large
        stage): used by the next paint unless the levels have moved since."""
        if self.image is not None and pixels.shape == self.image.shape[:2]:
            self._ready = (pixels, (float(levels[0]), float(levels[1])))

    def render(self):
        """The panel's images (2-D floats without NaN, fixed levels, a uint8 colour map)
        become one 32-bit QImage by a table look-up; pyqtgraph's general path rebuilds
        a 256-entry Python colour table per image and hands Qt an indexed image, which
        it converts on every paint: drawn scaled, 5-6x slower than a 32-bit one (a third
        of a toy edit's drawing)."""
        image, lut32, levels = self.image, getattr(self, "_lut32", None), self.levels
        if (
            lut32 is None
            or image is None
            or image.ndim != 2
            or image.size == 0
            or image.dtype.kind != "f"
            or levels is None
            or np.ndim(levels) != 1
            or self.autoDownsample
            or self.axisOrder != "row-major"
        ):
            return super().render()
        ready, self._ready = getattr(self, "_ready", None), None
        if ready is not None and ready[1] == (float(levels[0]), float(levels[1])):
            rgb = ready[0]
        elif np.isnan(image.min()):
            return super().render()  # pyqtgraph draws NaN cells transparent
        else:
            rgb = colour_pixels(image, levels, lut32)
        opaque = QImage.Format.Format_RGB32  # Qt scales it ~2x faster than ARGB32
        fmt = opaque if self._lut_opaque else QImage.Format.Format_ARGB32
        self.qimage = pg.functions.ndarray_to_qimage(rgb, fmt)
        self._renderRequired = False
        self._unrenderable = False

    def _cell(self, pos) -> tuple[int, int] | None:
        if self.image is None or self.panel is None:
            return None
        rows, cols = self.panel.rows, self.panel.cols
        kr, kc = self.panel.step  # image pixels are blocks of cells in a reduced image
        r, c = math.floor(pos.y() * kr), math.floor(pos.x() * kc)
        if 0 <= r < rows and 0 <= c < cols:
            return r, c
        return None

    def hoverEvent(self, ev):
        if ev.isExit():
            self._last_cell = None
            self.setToolTip("")
            QToolTip.hideText()
            return
        cell = self._cell(ev.pos())
        if cell is None or cell == self._last_cell:
            return
        self._last_cell = cell
        text = self.panel.tooltip_html(*cell)
        # The scene answers Qt's resting-mouse ToolTip event with the item's own tooltip
        # (an empty one would hide the text shown here after about a second).
        self.setToolTip(text)
        if text:
            QToolTip.showText(ev.screenPos().toPoint(), text)

    def mouseClickEvent(self, ev):
        cell = self._cell(ev.pos())
        if ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self.panel.context_menu(ev.screenPos().toPoint(), cell)
        elif ev.button() == Qt.MouseButton.LeftButton and cell is not None:
            ev.accept()
            if ev.modifiers() & Qt.KeyboardModifier.ControlModifier:
                self.panel.ctrl_clicked(*cell)
            else:
                self.panel.clicked(*cell)
