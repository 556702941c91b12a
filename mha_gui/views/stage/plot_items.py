"""Light pyqtgraph items the heatmap views are made of: a plot without pyqtgraph's
per-plot control menu, a title that never shrinks, a fixed-level colour bar."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from mha_gui.engine.layer.numbers import SMALLEST_PEAK, NumberFormat
from mha_gui.views.widgets import safe_items

QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's largest widget size (not exported by PySide6)

TICK_FONT_PT = 10


class TokenAxis(safe_items.AxisItem):
    """A heatmap's row or column labels: one label per row (column) it is given, each
    centred on its cell, never dropped for crowding (the panel chooses which to give:
    every one up to 40, see square_grid). Column labels wider than their columns are
    drawn rotated, reading bottom to top. `generateDrawSpecs` returns what is drawn —
    (rect, flags, text) per label, a rotated label's rect being its upright box — so a
    test reads the very labels on screen."""

    def __init__(self, orientation: str):
        super().__init__(orientation)
        # token labels are never scaled by an SI prefix; with the prefix on, every range
        # change set the axis title's HTML again and re-laid it out (~7 per axis per build)
        self.enableAutoSIPrefix(False)
        self.rotated = False
        self._labels: list[tuple[float, str]] | None = None
        self.cells: int | None = None  # set: the axis line runs under cells 0…cells only

    def set_labels(self, ticks: list[tuple[float, str]], font: QFont, rotated: bool = False):
        """Draw `ticks` ((position in cells, text)) in `font`; `rotated` column labels."""
        self._labels = list(ticks)
        self.rotated = rotated and self.orientation == "bottom"
        self.setStyle(tickFont=font)
        self.setTicks([self._labels, []])  # what pyqtgraph's own readers see
        self.picture = None
        self.update()

    def generateDrawSpecs(self, p):
        if self._labels is None or self.linkedView() is None:
            return super().generateDrawSpecs(p)
        bounds = self.mapRectFromParent(self.geometry())
        vb = self.linkedView()
        font = self.style["tickFont"] or QFont()
        fm = QFontMetricsF(font)
        line = fm.height()
        left = self.orientation == "left"
        if left:
            axis = (self.pen(), bounds.topRight(), bounds.bottomRight())
        else:
            axis = (self.pen(), bounds.topLeft(), bounds.topRight())
        if self.cells is not None:  # a box wider (taller) than its square cells
            ends = [vb.mapViewToScene(QPointF(v, v)) for v in (0.0, float(self.cells))]
            a, b = (self.mapFromScene(e) for e in ends)
            if left:
                top, low = sorted((a.y(), b.y()))
                axis = (self.pen(), QPointF(bounds.right(), top), QPointF(bounds.right(), low))
            else:
                lo, hi = sorted((a.x(), b.x()))
                axis = (self.pen(), QPointF(lo, bounds.top()), QPointF(hi, bounds.top()))
        specs = []
        dont_clip = Qt.TextFlag.TextDontClip
        for value, text in self._labels:
            width = fm.horizontalAdvance(text) + 2
            if left:
                y = self.mapFromScene(vb.mapViewToScene(QPointF(0.0, value))).y()
                rect = QRectF(bounds.right() - 4 - width, y - line / 2, width, line)
                flags = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            else:
                x = self.mapFromScene(vb.mapViewToScene(QPointF(value, 0.0))).x()
                if self.rotated:
                    rect = QRectF(x - line / 2, bounds.top() + 3, line, width)
                else:
                    rect = QRectF(x - width / 2, bounds.top() + 3, width, line)
                flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
            specs.append((rect, flags | dont_clip, text))
        return axis, [], specs

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        if not self.rotated:
            return super().drawPicture(p, axisSpec, tickSpecs, textSpecs)
        super().drawPicture(p, axisSpec, tickSpecs, [])
        p.setFont(self.style["tickFont"] or QFont())
        p.setPen(self.textPen())
        for rect, _flags, text in textSpecs:
            p.save()
            p.translate(rect.center().x(), rect.top())
            p.rotate(-90)
            box = QRectF(-rect.height(), -rect.width() / 2, rect.height(), rect.width())
            p.drawText(box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), text)
            p.restore()
        return None


class MatrixPlot(pg.GraphicsLayout):
    """A light PlotItem: optional title, left and bottom axes around a ViewBox.

    pyqtgraph's PlotItem builds a control menu of ~50 widgets per plot whose group
    boxes are parentless (top-level) until the plot is garbage-collected; a heatmap
    needs none of it, and this is much cheaper to create.
    """

    def __init__(self):
        super().__init__()
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(0)
        self.vb = safe_items.ViewBox(enableMenu=False, enableMouse=False, defaultPadding=0.0)
        # over the row labels and the cells, its right edge at the cells' (a title wider
        # than a narrow panel's cells reaches over its row labels, not past them)
        self.titleLabel = pg.LabelItem("", justify="right")
        self.axes = {"left": TokenAxis("left"), "bottom": TokenAxis("bottom")}
        self.addItem(self.titleLabel, row=0, col=0, colspan=2)
        self.addItem(self.axes["left"], row=1, col=0)
        self.addItem(self.vb, row=1, col=1)
        self.addItem(self.axes["bottom"], row=2, col=1)
        for axis in self.axes.values():
            axis.linkToView(self.vb)
        self.setTitle(None)

    def getViewBox(self):
        return self.vb

    def getAxis(self, name: str):
        return self.axes[name]

    def hideAxis(self, name: str) -> None:
        """Hidden and no room kept: a thumbnail's hidden bottom axis kept its ~29 px
        under every thumbnail, so the thumbnails overran the height planned for them."""
        axis = self.axes[name]
        axis.hide()
        # no size either way: a hidden left axis kept its ~50 px minimum height beside a
        # 14 px thumbnail (a wide layer's thumbnails stood 80 px apart)
        axis.setFixedHeight(0)
        axis.setFixedWidth(0)

    def addItem(self, item, *args, ignoreBounds=False, **kwargs):
        """Layout cells with row/col (as GraphicsLayout); anything else goes in the view."""
        if args or "row" in kwargs or "col" in kwargs:
            return super().addItem(item, *args, **kwargs)
        return self.vb.addItem(item, ignoreBounds=ignoreBounds)

    def setTitle(self, text=None, **kwargs):
        if not text:
            # no room kept: the hidden label's own minimum (~29 px) outweighed its row's
            # fixed height, so every untitled panel stood 29 px taller than planned
            self.titleLabel.setVisible(False)
            self.titleLabel.setFixedHeight(0)
            self.layout.setRowFixedHeight(0, 0)
            return
        self.titleLabel.setMinimumHeight(0)
        self.titleLabel.setMaximumHeight(QWIDGETSIZE_MAX)
        self.titleLabel.setVisible(True)
        self.titleLabel.setText(text, **kwargs)
        self.layout.setRowMinimumHeight(0, 20)
        self.layout.setRowMaximumHeight(0, 30)

    def setLabel(self, axis: str, text: str, **kwargs):
        self.axes[axis].setLabel(text, **kwargs)


class TitleLabel(pg.LabelItem):
    """A LabelItem that asks its layout for the largest size any of its texts needed
    since `fit()`: a head's title switching to bold and back (the inspected head) then
    repaints that title, instead of relaying out and repainting every panel twice."""

    _largest = (0.0, 0.0)

    def fit(self) -> None:
        """Forget the sizes asked for so far (the grid was resized): fit the text shown."""
        self._largest = (0.0, 0.0)
        self.updateMin()

    def updateMin(self):
        bounds = self.itemRect()
        w = max(self._largest[0], bounds.width())
        h = max(self._largest[1], bounds.height())
        if (w, h) == self._largest and getattr(self, "_sizeHint", None) is not None:
            return
        self._largest = (w, h)
        self.setMinimumWidth(w)
        self.setMinimumHeight(h)
        self._sizeHint = {
            Qt.SizeHint.MinimumSize: (w, h),
            Qt.SizeHint.PreferredSize: (w, h),
            Qt.SizeHint.MaximumSize: (-1, -1),
            Qt.SizeHint.MinimumDescent: (0, 0),
        }
        self.updateGeometry()


def set_label(label: pg.LabelItem, text: str, **opts) -> None:
    """`label.setText(text, **opts)` only when the text or its style changed: every new
    text relays the label's layout out, resizing and repainting the panels beside it
    (a query strip refreshed for a head or a query switch set five unchanged titles)."""
    shown = (text, tuple(sorted(opts.items())))
    if getattr(label, "_mha_shown", None) == shown:
        return
    label._mha_shown = shown
    label.setText(text, **opts)


def add_plot(layout: pg.GraphicsLayout, row: int, col: int) -> MatrixPlot:
    plot = MatrixPlot()
    layout.addItem(plot, row=row, col=col)
    return plot


class ColorBar(pg.GraphicsLayout):
    """A vertical colour scale with a labelled axis (fixed levels; not interactive)."""

    def __init__(
        self,
        lut: np.ndarray,
        levels: tuple[float, float],
        label: str,
        palette,
        zoom: float = 1.0,
        fmt: NumberFormat | None = None,
    ):
        super().__init__()
        self.setContentsMargins(0, 4, 0, 4)
        self.setSpacing(0)
        self.vb = safe_items.ViewBox(enableMenu=False, enableMouse=False, defaultPadding=0.0)
        self.vb.setFixedWidth(round(14 * zoom))
        self.image = safe_items.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(lut)
        self.vb.addItem(self.image)
        self.axis = safe_items.AxisItem("right")
        self.axis.enableAutoSIPrefix(False)  # "200 (x0.001)" misleads; print 0.2
        self.axis.linkToView(self.vb)
        self._label, self._label_style = (
            label,
            {
                "color": palette.muted,
                "font-size": f"{10 * zoom:.3g}pt",
            },
        )
        self.axis.setPen(pg.mkPen(palette.muted))
        self.axis.setTextPen(pg.mkPen(palette.text))
        font = QFont()
        font.setPointSizeF((TICK_FONT_PT - 1) * zoom)
        self.axis.setStyle(tickFont=font)
        self.addItem(self.vb, row=0, col=0)
        self.addItem(self.axis, row=0, col=1)
        self.levels = None
        self.factor = None
        self.setLevels(levels, fmt)

    def setLevels(self, levels: tuple[float, float], fmt: NumberFormat | None = None) -> None:
        """Show `levels`; with a format that pulls out 10^k, the axis reads the same
        scaled numbers as the cells and its label carries the ×10^k."""
        self.levels = (float(levels[0]), float(levels[1]))
        exponent = fmt.exponent if fmt is not None else 0
        factor = f" ×10<sup>{exponent}</sup>" if exponent else ""
        if factor != self.factor:
            self.factor = factor
            self.axis.setLabel(self._label + factor, **self._label_style)
        unit = 10.0**exponent
        lo, hi = self.levels[0] / unit, self.levels[1] / unit
        if not hi - lo >= SMALLEST_PEAK:  # empty, NaN or subnormal: the axis would divide by it
            hi = lo + 1.0
        ramp = np.linspace(lo, hi, 256)[:, None]
        self.image.setImage(ramp, levels=(lo, hi), autoLevels=False)
        self.image.setRect(QRectF(0.0, lo, 1.0, hi - lo))
        self.vb.setRange(xRange=(0, 1), yRange=(lo, hi), padding=0)
