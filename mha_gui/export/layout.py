"""Where every element of a figure goes, in logical units (the figure is at most
`MAX_WIDTH` units wide; fonts are sized in the same units).

Panels of one row share a cell size; titles wider than their heatmaps push panels onto
more lines rather than overflow; every colour bar sits in one column right of the widest
line of panels; the title block sets the minimum width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from mha_gui.engine.layer.numbers import NumberFormat
from mha_gui.export.scene import Panel, PanelRow, Scene
from mha_gui.export.text import ensure_app, rich_width, text_width

MAX_WIDTH = 1600.0  # logical units; PNG default width maps 1 unit to 1 px
MIN_WIDTH = 760.0
MARGIN = 28.0
MAX_CELL = 56.0
MAX_PANEL_HEIGHT = 420.0
PANEL_GAP = 30.0
ROW_GAP = 26.0
BAR_WIDTH = 16.0
VALUES_MAX_SIDE = 12  # print numbers in cells up to 12×12
NAMED_SIDE = 40  # up to this many tokens, every one is named …
NAMED_CELL = 9.0 * 1.15  # … in cells that keep 9-unit labels a line apart
VECTOR_CELL_LIMIT = 20_000
RASTER_PANEL_CELLS = 4_096


@dataclass
class PanelGeom:
    panel: Panel
    x: float  # heatmap left
    y: float  # heatmap top
    cell: float
    title_y: float
    show_row_labels: bool
    row_step: int
    col_step: int
    label_px: float
    col_rotated: bool
    col_label_h: float
    value_px: float  # 0: no values in cells
    frame: tuple[float, float, float, float]  # x, y, w, h of the whole panel
    raster: bool = False
    fmt: NumberFormat | None = None  # how the cells print numbers (None: the row's)

    @property
    def w(self) -> float:
        return self.panel.matrix.shape[1] * self.cell

    @property
    def h(self) -> float:
        return self.panel.matrix.shape[0] * self.cell


@dataclass
class BarGeom:
    row: PanelRow
    x: float
    y: float
    h: float


@dataclass
class Layout:
    scene: Scene
    width: float
    height: float
    panels: list[PanelGeom]
    bars: list[BarGeom]
    captions: list[tuple[float, float, str]]
    title_y: float
    legend_y: float | None
    vector: bool
    header: bool = True  # the title block is painted (the handout paints its own)


TITLE_PX, FORMULA_PX, SHAPES_PX, INFO_PX = 26.0, 22.0, 16.0, 14.0
CAPTION_PX, PANEL_TITLE_PX, LABEL_PX, TICK_PX = 15.0, 15.0, 13.0, 12.0


def _grid_cols(k: int) -> int:
    if k <= 4:
        return k
    lines = math.ceil(k / (4 if k <= 16 else 8))
    return math.ceil(k / lines)


def fewer_cols(k: int, ncols: int) -> int:
    """The panels per line of `k` panels with one line more than `ncols` gives — and
    always fewer than `ncols` (4 panels in 2 columns: one line more, 3, is still 2
    columns, and a row whose titles never fit looped on that forever: a switched-off
    head's longer "· off" titles hung the causal-6x16 handout and GIF)."""
    return max(1, min(ncols - 1, math.ceil(k / (math.ceil(k / ncols) + 1))))


def bar_label(row: PanelRow) -> str:
    """The colour bar's label (rich text), with the row's common factor: `score ×10^{−5}`."""
    factor = row.fmt.factor
    return f"{row.bar_label} {factor}" if factor else row.bar_label


def caption_text(row: PanelRow) -> str:
    factor = row.fmt.factor
    return f"{row.caption}   ·   values {factor}" if factor else row.caption


def _bar_extent(row: PanelRow) -> float:
    """Width from the bar's left edge to the end of its widest tick or label."""
    ticks = max(text_width(row.fmt.tick(v), TICK_PX) for v in _tick_values(row.kind, row.levels))
    return max(BAR_WIDTH + 7 + ticks, rich_width(bar_label(row), TICK_PX, True)) + 4


def _value_px(row: PanelRow, fmt: NumberFormat, cell: float) -> float:
    """Font size for the numbers in the cells (0: too small to print)."""
    value_px = min(15.0, cell * 0.3)
    finite = [p.matrix[np.isfinite(p.matrix)].ravel()[:400] for p in row.panels]
    widest = max((text_width(fmt.cell(float(v)), value_px) for f in finite for v in f), default=0.0)
    if widest > cell * 0.88:
        value_px = value_px * cell * 0.88 / widest
    return value_px if value_px >= 8 else 0.0


def _tick_values(kind: str, levels: tuple[float, float]) -> list[float]:
    lo, hi = levels
    return [lo + (hi - lo) * f for f in (0.0, 0.25, 0.5, 0.75, 1.0)]


def layout_scene(
    scene: Scene, *, vector: bool = True, header: bool = True, max_width: float = MAX_WIDTH
) -> Layout:
    """Geometry of every element, in logical units (see module docstring).

    `header=False` leaves out the title block (title, formula, shapes, settings) for a
    page that prints its own header, like the handout. `max_width` (MIN_WIDTH to
    MAX_WIDTH): a narrower figure has smaller cells but, scaled to a page, larger text."""
    max_width = max(MIN_WIDTH, min(MAX_WIDTH, float(max_width)))
    ensure_app()
    y = MARGIN
    title_y = y
    title_w = 0.0
    if header:
        y += TITLE_PX * 1.5 + SHAPES_PX * 1.5 + INFO_PX * 1.5 + 18
        title_w = max(
            rich_width(scene.title, TITLE_PX, True) + 28 + rich_width(scene.formula, TITLE_PX),
            rich_width("shapes:  " + scene.shapes, SHAPES_PX),
            rich_width(scene.info, INFO_PX),
        )
    total_cells = sum(p.matrix.size for r in scene.rows for p in r.panels)
    vector_ok = total_cells <= VECTOR_CELL_LIMIT

    geoms: list[PanelGeom] = []
    bars: list[BarGeom] = []
    captions: list[tuple[float, float, str]] = []
    content_w = 0.0
    rows_start = len(geoms)
    # every colour bar sits in one column right of the widest panel line
    bar_area = 18 + max((_bar_extent(r) for r in scene.rows), default=BAR_WIDTH)
    for row in scene.rows:
        k = len(row.panels)
        ncols = _grid_cols(k)
        nr, nc = row.panels[0].matrix.shape
        # row labels: widest token, elided to 150 units
        label_px = LABEL_PX
        row_label_w = min(150.0, max(text_width(s, label_px) for s in row.panels[0].row_labels))
        gutter = row_label_w + 10

        def fit(cols: int, gutter=gutter, nc=nc, nr=nr) -> float:
            avail = max_width - 2 * MARGIN - gutter - bar_area - (cols - 1) * PANEL_GAP
            return min(MAX_CELL, avail / (cols * nc), MAX_PANEL_HEIGHT / nr)

        panel_title_w = max(rich_width(p.title, PANEL_TITLE_PX, True) + 22 for p in row.panels)

        def titles_fit(cols: int, gutter=gutter, title_w=panel_title_w) -> bool:
            avail = max_width - 2 * MARGIN - gutter - bar_area - (cols - 1) * PANEL_GAP
            return cols * title_w <= avail

        # panel titles wider than their heatmaps: more lines rather than overflow
        while ncols > 1 and not titles_fit(ncols):
            ncols = fewer_cols(k, ncols)
        cell = fit(ncols)
        # narrow, tall panels (height-limited): put more per line while cells keep size
        while ncols < k:
            wider = math.ceil(k / (math.ceil(k / ncols) - 1)) if math.ceil(k / ncols) > 1 else k
            if fit(wider) < cell * 0.999 or not titles_fit(wider):
                break
            ncols = wider
        # up to NAMED_SIDE tokens every one named (labels of 9 units a line apart):
        # fewer panels per line until the cells allow it (the figure grows taller)
        nameable = nr <= NAMED_SIDE and fit(1) >= NAMED_CELL  # else no line would name them
        while ncols > 1 and nameable and cell < NAMED_CELL:
            ncols = fewer_cols(k, ncols)
            cell = fit(ncols)
        # label thinning: keep labels at least a line apart
        pitch = LABEL_PX * 1.25
        lab_px = LABEL_PX if cell >= pitch else max(9.0, cell * 0.85)
        row_step = 1 if cell >= lab_px * 1.15 else math.ceil(lab_px * 1.25 / cell)
        widest_col = max(text_width(s, lab_px) for s in row.panels[0].col_labels)
        col_rotated = widest_col > cell * 0.92
        col_step = (
            1 if (not col_rotated or cell >= lab_px * 1.15) else math.ceil(lab_px * 1.25 / cell)
        )
        if col_rotated and col_step == 1 and cell < lab_px * 1.15:
            col_step = math.ceil(lab_px * 1.25 / cell)
        col_label_h = (min(110.0, widest_col) if col_rotated else lab_px * 1.2) + 6
        has_blocks = bool(row.panels[0].col_blocks)
        block_h = 22.0 if has_blocks else 0.0
        value_px = 0.0
        fmt = row.fmt
        if nr <= VALUES_MAX_SIDE and nc <= VALUES_MAX_SIDE and cell >= 24:
            value_px = _value_px(row, fmt, cell)
            if fmt.decimals > 2 and value_px < 10:  # a digit less beats unreadable text
                short = NumberFormat(fmt.exponent, 2, fmt.tick_decimals)
                if _value_px(row, short, cell) > value_px:
                    fmt, value_px = short, _value_px(row, short, cell)
        panel_title_h = PANEL_TITLE_PX * 1.6
        heat_h = nr * cell
        slot_w = max(nc * cell, panel_title_w)
        line_h = panel_title_h + block_h + col_label_h + heat_h
        captions.append((MARGIN, y, caption_text(row)))
        y += CAPTION_PX * 1.5 + 6  # clear of the inspected-head frame below
        bar_top = None
        bar_bottom = 0.0
        for li in range(math.ceil(k / ncols)):
            x = MARGIN + gutter
            for ci in range(ncols):
                idx = li * ncols + ci
                if idx >= k:
                    break
                p = row.panels[idx]
                hx = x
                hy = y + panel_title_h + block_h + col_label_h
                raster = (not vector and p.matrix.size > RASTER_PANEL_CELLS) or (
                    vector and not vector_ok
                )
                frame = (
                    hx - (gutter if ci == 0 else 0) - 8,
                    y - 4,
                    slot_w + (gutter if ci == 0 else 0) + 16,
                    line_h + 12,
                )
                geoms.append(
                    PanelGeom(
                        p,
                        hx,
                        hy,
                        cell,
                        y,
                        ci == 0,
                        row_step,
                        col_step,
                        lab_px,
                        col_rotated,
                        col_label_h,
                        value_px,
                        frame,
                        raster,
                        fmt,
                    )
                )
                if bar_top is None:
                    bar_top = hy
                bar_bottom = hy + heat_h
                x += slot_w + PANEL_GAP
            content_w = max(content_w, x - PANEL_GAP - MARGIN)
            y += line_h + ROW_GAP
        bar_h = max(bar_bottom - bar_top, 120.0)
        bars.append(BarGeom(row, 0.0, bar_top, bar_h))
        y = max(y, bar_top + bar_h + ROW_GAP)
    for b in bars:  # one column for every bar, right of the widest line of panels
        b.x = MARGIN + content_w + 18
    grid_w = content_w + bar_area
    width = min(max_width, max(MIN_WIDTH, grid_w + 2 * MARGIN, title_w + 2 * MARGIN))
    shift = max(0.0, (width - 2 * MARGIN - grid_w) / 2)
    for g in geoms[rows_start:]:
        g.x += shift
        fx, fy, fw, fh = g.frame
        g.frame = (fx + shift, fy, fw, fh)
    for b in bars:
        b.x += shift
    captions = [(cx + shift, cy, text) for cx, cy, text in captions]
    legend_y = None
    if scene.legend_blocked:
        legend_y = y
        y += LABEL_PX * 2
    height = y - ROW_GAP + MARGIN + (10 if legend_y is not None else 0)
    return Layout(scene, width, height, geoms, bars, captions, title_y, legend_y, vector, header)


def side_by_side(lay: Layout, cols: int) -> Layout:
    """`lay` with its rows of panels set in `cols` columns, in order, each row whole with
    its caption and colour bar (the columns as even in height as the rows allow).

    A figure laid out for a page can be tall and narrow — the projections stack Q, K and
    V, the output puts Y over the heads' contributions — and a page then shrinks it to
    its height: the toy's projections printed their labels at ~5 pt. Side by side its
    rows fill the page's width instead. The blocked-cells legend goes below them all.
    Not for a layout with its title block (the handout prints its own)."""
    tops = [cy for _cx, cy, _text in lay.captions]
    rows = len(tops)
    cols = max(1, min(cols, rows))
    if cols == 1 or lay.header:
        return lay
    end = lay.legend_y if lay.legend_y is not None else lay.height - MARGIN + ROW_GAP
    bottoms = [*tops[1:], end]
    heights = [b - t for t, b in zip(tops, bottoms, strict=True)]
    # the split of the rows into `cols` runs whose tallest is least
    best = None
    for cuts in combinations(range(1, rows), cols - 1):
        bounds = [0, *cuts, rows]
        tallest = max(sum(heights[a:b]) for a, b in zip(bounds, bounds[1:], strict=False))
        if best is None or tallest < best[0]:
            best = (tallest, bounds)
    bounds = best[1]
    # each column as wide as what the rows draw (a layout is at least MIN_WIDTH wide,
    # its narrow grid centred in it): captions, frames, bars and their ticks
    left = min([g.frame[0] for g in lay.panels] + [cx for cx, _cy, _t in lay.captions])
    right = max(
        [g.frame[0] + g.frame[2] for g in lay.panels]
        + [bar.x + _bar_extent(bar.row) for bar in lay.bars]
    )
    step = right - left + PANEL_GAP
    shift: list[tuple[float, float]] = [(0.0, 0.0)] * rows  # each row's (dx, dy)
    for c, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        y = tops[0]
        for i in range(a, b):
            shift[i] = (MARGIN - left + c * step, y - tops[i])
            y += heights[i]

    def row_of(y: float) -> int:
        return max(0, sum(1 for t in tops if t <= y + 1e-6) - 1)

    panels = []
    for g in lay.panels:
        dx, dy = shift[row_of(g.title_y)]
        fx, fy, fw, fh = g.frame
        panels.append(
            replace(
                g, x=g.x + dx, y=g.y + dy, title_y=g.title_y + dy, frame=(fx + dx, fy + dy, fw, fh)
            )
        )
    bars = []
    for bar in lay.bars:
        dx, dy = shift[row_of(bar.y)]
        bars.append(replace(bar, x=bar.x + dx, y=bar.y + dy))
    captions = []
    for i, (cx, cy, text) in enumerate(lay.captions):
        dx, dy = shift[i]
        captions.append((cx + dx, cy + dy, text))
    content_end = tops[0] + best[0]
    legend_y = content_end if lay.legend_y is not None else None
    height = content_end - ROW_GAP + MARGIN
    if legend_y is not None:
        height += lay.height - (lay.legend_y - ROW_GAP + MARGIN)  # the legend's own room
    width = 2 * MARGIN + cols * step - PANEL_GAP
    return replace(
        lay, width=width, height=height, panels=panels, bars=bars, captions=captions,
        legend_y=legend_y,
    )  # fmt: skip
