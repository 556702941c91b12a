"""Where every panel of a stage goes and how big its cells are: squares, always.

A matrix is a grid of squares, so every panel is drawn at a fixed size, rows × cell by
cols × cell pixels, and the stage's grid is as large as its panels need: when the view
is smaller, the grid scrolls (it never squashes a panel to fit). The size depends only
on the stage, the layer's shapes and labels, the view's size, the zoom and the layout —
never on which stages were visited before — so going back to a stage shows it exactly
as it was.

One number, the stage's *scale* s (pixels per cell of a readable matrix), sizes every
panel: a matrix at most READABLE cells on each side has cells of s pixels; a larger one
is an overview whose longest side gets READABLE × s pixels (its cells smaller, still
square; exact values in tooltips). s is the largest value, up to MAX_CELL, at which the
grid fits the view, and never below MIN_SMALL (matrices up to SMALL cells a side) or
MIN_READABLE pixels (up to READABLE), both grown with the zoom.

Two layouts (the stage bar's Layout selector, kept in the view settings):
- "grid": every head's panels side by side, as many columns as fit;
- "one-big": the inspected head (and the layer-wide panels) large, the other heads as
  small thumbnails beside it (click one to inspect it).
"auto" is the grid for up to AUTO_GRID_HEADS heads and one-big beyond: with 8 or 12
heads a projected grid can show no head readably, and a teacher explains one head at a
time while the thumbnails keep the others' patterns in view. A few heads whose weights
cannot print their numbers in the grid while one big head can (causal-6x16: 24 px cells
at 100 %, 21 px at 150 %) are one-big too (`auto_layout`, for every stage of the layer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtGui import QFont, QFontMetricsF

from mha_gui.engine.models.tokens import SPACE_MARK
from mha_gui.engine.panels.stage_panels import KINDS

SMALL = 16  # a matrix with at most this many cells a side: cells ≥ MIN_SMALL px
READABLE = 40  # at most this many: cells ≥ MIN_READABLE px, every row and column named
MIN_SMALL = 14
MIN_READABLE = 12  # its labels then 0.8 × 12 ≈ 10 px, a line apart
MAX_CELL = 56  # at zoom 1: larger cells only spread a small matrix over the room
LABEL_MAX_PX = 13.0  # tick labels at zoom 1 (10 pt); smaller only when cells are
LABEL_MIN_PX = 8.0
OVERVIEW_MIN = 240  # an overview's longest side at least, at zoom 1
THUMB_SIDE = 84  # a thumbnail panel's longest side at zoom 1 (few heads)
THUMB_MIN_SIDE = 36  # … and with many
TITLE_PX = 24  # a group's title line at zoom 1
PANEL_TITLE_PX = 22  # a panel's own title in a group of several
OWN_TITLE_PT = 10  # … its font (stage_cells), in points at zoom 1
AXIS_TITLE_PX = 16  # "query" / "key" beside the axes
BAR_PX = 70  # the colour bar's canvas beside the grid: BAR_PX + BAR_ZOOM_PX × zoom
BAR_ZOOM_PX = 20  # (its labels grow with the zoom; measured 77 px at 100 %, 90 at 150 %)
SCROLLBAR_PX = 20  # a vertical scroll bar, with a margin
CELL_MARGIN = 10  # margins and spacing around a grid cell
WIDE_LABELS_PX = 70  # a wide overview's row labels and axis title, about
NAMED_PITCH = LABEL_MIN_PX * 1.15  # rows this far apart can each be named
WIDE_MIN_CELL = 10  # a wide overview's rows (≤ READABLE tokens) at least, where it can
AUTO_GRID_HEADS = 4
# The concat's head bands over H: 0.6 of a cell, and at least BAND_PX (× the zoom) so
# that "Z₁" stays legible over H's small cells (n = 20, d_model 128: 9 px cells, the
# bands were 5 px under a 13 px label).
BAND_PX = 22
VALUE_SIDE = 12  # numbers print in matrices up to this many cells a side (heatmap_panel)
MARKS = frozenset(SPACE_MARK + "↵⇥ ")


def band_cells(kind: str, cell: float, zoom: float) -> float:
    """The room above a kind's first row, in cells: the concat's head bands over H."""
    if kind != "H":
        return 0.0
    return max(0.6, BAND_PX * max(zoom, 0.5) / max(cell, 1e-6))


def axis_label(token: str, position: int) -> str:
    """A row or column label: the token, or — for a token that is only a space, newline
    or tab mark (a lone "␣" tells nothing) — the mark and its position ("␣ 5")."""
    text = str(token)
    if not text.strip() or set(text) <= MARKS:
        shown = "".join(SPACE_MARK if ch == " " else ch for ch in text) or SPACE_MARK
        return f"{shown} {position}"
    return text


@lru_cache(maxsize=32)
def axis_labels(items: tuple) -> tuple[str, ...]:
    """Every item's `axis_label`, remembered: a layout fit asks for the same 2048 tokens'
    labels for every kind at every scale it tries (~0.5 s per n = 2048 head switch)."""
    return tuple(axis_label(t, i) for i, t in enumerate(items))


def resolved_layout(layout: str, heads: int) -> str:
    """ "grid" or "one-big" for the layout setting and the number of heads (the "auto"
    of a view that knows its size: `auto_layout`)."""
    if layout == "auto":
        return "grid" if heads <= AUTO_GRID_HEADS else "one-big"
    return layout


def _prints_values(geometry: StageGeometry) -> bool:
    """Does a panel drawn large (not a thumbnail) of at most VALUE_SIDE cells a side
    have cells that print numbers?"""
    return any(
        size.value_room and max(size.rows, size.cols) <= VALUE_SIDE
        for (_kind, head), size in geometry.sizes.items()
        if not geometry.places[head].thumb
    )


def auto_layout(
    weights_groups, config, tokens, width: int, height: int, zoom: float, values: bool = True
) -> str:
    """ "auto" for a view of width × height: the grid for up to AUTO_GRID_HEADS heads —
    unless there the attention weights (`weights_groups`: that stage's panels, the one
    a lesson dwells on) are too small to print their numbers while one head big prints
    them (causal-6x16 at 150 % on a 720p projector: 21 px cells in the grid, the numbers
    gone, 40 px big) — and one head big beyond. Decided once for every stage of the
    layer, so the layout does not change from stage to stage; with numbers off
    (`values`, View ▸ Show values) there is nothing to print: the grid."""
    mode = resolved_layout("auto", config.h)
    if mode != "grid" or config.h < 2 or config.n > VALUE_SIDE or not values:
        return mode
    grid = stage_geometry(weights_groups, config, tokens, width, height, zoom, "grid")
    if _prints_values(grid):
        return "grid"
    big = stage_geometry(weights_groups, config, tokens, width, height, zoom, "one-big")
    return "one-big" if _prints_values(big) else "grid"


@lru_cache(maxsize=64)
def _metrics(px: float) -> QFontMetricsF:
    font = QFont()
    font.setPixelSize(max(1, round(px)))
    return QFontMetricsF(font)


def label_font(px: float) -> QFont:
    font = QFont()
    font.setPixelSize(max(1, round(px)))
    return font


def text_width(texts, px: float) -> float:
    fm = _metrics(px)
    return max((fm.horizontalAdvance(t) for t in texts), default=0.0)


@lru_cache(maxsize=512)
def _widest(labels: tuple[str, ...], step: int, px: float) -> float:
    """text_width of every `step`-th label, remembered: fitting a layout tries ~30
    scales, most with the same label size, over the same 2048 token labels."""
    return text_width(labels[::step], px)


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


def label_step(count: int, pitch: float, px: float) -> int:
    """Every label for up to READABLE rows (columns) a line apart; beyond, or closer
    (the rows of an overview too wide for its rows to be named), every k-th (a round k)
    so that labels `pitch` pixels apart do not overlap."""
    if count <= READABLE and pitch >= NAMED_PITCH - 1e-6:
        return 1
    per_label = max(1, math.ceil(px * 1.3 / max(pitch, 1e-6)))
    return tick_step(count, max(1, count // per_label))


@dataclass(frozen=True)
class PanelSize:
    """A panel's drawn size: square cells of `cell` pixels, tick labels of `label_px`
    pixels (0: a thumbnail, no axes) every `row_step`-th row and `col_step`-th column,
    column labels `rotated` (read bottom to top) when wider than their columns, the
    axes `left_w` wide and `bottom_h` high."""

    rows: int
    cols: int
    cell: float
    label_px: float = 0.0
    row_step: int = 1
    col_step: int = 1
    rotated: bool = False
    left_w: float = 0.0
    bottom_h: float = 0.0

    @property
    def width(self) -> float:
        return self.cols * self.cell

    @property
    def height(self) -> float:
        return self.rows * self.cell

    @property
    def value_room(self) -> bool:
        """Could numbers print in these cells at a legible size (≥ 10 px)?"""
        return self.cell >= 30


def cell_for(rows: int, cols: int, scale: float) -> float:
    side = max(rows, cols)
    return scale if side <= READABLE else scale * READABLE / side


def panel_size(
    rows: int, cols: int, row_labels, col_labels, cell: float, zoom: float, axis_titles: bool,
    row_pitch: float | None = None,
) -> PanelSize:  # fmt: skip
    """The size of a panel with axes at `cell` pixels per cell (`row_pitch`: the rows'
    own pitch where cells are not square — the query strip's vectors — else `cell`)."""
    z = max(zoom, 0.5)
    row_pitch = cell if row_pitch is None else row_pitch
    px = min(LABEL_MAX_PX * z, max(LABEL_MIN_PX, cell * 0.8))
    if max(rows, cols) > READABLE:  # an overview: fewer labels, each at full size
        px = LABEL_MAX_PX * z
    row_step = label_step(rows, row_pitch, px)
    col_step = label_step(cols, cell, px)
    row_px = min(px, max(LABEL_MIN_PX, row_step * row_pitch * 0.8))
    col_px = min(px, max(LABEL_MIN_PX, col_step * cell * 0.8))
    px = min(row_px, col_px)
    fm = _metrics(px)
    widest_row = _widest(tuple(row_labels), row_step, px)
    widest_col = _widest(tuple(col_labels), col_step, px)
    rotated = widest_col > col_step * cell * 0.95
    extra = AXIS_TITLE_PX * z if axis_titles else 0.0
    left = math.ceil(widest_row + 8 + extra)
    bottom = math.ceil((widest_col if rotated else fm.height()) + 6 + extra)
    return PanelSize(rows, cols, cell, px, row_step, col_step, rotated, left, bottom)


def thumb_size(rows: int, cols: int, zoom: float, side: float = THUMB_SIDE) -> PanelSize:
    return PanelSize(rows, cols, side * max(zoom, 0.5) / max(rows, cols, 1))


@dataclass(frozen=True)
class Group:
    """The panels drawn together in one grid cell under one title: a head's (Q, K, V at
    the projections stage) or the layer's (X, H, Y: head −1)."""

    head: int
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class Placement:
    """Where a group sits: canvas grid (row, col), or in the thumbnails' own grid."""

    row: int
    col: int
    thumb: bool = False


@dataclass(frozen=True)
class StageGeometry:
    """A stage's layout: the mode drawn ("grid" or "one-big"), its scale, the grid's
    columns (of the big groups in one-big), the head drawn big (None in grid), the
    thumbnails' columns, each panel's size and each group's place."""

    mode: str
    scale: float
    cols: int
    big: int | None
    thumb_cols: int
    sizes: dict
    places: dict

    @property
    def rows(self) -> int:
        return 1 + max((p.row for p in self.places.values() if not p.thumb), default=0)

    def size(self, kind: str, head: int) -> PanelSize:
        return self.sizes[(kind, head)]


def own_title_width(kind: str, head: int, size: PanelSize, px: float) -> float:
    """About the width of a panel's own title, "Q₀  4×2" (its subscript set small: as
    wide as half a digit each)."""
    script = text_width([str(max(head, 0))], px) / 2
    return text_width([f"{kind}  {size.rows}×{size.cols}"], px) + script + 4


def _group_box(group: Group, sizes: dict, zoom: float) -> tuple[float, float]:
    """(width, height) in pixels a group's grid cell needs."""
    z = max(zoom, 0.5)
    parts = [sizes[(k, group.head)] for k in group.kinds]
    widths = [p.left_w + p.width for p in parts]
    if len(parts) > 1:  # each panel's own title ("Q₀  4×2") over it, if wider
        px = OWN_TITLE_PT * 96 / 72 * z
        widths = [
            w if p.label_px <= 0 else max(w, own_title_width(k, group.head, p, px))
            for w, k, p in zip(widths, group.kinds, parts, strict=True)
        ]
    width = sum(widths) + 4 * (len(parts) - 1) + CELL_MARGIN
    title = TITLE_PX * z + (PANEL_TITLE_PX * z if len(parts) > 1 else 0)
    drawn = [
        p.height + band_cells(k, p.cell, zoom) * p.cell + p.bottom_h
        for k, p in zip(group.kinds, parts, strict=True)
    ]
    return width, title + max(drawn) + CELL_MARGIN


def _grid_extent(boxes: list[tuple[float, float]], cols: int) -> tuple[float, float]:
    widths = [0.0] * cols
    heights: list[float] = []
    for i, (w, h) in enumerate(boxes):
        r, c = divmod(i, cols)
        widths[c] = max(widths[c], w)
        if r == len(heights):
            heights.append(0.0)
        heights[r] = max(heights[r], h)
    return sum(widths), sum(heights)


def _labels(kind: str, config, tokens) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return _labels_of(kind, config, tuple(tokens))


@lru_cache(maxsize=64)
def _labels_of(kind: str, config, tokens: tuple) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A kind's row and column labels, made once per layer (a fit asks ~30 times)."""
    rows = axis_labels(tokens)
    cols = axis_labels(tuple(KINDS[kind].columns(config, list(tokens))))
    return rows, cols


def named_rows_cell(rows: int, cols: int, zoom: float, width: float) -> float:
    """The least cell of a wide overview (at most READABLE token rows, more columns: Y,
    H, X of a 20-token layer with d_model 64) whose rows can each be named: up to
    MIN_READABLE pixels (grown with the zoom) as the view's `width` allows, else the
    largest of MIN_READABLE, WIDE_MIN_CELL and NAMED_PITCH (labels of LABEL_MIN_PX a
    line apart) at which the panel is at most twice the width (the grid scrolls
    sideways); wider still (d_model 768) it fits the width and its rows are named every
    k-th, never on top of each other."""
    if rows > READABLE or cols <= READABLE:
        return 0.0
    fit = (width - WIDE_LABELS_PX - CELL_MARGIN) / cols
    best = MIN_READABLE * max(zoom, 1.0)
    if fit >= WIDE_MIN_CELL:
        return min(best, fit)
    # the largest of these whose panel is at most twice the width (it scrolls sideways)
    for pitch in (best, WIDE_MIN_CELL, NAMED_PITCH):
        if pitch * cols <= 2 * width:
            return max(pitch, fit)
    return fit


def _sizes_at(groups, config, tokens, scale: float, zoom: float, many: bool, width: float) -> dict:
    sizes = {}
    for g in groups:
        for kind in g.kinds:
            rows, cols = _labels(kind, config, tokens)
            titled = KINDS[kind].masked and not many
            cell = cell_for(len(rows), len(cols), scale)
            cell = max(cell, named_rows_cell(len(rows), len(cols), zoom, width))
            sizes[(kind, g.head)] = panel_size(len(rows), len(cols), rows, cols, cell, zoom, titled)
    return sizes


def min_scale(groups, config, tokens, zoom: float) -> float:
    """The smallest scale allowed: MIN_SMALL px while every readable matrix has at most
    SMALL cells a side, else MIN_READABLE (both grown with the zoom); a stage of
    overviews only may shrink until their longest side is OVERVIEW_MIN pixels."""
    sides = [max(config.n, len(KINDS[k].columns(config, tokens))) for g in groups for k in g.kinds]
    readable = [s for s in sides if s <= READABLE]
    if not readable:  # overviews only (n > 40): the longest side at least OVERVIEW_MIN
        return OVERVIEW_MIN / READABLE * max(zoom, 1.0)
    base = MIN_SMALL if max(readable) <= SMALL else MIN_READABLE
    return base * max(zoom, 1.0)


def _fit_grid(
    groups, config, tokens, width: float, height: float, zoom: float, many: bool,
    name_width: float | None = None,
):  # fmt: skip
    """(scale, columns, sizes) of the largest scale whose grid fits width × height, or
    the smallest scale in as many columns as fit the width (the grid then scrolls).
    `name_width`: the width a wide overview may take to name its rows (`named_rows_cell`;
    the one-big layout's whole view, its thumbnails then a scroll away), else `width`."""
    lo = min_scale(groups, config, tokens, zoom)
    hi = max(lo, MAX_CELL * max(zoom, 0.5))
    scale = hi
    while True:
        sizes = _sizes_at(groups, config, tokens, scale, zoom, many, name_width or width)
        boxes = [_group_box(g, sizes, zoom) for g in groups]
        for cols in range(1, len(groups) + 1):
            w, h = _grid_extent(boxes, cols)
            if w <= width and h <= height:
                return scale, cols, sizes
        if scale <= lo:
            break
        scale = max(lo, scale * 0.92 if scale > 24 else scale - 1)
    # nothing fits: the smallest cells, in as many columns as fit the width
    # (it then scrolls: a vertical scroll bar takes SCROLLBAR_PX of the width)
    room = width - SCROLLBAR_PX
    fitting = [c for c in range(1, len(groups) + 1) if _grid_extent(boxes, c)[0] <= room]
    return lo, max(fitting, default=1), sizes


def stage_geometry(
    groups: list[Group],
    config,
    tokens,
    width: int,
    height: int,
    zoom: float,
    layout: str = "grid",
    inspected: int = 0,
) -> StageGeometry:
    """The layout of a stage's groups in a view of width × height pixels."""
    z = max(zoom, 0.5)
    # the colour bar's canvas beside the grid; a grid that fits has no scroll bar
    room_w = max(width, 320) - BAR_PX - BAR_ZOOM_PX * z - 4
    room_h = max(height, 200) - 16
    many = len(groups) > 4
    heads = [g for g in groups if g.head >= 0]
    mode = resolved_layout(layout, config.h)
    if mode == "one-big" and len(heads) > 1:
        big = inspected if any(g.head == inspected for g in heads) else heads[0].head
        large = [g for g in groups if g.head < 0 or g.head == big]
        thumbs = [g for g in heads if g.head != big]
        # thumbnails take at most about a third of the width: smaller when there are many
        side = THUMB_SIDE
        while True:
            tsizes = {
                (k, g.head): thumb_size(config.n, len(KINDS[k].columns(config, tokens)), zoom, side)
                for g in thumbs
                for k in g.kinds
            }
            tw, th = _group_box(thumbs[0], tsizes, zoom)
            th = th - TITLE_PX * z + 18 * z  # a thumbnail's title is one small line
            per_column = max(1, int(room_h // th))
            thumb_cols = math.ceil(len(thumbs) / per_column)
            if thumb_cols * tw <= room_w / 3 or side <= THUMB_MIN_SIDE:
                break
            side -= 8
        scale, cols, sizes = _fit_grid(
            large, config, tokens, room_w - thumb_cols * tw, room_h, zoom, False, room_w
        )
        places = {g.head: Placement(*divmod(i, cols)) for i, g in enumerate(large)}
        places.update(
            {g.head: Placement(*divmod(i, thumb_cols), thumb=True) for i, g in enumerate(thumbs)}
        )
        sizes = {**sizes, **tsizes}
        return StageGeometry("one-big", scale, cols, big, thumb_cols, sizes, places)
    scale, cols, sizes = _fit_grid(groups, config, tokens, room_w, room_h, zoom, many)
    places = {g.head: Placement(*divmod(i, cols)) for i, g in enumerate(groups)}
    return StageGeometry("grid", scale, cols, None, 0, sizes, places)
