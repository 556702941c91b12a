"""The train panel's loss curve: a light pyqtgraph plot of the run's loss per step, with
the lowest loss the target allows as a dashed line.

Before the first step there is nothing to plot, and an empty plot would show an axis of
its own invention (−400 … 400 over 0.2 … 0.8): instead the panel says what will appear
there. Once a run has losses, both axes are set from them (steps 0 … N, the loss from
the floor to the highest value), never auto-ranged over an empty curve.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget

from mha_gui import theme
from mha_gui.views.stage.plot_items import add_plot
from mha_gui.views.widgets import safe_items
from mha_gui.views.widgets.canvas import new_canvas

EMPTY_TEXT = (
    "The loss appears here, step by step, once you press Step or Play: how far the head's "
    "weights are from the target (lower is closer; the dashed line is the lowest the "
    "target allows)."
)


class LossPlot(QStackedWidget):
    """Page 0: what will appear (no run yet); page 1: the curve."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("train.lossPlot")
        self.setMinimumHeight(140)
        self.empty = QLabel(EMPTY_TEXT, objectName="train.lossEmpty", wordWrap=True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setMargin(12)
        # a plot in a GraphicsLayoutWidget (pyqtgraph's PlotWidget builds parentless menus)
        self.graphics = new_canvas()  # only Qt deletes its items
        self.plot = add_plot(self.graphics.ci, 0, 0)
        self.curve = safe_items.PlotCurveItem([], [], pen=pg.mkPen(theme.head_color(0), width=2))
        self.plot.addItem(self.curve)
        self.floor_line = safe_items.InfiniteLine(
            angle=0, pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine)
        )
        self.plot.addItem(self.floor_line)
        style = {"font-size": "9pt"}
        self.plot.setLabel("bottom", "step", **style)
        self.plot.setLabel("left", "loss", **style)
        self.plot.getViewBox().disableAutoRange()
        self.addWidget(self.empty)
        self.addWidget(self.graphics)

    def has_curve(self) -> bool:
        return self.currentWidget() is self.graphics

    def show_losses(self, losses, floor: float) -> None:
        """The run's losses so far (one per step, from step 0) and its floor."""
        ys = np.asarray(losses, dtype=float)
        self.curve.setData(np.arange(len(ys)), ys)
        self.floor_line.setValue(floor)
        finite = ys[np.isfinite(ys)]
        low = min(floor, float(finite.min())) if finite.size else floor
        high = float(finite.max()) if finite.size else floor + 1.0
        if high - low < 1e-12:
            high = low + max(abs(low), 1.0) * 0.1
        self.plot.getViewBox().setRange(
            xRange=(0, max(len(ys) - 1, 1)), yRange=(low, high), padding=0.05
        )
        self.setCurrentWidget(self.graphics)

    def set_theme(self, name: str) -> None:
        pal = theme.palette(name)
        self.graphics.setBackground(pal.background)
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setPen(pg.mkPen(pal.muted))
            self.plot.getAxis(axis).setTextPen(pg.mkPen(pal.text))
        self.empty.setStyleSheet(f"color: {pal.muted}; background: {pal.background};")
