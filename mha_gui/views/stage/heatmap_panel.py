"""One labelled matrix heatmap inside a pyqtgraph layout: the building block of the views.

A `HeatmapPanel` owns a PlotItem's contents: a row-major ImageItem with explicit levels
(never auto-levels: constant matrices and -inf break them), token tick labels, a
grey hatched "blocked" overlay for masked cells (a × too on small matrices), an outline
for the selected query row, optional cell value labels, and hidden cells (an exercise's
blanks: empty boxes, no colour, no number, no tooltip value). Its parts: the image
(cell_image.CellImage), the marks over it (panel_marks.PanelMarks) and the numbers in
its cells (value_labels.ValueLabels).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRectF
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QSizePolicy

from mha_gui import theme
from mha_gui.engine.layer.numbers import NumberFormat, number_format
from mha_gui.engine.layer.session import same_array
from mha_gui.views.stage.cell_image import CellImage as CellImage
from mha_gui.views.stage.panel_images import MAX_IMAGE_SIDE as MAX_IMAGE_SIDE
from mha_gui.views.stage.panel_images import block_mean as block_mean
from mha_gui.views.stage.panel_images import prepare_image, reduction
from mha_gui.views.stage.panel_marks import PanelMarks
from mha_gui.views.stage.plot_items import TICK_FONT_PT
from mha_gui.views.stage.square_grid import (
    VALUE_SIDE,
    PanelSize,
    axis_labels,
    label_font,
    panel_size,
)
from mha_gui.views.stage.square_grid import tick_step as tick_step
from mha_gui.views.stage.value_labels import ValueLabels
from mha_gui.views.widgets.rich_text import tooltip_html

# Print values only in matrices at most this many rows and columns.
VALUE_LIMIT = VALUE_SIDE


def cell_ticks(labels: list[str], step: int = 1) -> list[tuple[float, str]]:
    """(position, text) of every `step`-th label, centred on its cell."""
    return [(i + 0.5, str(labels[i])) for i in range(0, len(labels), max(1, step))]


# A stretching panel's labels are laid out again at most MAX_REFITS times in one burst of
# resizes (refits less than REFIT_BURST_S apart): see HeatmapPanel._refit_cycles.
MAX_REFITS = 12
MIN_SQUARE_PX = 6.0  # a stretching panel's square cells, at least
REFIT_BURST_S = 0.5


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
        self._frame: tuple | None = None
        self.size: PanelSize | None = None
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

        self.marks = PanelMarks(plot, self.rows, self.cols, palette)

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

        self.values = ValueLabels(plot, self.rows, self.cols, palette, value_limit, show_values)
        self._tick_labels: tuple[list[str], list[str], int] | None = None
        self._square: str | None = None  # a stretching panel's square cells: their anchor
        self._least_square = MIN_SQUARE_PX
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
        row_labels = list(axis_labels(tuple(rows)))
        col_labels = list(axis_labels(tuple(cols)))
        if (row_labels, col_labels) == (self._row_labels, self._col_labels):
            return  # a refresh with the same tokens: the axes stay as laid out
        self._row_labels, self._col_labels = row_labels, col_labels
        self._ticks_set = None
        self._fit_ticks()

    # ------------------------------------------------------- stretching panels ---
    def keep_square(self, anchor: str, least: float = MIN_SQUARE_PX) -> None:
        """A panel that stretches with its grid cell (the query strip's) draws square
        cells of the largest side its box allows, set at the box's bottom (by its
        labels) and at its left ("left", beside its row labels) or centre ("centre").
        Cells that would be smaller than `least` px stay stretched: a 1 × 128 vector as
        a bar, not a line of 1.5 px squares; 40 keys at the width their labels need."""
        self._square = anchor
        self._least_square = float(least)
        for name, cells in (("left", self.rows), ("bottom", self.cols)):
            self.plot.getAxis(name).cells = cells  # the axis line under the cells only
        self.plot.getViewBox().sigResized.connect(self._square_range)
        self._square_range()

    def drawn_cell(self) -> tuple[float, float]:
        """(width, height) in pixels of a cell as it is drawn."""
        if self.size is not None:
            return self.size.cell, self.size.cell
        rect = self.plot.getViewBox().sceneBoundingRect()
        cw, ch = rect.width() / max(1, self.cols), rect.height() / max(1, self.rows)
        side = min(cw, ch)
        if self._square is not None and side >= self._least_square:
            return side, side
        return cw, ch

    def _square_range(self, *_args) -> None:
        rect = self.plot.getViewBox().sceneBoundingRect()
        if rect.width() <= 0 or rect.height() <= 0:
            return
        cw, ch = self.drawn_cell()
        span_x, span_y = rect.width() / cw, rect.height() / ch
        x0 = 0.0 if self._square == "left" else -(span_x - self.cols) / 2
        self.plot.getViewBox().setRange(
            xRange=(x0, x0 + span_x), yRange=(self.rows - span_y, self.rows), padding=0
        )

    def _stretched_size(self, rect) -> PanelSize:
        """The labels' size of a stretching panel at its box `rect`. Square cells are as
        large as the box is tall once the bottom labels took their room, and rotated
        labels take more: the labels are chosen for the cells they leave, starting from
        upright ones (else a first layout in a small box, rotated, would keep its
        labels rotated and its cells small)."""

        def size_at(pitch: float, zoom: float = self.zoom, row_pitch=None) -> PanelSize:
            labels = (self._row_labels, self._col_labels)
            return panel_size(
                self.rows, self.cols, *labels, pitch, zoom, False, row_pitch=row_pitch
            )  # fmt: skip

        cw, ch = self.drawn_cell()
        if self._square is None or cw != ch:  # stretched cells are not square
            return size_at(cw, row_pitch=ch)
        vb, bottom = self.plot.getViewBox(), self.plot.getAxis("bottom")
        now = bottom.height() if bottom.isVisible() else 0.0
        width = rect.width() / max(1, self.cols)
        tallest = vb.maximumHeight()

        def side(bottom_h: float) -> float:
            high = min(rect.height() + now - bottom_h, tallest) / max(1, self.rows)
            return max(self._least_square, min(width, high))

        # the upright labels of the widest cells if any: at the zoom's size, else at
        # their 100 % size, rather than rotated
        zoom = self.zoom
        size = size_at(width, zoom)
        if size.rotated and zoom > 1.0 and not size_at(width, 1.0).rotated:
            zoom, size = 1.0, size_at(width, 1.0)
        for _ in range(3):
            again = size_at(side(size.bottom_h if bottom.isVisible() else 0.0), zoom)
            if again.bottom_h == size.bottom_h and again.cell == size.cell:
                break
            size = again
        return size

    def _fit_ticks(self) -> None:
        if not self._row_labels and not self._col_labels:
            return
        size = self.size
        if size is None:  # a stretching panel (the query strip): fit the room it has
            rect = self.plot.getViewBox().sceneBoundingRect()
            if rect.width() <= 0:
                return
            size = self._stretched_size(rect)
        elif size.label_px <= 0:
            return
        key = (size.label_px, size.row_step, size.col_step, size.rotated, size.bottom_h)
        if getattr(self, "_ticks_set", None) == key:
            return  # a resize that keeps the same labels: nothing to lay out again
        if self.size is None and self._refit_cycles(key):
            return
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

    def _refit_cycles(self, key: tuple) -> bool:
        """True when laying the labels out again for the view box's present size would
        go round in circles: the new labels resize the axis, the axis resizes the view
        box, and the view box asks for the labels before (the soak's causal-6x16 seed 1:
        the window never idle again). Within one burst of refits (no pause of
        REFIT_BURST_S), a (size, labels) pair seen before, or more than MAX_REFITS
        refits, keeps the labels that are set."""
        rect = self.plot.getViewBox().sceneBoundingRect()
        entry = (round(rect.width()), round(rect.height()), key)
        now = time.monotonic()
        if now - getattr(self, "_refit_time", -math.inf) > REFIT_BURST_S:
            self._refits: list[tuple] = []
        self._refit_time = now
        if entry in self._refits or len(self._refits) >= MAX_REFITS:
            return True
        self._refits.append(entry)
        return False

    def set_matrix(
        self,
        matrix: np.ndarray,
        levels: tuple[float, float],
        blocked: np.ndarray | None = None,
        fmt: NumberFormat | None = None,
        colours: np.ndarray | None = None,
        reduced: np.ndarray | None = None,
        pixels: np.ndarray | None = None,
    ) -> None:
        """Show `matrix` (rows × cols) on `levels`; `blocked` cells are drawn grey with a ×
        overlay; cell numbers print in `fmt` (default: the format of these levels).
        `colours`, when given, is what the colours show instead (the weights divided by a
        head's or a row's maximum); the numbers printed are still `matrix`'s. `reduced` is
        the image already prepared (by `prepare_image`, off the UI thread), `pixels` its
        colours on `levels` (`colour_pixels`, off the UI thread too)."""
        self.matrix = matrix
        self.levels = levels
        self.fmt = fmt if fmt is not None else number_format("values", levels)
        if reduced is None:
            shown = matrix if colours is None else colours
            reduced = prepare_image(shown, self.step, (levels[0] + levels[1]) / 2)
        np.copyto(self._display, reduced)
        self.image.setImage(self._display, levels=levels, autoLevels=False)
        if pixels is not None:
            self.image.set_pixels(pixels, levels)
        if self.step != (1, 1):
            self.image.setRect(QRectF(0.0, 0.0, float(self.cols), float(self.rows)))
        if blocked is not None and not blocked.any():
            blocked = None
        if not same_array(blocked, self._blocked):
            self._blocked = None if blocked is None else blocked.copy()
            self.marks.draw_blocked(self._blocked)
        # the numbers' widths may have changed: fit their font again (set on the labels
        # only when its size changes), then print them once
        self.values.fit(self.matrix, self.fmt, self.drawn_cell())
        self._update_labels()

    def set_hidden(self, cells) -> None:
        """Draw `cells` ((row, col) pairs) as empty boxes: a neutral fill and an outline,
        no colour, no number, and a tooltip that does not give the value away (an
        exercise's blanks). An empty set shows every cell again. A mapping
        {(row, col): index} (Exercise.panel_blanks) numbers each box as the exercise
        panel lists it: index + 1, inside the dashed box."""
        if self.marks.set_hidden(cells, self._cell_px()):
            self._update_labels()

    @property
    def hidden(self) -> frozenset[tuple[int, int]]:
        """The exercise's blanks shown on this panel."""
        return self.marks.hidden

    @property
    def blank_numbers(self) -> dict[tuple[int, int], int]:
        """(row, col) -> the 1-based number drawn in that blank."""
        return self.marks.blank_numbers

    def blank_number_texts(self) -> dict[tuple[int, int], str]:
        """{(row, col): the number drawn in that blank's box} (what a student sees)."""
        return self.marks.blank_number_texts()

    @property
    def off(self) -> bool:
        return self.marks.off

    def set_off(self, off: bool) -> None:
        """Mark the panel's head switched off: greyed, hatched and labelled "off" (its
        numbers stay readable underneath, and in tooltips)."""
        self.marks.set_off(off, self._cell_px())

    def _cell_px(self) -> float:
        return self.size.cell if self.size is not None else 20.0

    def relevel(self, levels: tuple[float, float], fmt: NumberFormat | None = None) -> None:
        """New colour levels for the same numbers (the image is re-mapped, not rebuilt)."""
        self.levels = levels
        self.fmt = fmt if fmt is not None else number_format("values", levels)
        self.image.setLevels(levels)
        self._update_labels()

    @property
    def labels(self) -> list[list[pg.TextItem]]:
        """The cell number labels, labels[row][col] (empty: too large to print)."""
        return self.values.items

    def _update_labels(self) -> None:
        blocked, hidden = self._blocked, self.marks.hidden
        self.values.update(
            self.matrix, self._display, self.levels, self.lut, self.fmt, blocked, hidden
        )

    def _fit_labels(self, *_args) -> None:
        """The view box was resized: fit the tick labels and the numbers' font to it."""
        self._fit_ticks()
        if self.values.fit(self.matrix, self.fmt, self.drawn_cell()):
            self._update_labels()

    def set_show_values(self, show: bool) -> None:
        self.values.show = bool(show)
        self._update_labels()

    # ------------------------------------------------------------- highlights -----
    @property
    def query_rect(self):
        """The query row's outline (a QGraphicsRectItem)."""
        return self.marks.query_rect

    def set_query(self, row: int | None) -> None:
        self.marks.set_query(row if self.query_rows else None)

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
