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
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem, QSizePolicy, QToolTip

from mha_gui import theme
from mha_gui.engine.layer.numbers import NumberFormat, number_format
from mha_gui.engine.layer.session import same_array
from mha_gui.views.stage.panel_images import MAX_IMAGE_SIDE as MAX_IMAGE_SIDE
from mha_gui.views.stage.panel_images import block_mean as block_mean
from mha_gui.views.stage.panel_images import prepare_image, reduction
from mha_gui.views.stage.plot_items import TICK_FONT_PT
from mha_gui.views.stage.square_grid import (
    PanelSize,
    axis_label,
    label_font,
    panel_size,
    text_width,
)
from mha_gui.views.stage.square_grid import tick_step as tick_step
from mha_gui.views.widgets.rich_text import tooltip_html

# Print values only in matrices at most this many rows and columns.
VALUE_LIMIT = 12
VALUE_MIN_PX = 10  # numbers in cells only at a legible size; smaller: on hover only


def cell_ticks(labels: list[str], step: int = 1) -> list[tuple[float, str]]:
    """(position, text) of every `step`-th label, centred on its cell."""
    return [(i + 0.5, str(labels[i])) for i in range(0, len(labels), max(1, step))]


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

    What another view may read (an accessible table, a keyboard cell cursor):
    `matrix` (the numbers shown, rows × cols, None before the first `set_matrix`),
    `row_labels` / `col_labels` (the labels of every row and column, as the axes name
    them), `cell_scene_rect(row, col)` and `cell_view_rect(row, col)` (a cell's rectangle
    in scene coordinates and in pixels of the canvas widget), `tooltip(row, col)` (its
    hover text, plain) and `tooltip_html(row, col)`; `clicked(row, col)` acts as a click
    on the cell. `size` is the drawn size (square_grid.PanelSize; None when the panel
    stretches with its layout, as in the query strip), `off` whether the head is
    switched off, `hidden` the exercise's blanks.
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
        self.top_margin = top_margin  # room above the first row, in cells
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
        self.blank_numbers: dict[tuple[int, int], int] = {}  # (row, col) -> 1-based
        self.size: PanelSize | None = None
        self.off = False
        self._row_labels: list[str] = []
        self._col_labels: list[str] = []

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
        self._blank_items: list[pg.TextItem] = []  # the blanks' numbers, as listed

        # a head switched off: greyed and hatched (not colour alone), with "off" on it
        self.off_cover = QGraphicsRectItem(QRectF(0.0, 0.0, float(self.cols), float(self.rows)))
        cover = QColor(palette.panel)
        cover.setAlpha(170)
        self.off_cover.setBrush(QBrush(cover))
        self.off_cover.setPen(QPen(Qt.PenStyle.NoPen))
        self.off_cover.setZValue(2.6)
        self.off_hatch = QGraphicsRectItem(QRectF(0.0, 0.0, float(self.cols), float(self.rows)))
        self.off_hatch.setBrush(QBrush(QColor(palette.muted), Qt.BrushStyle.BDiagPattern))
        self.off_hatch.setPen(QPen(Qt.PenStyle.NoPen))
        self.off_hatch.setZValue(2.7)
        self.off_text = pg.TextItem("off", color=palette.text, anchor=(0.5, 0.5))
        self.off_text.setPos(self.cols / 2, self.rows / 2)
        self.off_text.setZValue(2.8)
        for item in (self.off_cover, self.off_hatch, self.off_text):
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)

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
            # the panel chooses which labels to draw (every one up to 40); the room past
            # the ends lets the first and last row's label show whole
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
    def set_size(self, size: PanelSize) -> None:
        """Draw the panel at a fixed size: square cells of `size.cell` pixels, labels as
        `size` says (square_grid decides); no axes for a thumbnail (label_px 0)."""
        self.size = size
        vb = self.plot.getViewBox()
        vb.setFixedWidth(size.width)
        vb.setFixedHeight(size.height + self.top_margin * size.cell)  # H's head bands
        # the plot keeps its parts' size: a wider grid column never stretches its axes
        # away from the cells
        fixed = QSizePolicy.Policy.Fixed
        self.plot.setSizePolicy(fixed, fixed)
        if size.label_px <= 0:
            for name in ("left", "bottom"):
                self.plot.hideAxis(name)
        else:
            self.plot.getAxis("left").setWidth(size.left_w)
            self.plot.getAxis("bottom").setHeight(size.bottom_h)
        self._ticks_set = None
        self._fit_ticks()

    @property
    def row_labels(self) -> list[str]:
        """Every row's label, as the left axis names it."""
        return list(self._row_labels)

    @property
    def col_labels(self) -> list[str]:
        """Every column's label, as the bottom axis names it."""
        return list(self._col_labels)

    def cell_scene_rect(self, row: int, col: int) -> QRectF:
        """Cell (row, col)'s rectangle in scene coordinates."""
        return self.image.mapRectToScene(QRectF(float(col), float(row), 1.0, 1.0))

    def cell_view_rect(self, row: int, col: int) -> QRectF:
        """Cell (row, col)'s rectangle in pixels of the canvas widget that shows it."""
        rect = self.cell_scene_rect(row, col)
        scene = self.image.scene()
        views = scene.views() if scene is not None else []
        if not views:
            return rect
        return views[0].viewportTransform().mapRect(rect)

    def set_axis_labels(self, rows: list[str], cols: list[str], limit: int = 16) -> None:
        """Token (or index) tick labels: every row and column named up to 40 (a token
        that is only a space mark gets its position, "␣ 5"); beyond, every k-th."""
        self._row_labels = [axis_label(t, i) for i, t in enumerate(rows)]
        self._col_labels = [axis_label(t, i) for i, t in enumerate(cols)]
        self._ticks_set = None
        self._fit_ticks()

    def _fit_ticks(self) -> None:
        if not self._row_labels and not self._col_labels:
            return
        size = self.size
        if size is None:  # a stretching panel (the query strip): fit the room it has
            rect = self.plot.getViewBox().sceneBoundingRect()
            if rect.width() <= 0:
                return
            pitch = rect.width() / max(1, self.cols)
            size = panel_size(
                self.rows,
                self.cols,
                self._row_labels,
                self._col_labels,
                pitch,
                self.zoom,
                False,
            )
            size = PanelSize(
                self.rows,
                self.cols,
                pitch,
                size.label_px,
                max(size.row_step, self._row_step_for(rect.height(), size.label_px)),
                size.col_step,
                size.rotated,
                size.left_w,
                size.bottom_h,
            )
        elif size.label_px <= 0:
            return
        key = (size.label_px, size.row_step, size.col_step, size.rotated, size.bottom_h)
        if getattr(self, "_ticks_set", None) == key:
            return  # a resize that keeps the same labels: nothing to lay out again
        self._ticks_set = key
        font = label_font(size.label_px)
        left, bottom = self.plot.getAxis("left"), self.plot.getAxis("bottom")
        left.set_labels(cell_ticks(self._row_labels, size.row_step), font)
        bottom.set_labels(cell_ticks(self._col_labels, size.col_step), font, size.rotated)
        if self.size is None:  # the axes take the room their labels need
            if bottom.isVisible():
                bottom.setHeight(size.bottom_h)
            if left.isVisible():
                left.setWidth(size.left_w)

    def _row_step_for(self, height: float, px: float) -> int:
        pitch = height / max(1, self.rows)
        return 1 if self.rows <= 40 else max(1, math.ceil(px * 1.3 / max(pitch, 1e-6)))

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
        self._value_font_px = -1  # the numbers' widths may have changed: fit them again
        self._fit_labels()
        self._update_labels()

    def set_hidden(self, cells) -> None:
        """Draw `cells` ((row, col) pairs) as empty boxes: a neutral fill and an outline,
        no colour, no number, and a tooltip that does not give the value away (an
        exercise's blanks). An empty set shows every cell again. A mapping
        {(row, col): index} (Exercise.panel_blanks) numbers each box as the exercise
        panel lists it: index + 1, inside the dashed box."""
        order = dict(cells) if isinstance(cells, dict) else {}
        hidden = frozenset(
            (int(r), int(c)) for r, c in cells if 0 <= r < self.rows and 0 <= c < self.cols
        )
        numbers = {cell: int(order[cell]) + 1 for cell in hidden if cell in order}
        if hidden == self.hidden and numbers == self.blank_numbers:
            return
        self.hidden, self.blank_numbers = hidden, numbers
        path = QPainterPath()
        m = 0.06  # a margin: neighbouring blanks stay separate boxes
        for r, c in sorted(hidden):
            path.addRect(QRectF(c + m, r + m, 1 - 2 * m, 1 - 2 * m))
        self.hidden_boxes.setPath(path)
        self._draw_blank_numbers()
        self._update_labels()

    def _draw_blank_numbers(self) -> None:
        """The blanks' numbers in their boxes (TextItems made once per blank shown)."""
        numbers = sorted(self.blank_numbers.items())
        while len(self._blank_items) < len(numbers):
            item = pg.TextItem("", color=self.palette.text, anchor=(0.5, 0.5))
            item.setZValue(2.9)
            self.plot.addItem(item, ignoreBounds=True)
            self._blank_items.append(item)
        cell = self.size.cell if self.size is not None else 20.0
        font = QFont()
        font.setPixelSize(max(8, min(18, round(cell * 0.5))))
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

    def set_off(self, off: bool) -> None:
        """Mark the panel's head switched off: greyed, hatched and labelled "off" (its
        numbers stay readable underneath, and in tooltips)."""
        off = bool(off)
        if off == self.off:
            return
        self.off = off
        font = QFont()
        cell = self.size.cell if self.size is not None else 20.0
        font.setPixelSize(max(10, min(28, round(cell * min(self.rows, self.cols) * 0.3))))
        font.setBold(True)
        self.off_text.setFont(font)
        for item in (self.off_cover, self.off_hatch, self.off_text):
            item.setVisible(off)

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
        visible = self._show_values and self._value_font_px >= VALUE_MIN_PX
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
        size = int(min(ch * 0.42, 18))
        if size >= VALUE_MIN_PX and self.matrix is not None:
            # the widest number must fit its cell; else a smaller font, or none
            finite = self.matrix[np.isfinite(self.matrix)]
            sample = (
                [self.fmt.cell(float(v)) for v in (finite.min(), finite.max())]
                if (finite.size)
                else []
            )
            widest = text_width(sample, size)
            if widest > cw * 0.9:
                size = int(size * cw * 0.9 / widest)
        if size != self._value_font_px:
            self._value_font_px = size
            if size >= VALUE_MIN_PX:
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
