"""One labelled matrix heatmap inside a pyqtgraph layout: the building block of the views.

A `HeatmapPanel` owns a PlotItem's contents: a row-major ImageItem with explicit levels
(never auto-levels: constant matrices and -inf break them), token tick labels, a
grey hatched "blocked" overlay for masked cells (a × too on small matrices), an outline
for the selected query row, optional cell value labels, and hidden cells (an exercise's
blanks: empty boxes, no colour, no number, no tooltip value). Cell labels are created once
per shape and only `setText` afterwards (a TextItem costs ~0.4 ms to create).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem, QToolTip

from mha_gui import theme
from mha_gui.engine.numbers import NumberFormat, number_format
from mha_gui.engine.session import same_array
from mha_gui.views.stage.panel_images import MAX_IMAGE_SIDE as MAX_IMAGE_SIDE
from mha_gui.views.stage.panel_images import block_mean as block_mean
from mha_gui.views.stage.panel_images import prepare_image, reduction
from mha_gui.views.stage.plot_items import TICK_FONT_PT
from mha_gui.views.widgets.rich_text import tooltip_html

# Print values only in matrices at most this many rows and columns.
VALUE_LIMIT = 12


def tick_step(count: int, limit: int = 16) -> int:
    """Label every k-th row/column so that at most about `limit` labels are drawn; k is
    a round number (1, 2, 4, 5, 10, 20, 25, 50, 100, …) so the labels read as an even scale
    (t0 t25 t50 …, not t0 t22 t44)."""
    need = max(1, math.ceil(count / max(1, limit)))
    scale = 1
    while True:
        for base in (1, 2, 4, 5, 10, 20, 25, 50):
            if base * scale >= need:
                return base * scale
        scale *= 100


def cell_ticks(labels: list[str], limit: int = 16) -> list[list[tuple[float, str]]]:
    step = tick_step(len(labels), limit)
    major = [(i + 0.5, str(labels[i])) for i in range(0, len(labels), step)]
    return [major, []]


class CellImage(pg.ImageItem):
    """An ImageItem that reports hovered and clicked cells to its panel."""

    def __init__(self, panel: HeatmapPanel):
        super().__init__(axisOrder="row-major")
        self._panel = weakref.ref(panel)
        self._last_cell: tuple[int, int] | None = None
        self.setAcceptHoverEvents(True)

    @property
    def panel(self):
        return self._panel()

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


class HeatmapPanel:
    """The contents of one PlotItem showing one matrix.

    `kind` is the explain kind (X, Q, K, V, S, A, Z, H, Y, C); `head` the query head or
    None. `on_tooltip(kind, head, row, col)`, `on_click(head, row)`,
    `on_ctrl_click(kind, head, row, col)` and `on_menu(head, global_pos)` are called back
    by the image; `menu_cell` is the (row, col) last right-clicked (None: off the cells).
    """

    def __init__(
        self,
        plot: pg.PlotItem,
        kind: str,
        head: int | None,
        shape: tuple[int, int],
        *,
        palette: theme.Palette,
        lut: np.ndarray,
        show_values: bool = True,
        on_tooltip: Callable | None = None,
        on_click: Callable | None = None,
        on_menu: Callable | None = None,
        on_ctrl_click: Callable | None = None,
        query_rows: bool = True,
        top_margin: float = 0.0,
        value_limit: int = VALUE_LIMIT,
        zoom: float = 1.0,
    ):
        self.plot, self.kind, self.head = plot, kind, head
        self.rows, self.cols = shape
        self.palette, self.lut = palette, lut
        self.on_tooltip, self.on_click, self.on_menu = on_tooltip, on_click, on_menu
        self.on_ctrl_click = on_ctrl_click
        self.menu_cell: tuple[int, int] | None = None
        self.query_rows = query_rows
        self.zoom = zoom  # projector zoom: tick labels grow with it
        self.matrix: np.ndarray | None = None
        self.levels = (-1.0, 1.0)
        self.fmt = number_format("values", self.levels)
        self.step = reduction(*shape)
        self._display = np.zeros((-(-shape[0] // self.step[0]), -(-shape[1] // self.step[1])))
        self._blocked: np.ndarray | None = None
        self._show_values = show_values
        self._value_font_px = 0
        self._frame: tuple | None = None
        self.hidden: frozenset[tuple[int, int]] = frozenset()

        vb = plot.getViewBox()
        vb.invertY(True)
        vb.disableAutoRange()
        vb.setRange(
            xRange=(0, self.cols), yRange=(-top_margin, self.rows), padding=0, disableAutoRange=True
        )
        self.image = CellImage(self)
        self.image.setLookupTable(lut)
        plot.addItem(self.image)

        self.blocked_fill = QGraphicsPathItem()
        self.blocked_fill.setPen(QPen(Qt.PenStyle.NoPen))
        self.blocked_fill.setBrush(QBrush(QColor(palette.blocked)))
        self.blocked_fill.setZValue(1)
        self.blocked_hatch = QGraphicsPathItem()
        pen = QPen(QColor(palette.hatch))
        pen.setCosmetic(True)
        pen.setWidthF(1.6)
        self.blocked_hatch.setPen(pen)
        self.blocked_hatch.setZValue(1.5)
        self.blocked_lines = QGraphicsPathItem()  # diagonal lines: readable at any size
        self.blocked_lines.setPen(QPen(Qt.PenStyle.NoPen))
        self.blocked_lines.setBrush(QBrush(QColor(palette.hatch), Qt.BrushStyle.BDiagPattern))
        self.blocked_lines.setZValue(1.2)
        plot.addItem(self.blocked_lines, ignoreBounds=True)
        plot.addItem(self.blocked_fill, ignoreBounds=True)
        plot.addItem(self.blocked_hatch, ignoreBounds=True)

        # hidden cells (exercise blanks): an opaque neutral box with an outline, above the
        # colours and the hatching, below the query outline
        self.hidden_boxes = QGraphicsPathItem()
        hpen = QPen(QColor(palette.muted))
        hpen.setCosmetic(True)
        hpen.setWidthF(1.5)
        hpen.setStyle(Qt.PenStyle.DashLine)
        self.hidden_boxes.setPen(hpen)
        self.hidden_boxes.setBrush(QBrush(QColor(palette.panel)))
        self.hidden_boxes.setZValue(2.5)
        plot.addItem(self.hidden_boxes, ignoreBounds=True)

        self.query_rect = QGraphicsRectItem()
        qpen = QPen(QColor(palette.highlight))
        qpen.setCosmetic(True)
        qpen.setWidthF(3.0)
        self.query_rect.setPen(qpen)
        self.query_rect.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.query_rect.setZValue(3)
        self.query_rect.setVisible(False)
        plot.addItem(self.query_rect, ignoreBounds=True)

        font = QFont()
        font.setPointSizeF(TICK_FONT_PT * zoom)
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            # labels are thinned so they never overlap; pyqtgraph's own check would drop
            # the first column's label whenever it is wider than half a cell
            axis.setStyle(tickFont=font, tickLength=0, tickTextOffset=3, hideOverlappingLabels=30)
            axis.setPen(pg.mkPen(palette.muted))
            axis.setTextPen(pg.mkPen(palette.text))
        # room for a whole line of tick text (descenders too) at any zoom
        plot.getAxis("bottom").setStyle(
            autoExpandTextSpace=False, tickTextHeight=QFontMetrics(font).height() + 2
        )

        self.labels: list[list[pg.TextItem]] = []
        if self.rows <= value_limit and self.cols <= value_limit:
            for r in range(self.rows):
                row = []
                for c in range(self.cols):
                    item = pg.TextItem("", color=palette.text, anchor=(0.5, 0.5))
                    item.setPos(c + 0.5, r + 0.5)
                    item.setZValue(2)
                    plot.addItem(item, ignoreBounds=True)
                    row.append(item)
                self.labels.append(row)
        self._tick_labels: tuple[list[str], list[str], int] | None = None
        vb.sigResized.connect(self._fit_labels)

    # ------------------------------------------------------------------ content ---
    def set_axis_labels(self, rows: list[str], cols: list[str], limit: int = 16) -> None:
        """Token (or index) tick labels, thinned so that they never overlap."""
        self._tick_labels = (list(rows), list(cols), limit)
        self._widest = max((len(str(c)) for c in cols), default=1)  # once, not per resize
        self._ticks_set: tuple | None = None
        self._fit_ticks()

    def _fit_ticks(self) -> None:
        if self._tick_labels is None:
            return
        rows, cols, limit = self._tick_labels
        rect = self.plot.getViewBox().sceneBoundingRect()
        row_limit = col_limit = limit
        if rect.width() > 0:
            z = self.zoom
            col_limit = min(limit, max(1, int(rect.width() / ((7.5 * self._widest + 10) * z))))
            row_limit = min(limit, max(1, int(rect.height() / (17 * z))))
        if self._ticks_set == (row_limit, col_limit):
            return  # a resize that keeps the same labels: nothing to lay out again
        self._ticks_set = (row_limit, col_limit)
        self.plot.getAxis("left").setTicks(cell_ticks(rows, row_limit))
        self.plot.getAxis("bottom").setTicks(cell_ticks(cols, col_limit))

    def set_matrix(
        self,
        matrix: np.ndarray,
        levels: tuple[float, float],
        blocked: np.ndarray | None = None,
        fmt: NumberFormat | None = None,
        colours: np.ndarray | None = None,
        reduced: np.ndarray | None = None,
    ) -> None:
        """Show `matrix` (rows × cols) on `levels`; `blocked` cells are drawn grey with a ×
        overlay; cell numbers print in `fmt` (default: the format of these levels).
        `colours`, when given, is what the colours show instead (the weights divided by a
        head's or a row's maximum); the numbers printed are still `matrix`'s. `reduced` is
        the image already prepared (by `prepare_image`, off the UI thread)."""
        self.matrix = matrix
        self.levels = levels
        self.fmt = fmt if fmt is not None else number_format("values", levels)
        if reduced is None:
            shown = matrix if colours is None else colours
            reduced = prepare_image(shown, self.step, (levels[0] + levels[1]) / 2)
        np.copyto(self._display, reduced)
        self.image.setImage(self._display, levels=levels, autoLevels=False)
        if self.step != (1, 1):
            self.image.setRect(QRectF(0.0, 0.0, float(self.cols), float(self.rows)))
        if blocked is not None and not blocked.any():
            blocked = None
        if not same_array(blocked, self._blocked):
            self._blocked = None if blocked is None else blocked.copy()
            self._draw_blocked()
        self._update_labels()

    def set_hidden(self, cells) -> None:
        """Draw `cells` ((row, col) pairs) as empty boxes: a neutral fill and an outline,
        no colour, no number, and a tooltip that does not give the value away (an
        exercise's blanks). An empty set shows every cell again."""
        hidden = frozenset(
            (int(r), int(c)) for r, c in cells if 0 <= r < self.rows and 0 <= c < self.cols
        )
        if hidden == self.hidden:
            return
        self.hidden = hidden
        path = QPainterPath()
        m = 0.06  # a margin: neighbouring blanks stay separate boxes
        for r, c in sorted(hidden):
            path.addRect(QRectF(c + m, r + m, 1 - 2 * m, 1 - 2 * m))
        self.hidden_boxes.setPath(path)
        self._update_labels()

    def relevel(self, levels: tuple[float, float], fmt: NumberFormat | None = None) -> None:
        """New colour levels for the same numbers (the image is re-mapped, not rebuilt)."""
        self.levels = levels
        self.fmt = fmt if fmt is not None else number_format("values", levels)
        self.image.setLevels(levels)
        self._update_labels()

    def _draw_blocked(self) -> None:
        fill, cross = QPainterPath(), QPainterPath()
        if self._blocked is not None:
            for r in range(self.rows):
                cols = np.flatnonzero(self._blocked[r])
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

    def _update_labels(self) -> None:
        if not self.labels or self.matrix is None:
            return
        visible = self._show_values and self._value_font_px >= 7
        colours = theme.colors_for(self._display, self.levels, self.lut)
        for r, row in enumerate(self.labels):
            for c, item in enumerate(row):
                if not visible:
                    item.setVisible(False)
                    continue
                value = float(self.matrix[r, c])
                blocked = self._blocked is not None and self._blocked[r, c]
                if blocked or (r, c) in self.hidden:
                    text, colour = "", self.palette.text
                else:
                    text = self.fmt.cell(value)
                    colour = theme.text_color_on(colours[r, c])
                if item.textItem.toPlainText() != text:
                    item.setText(text)
                if item.color.name() != colour:
                    item.setColor(colour)
                item.setVisible(True)

    def _fit_labels(self, *_args) -> None:
        self._fit_ticks()
        rect = self.plot.getViewBox().sceneBoundingRect()
        if rect.width() <= 0 or not self.labels:
            return
        cw, ch = rect.width() / self.cols, rect.height() / self.rows
        size = int(min(cw / 4.0, ch * 0.42, 18))
        if size != self._value_font_px:
            self._value_font_px = size
            if size >= 7:
                font = QFont()
                font.setPixelSize(size)
                for row in self.labels:
                    for item in row:
                        item.setFont(font)
            self._update_labels()

    def set_show_values(self, show: bool) -> None:
        self._show_values = bool(show)
        self._update_labels()

    # ------------------------------------------------------------- highlights -----
    def set_query(self, row: int | None) -> None:
        if row is None or not self.query_rows or not 0 <= row < self.rows:
            self.query_rect.setVisible(False)
            return
        rect = QRectF(0.0, float(row), float(self.cols), 1.0)
        if self.query_rect.rect() != rect:
            self.query_rect.setRect(rect)
        self.query_rect.setVisible(True)

    def set_frame(self, colour: str | None, width: float = 4.0) -> None:
        if (colour, width) == self._frame:
            return  # a new border repaints the whole panel
        self._frame = (colour, width)
        vb = self.plot.getViewBox()
        if colour is None:
            vb.setBorder(None)
        else:
            vb.setBorder(pg.mkPen(colour, width=width))

    # -------------------------------------------------------------- callbacks -----
    def tooltip(self, row: int, col: int) -> str:
        if (row, col) in self.hidden:
            return "hidden: this cell is an exercise blank"
        return self.on_tooltip(self.kind, self.head, row, col) if self.on_tooltip else ""

    def tooltip_html(self, row: int, col: int) -> str:
        """The tooltip as shown: escaped rich text, so token labels like <s> stay literal."""
        return tooltip_html(self.tooltip(row, col))

    def clicked(self, row: int, col: int) -> None:
        if self.on_click:
            self.on_click(self.head, row)

    def ctrl_clicked(self, row: int, col: int) -> None:
        """Ctrl+click: the view blocks or opens the pair (scores and weights panels)."""
        if self.on_ctrl_click:
            self.on_ctrl_click(self.kind, self.head, row, col)
        else:
            self.clicked(row, col)

    def context_menu(self, pos: QPoint, cell: tuple[int, int] | None = None) -> None:
        self.menu_cell = cell
        if self.on_menu:
            self.on_menu(self.head, pos)
