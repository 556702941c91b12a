"""Slide-ready figures of one stage, painted with QPainter into PNG, SVG or PDF.

Three steps, so every format shows the same picture:

1. `build_scene()` turns a session and a stage into *what* to draw: rows of labelled
   matrix panels (one per head), their colour levels, the title, formula and shapes.
2. `layout_scene()` computes *where* everything goes, in logical units (the figure is at
   most `MAX_WIDTH` units wide; fonts are sized in the same units).
3. `paint_scene()` draws the laid-out scene on any QPainter; `render_image()`,
   `write_png()`, `write_svg()` and `write_pdf()` set up the paint device and scale.

Heatmap cells are vector rectangles (`fillRect`) and every label is text, so SVG and PDF
scale without blur. Large matrices are the exception, by design:

- PNG: a panel with more than `RASTER_PANEL_CELLS` cells is drawn as one QImage with a
  pixel per cell, scaled without smoothing (smoothing only when a cell is smaller than
  a device pixel). Same picture, a hundred times faster than 16k `fillRect` calls.
- SVG/PDF: cells stay vector shapes while the whole figure has at most
  `VECTOR_CELL_LIMIT` cells (every teaching preset is far below); beyond that (e.g.
  BERT-base: 196k score cells) each panel is embedded as a nearest-neighbour upscaled
  image, so the file stays a few MB instead of 100 MB. Labels and titles stay text.
"""

from __future__ import annotations

import html
import math
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from mha_gui import theme
from mha_gui.engine.forward import Trace
from mha_gui.engine.session import Session
from mha_gui.engine.stages import Stage, formula_for, shapes_line, stage_by_name
from mha_gui.engine.values import format_value

MAX_WIDTH = 1600.0  # logical units; PNG default width maps 1 unit to 1 px
MIN_WIDTH = 760.0
MARGIN = 28.0
MAX_CELL = 56.0
MAX_PANEL_HEIGHT = 420.0
PANEL_GAP = 30.0
ROW_GAP = 26.0
BAR_WIDTH = 16.0
VALUES_MAX_SIDE = 12  # print numbers in cells up to 12×12
VECTOR_CELL_LIMIT = 20_000
RASTER_PANEL_CELLS = 4_096
DEFAULT_PNG_WIDTH = 1600
PNG_DPI = 192  # "2×" of a 96-dpi screen: a 1600 px figure is about 8.3 in wide
PDF_POINTS_PER_UNIT = 0.5  # a 1600-unit figure is an 800 pt (28 cm) wide PDF page
FONT_FAMILY = "DejaVu Sans"

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def sub(i: int) -> str:
    """Unicode subscript digits: sub(12) == '₁₂'."""
    return str(i).translate(_SUB)


# ----------------------------------------------------------------- scene ----------
@dataclass
class Panel:
    title: str
    matrix: np.ndarray  # (rows, cols) float; -inf allowed where blocked
    row_labels: list[str]
    col_labels: list[str]
    head: int | None = None  # colours the title swatch and the inspected-head frame
    marked: bool = False  # the inspected head: drawn with a frame in its colour
    blocked: np.ndarray | None = None  # (rows, cols) bool, drawn grey, hatched, "×"
    query_row: int | None = None  # row outlined as the selected query
    col_blocks: list[tuple[int, int, int]] = field(default_factory=list)  # (start, stop, head)
    marked_block: int | None = None  # head whose column block is framed (concat)


@dataclass
class PanelRow:
    caption: str  # e.g. "Q_i = X W_i^Q · rows: tokens, columns: features"
    panels: list[Panel]
    kind: str  # "weights" (sequential 0..1) or "values" (diverging, symmetric)
    levels: tuple[float, float]
    bar_label: str

    @property
    def fmt(self) -> NumberFormat:
        return number_format(self.kind, self.levels)


@dataclass
class Scene:
    title: str
    formula: str
    shapes: str
    info: str
    rows: list[PanelRow]
    legend_blocked: bool = False


def _levels(kind: str, arrays) -> tuple[float, float]:
    arrays = list(arrays)
    return theme.levels_for("weights" if kind == "weights" else "values", *arrays)


def build_scene(
    session: Session,
    stage: Stage | int | str,
    *,
    head: int | None = None,
    query: int | None = None,
    trace: Trace | None = None,
) -> Scene:
    """What one stage shows. `head=I` shows only head I; otherwise all heads, with the
    session's inspected head (`session.view.head`) framed. `query=J` outlines row J."""
    s = stage if isinstance(stage, Stage) else stage_by_name(str(stage))
    c = session.config
    t = trace if trace is not None else session.run()
    tokens = list(session.tokens)
    heads = [head] if head is not None else list(range(c.h))
    marked_head = head if head is not None else session.view.head
    mark = len(heads) > 1
    feats = [str(j) for j in range(c.d_model)]
    kfeat = [str(j) for j in range(c.d_k)]
    vfeat = [str(j) for j in range(c.d_v)]
    gqa = c.variant != "MHA"

    def panel(title, m, rows, cols, i=None, **kw) -> Panel:
        return Panel(
            title, np.asarray(m, dtype=float), rows, cols, i, mark and i == marked_head, **kw
        )

    rows: list[PanelRow] = []
    legend_blocked = False
    if s.name == "input":
        rows.append(
            PanelRow(
                "rows: tokens · columns: features 0…d_model−1",
                [panel("X", session.params.X, tokens, feats, query_row=query)],
                "values",
                _levels("values", [session.params.X]),
                "value",
            )
        )
    elif s.name == "projections":
        specs = [
            ("Q", "W^Q", t.q, kfeat, True),
            ("K", "W^K", t.k, kfeat, False),
            ("V", "W^V", t.v, vfeat, False),
        ]
        for sym, w, arr, cols, is_query in specs:
            panels = []
            for i in heads:
                g = c.kv_group(i) if sym != "Q" else i
                title = f"head {i} · {sym}{sub(g)}"
                panels.append(
                    panel(title, arr[g], tokens, cols, i, query_row=query if is_query else None)
                )
            idx = "i" if sym == "Q" or not gqa else "g"
            wsym = w.replace("^", f"_{idx}^")
            shared = f"   ·   {_sharing(c, sym)}" if gqa and sym != "Q" else ""
            rows.append(
                PanelRow(
                    f"{sym}_{idx} = X {wsym}   ·   rows: {'query' if is_query else 'key'} tokens"
                    + shared,
                    panels,
                    "values",
                    _levels("values", [p.matrix for p in panels]),
                    "value",
                )
            )
    elif s.name in ("scores", "weights"):
        sym = "S" if s.name == "scores" else "A"
        arr = t.scores if s.name == "scores" else t.weights
        blocked = t.mask if t.mask.any() else None
        legend_blocked = blocked is not None
        panels = [
            panel(
                f"head {i} · {sym}{sub(i)}",
                arr[i],
                tokens,
                tokens,
                i,
                blocked=blocked,
                query_row=query,
            )
            for i in heads
        ]
        kind = "weights" if s.name == "weights" else "values"
        rows.append(
            PanelRow(
                "rows: queries · columns: keys"
                + (" · each row sums to 1" if s.name == "weights" else ""),
                panels,
                kind,
                _levels(kind, [p.matrix for p in panels]),
                "weight" if kind == "weights" else "score",
            )
        )
    elif s.name == "mixing":
        panels = [
            panel(f"head {i} · Z{sub(i)}", t.heads[i], tokens, vfeat, i, query_row=query)
            for i in heads
        ]
        rows.append(
            PanelRow(
                "rows: queries · columns: value features",
                panels,
                "values",
                _levels("values", [p.matrix for p in panels]),
                "value",
            )
        )
    elif s.name == "concat":
        cols = [str(j) for _ in range(c.h) for j in range(c.d_v)]
        blocks = [(i * c.d_v, (i + 1) * c.d_v, i) for i in range(c.h)]
        p = Panel(
            "H",
            np.asarray(t.concat, float),
            tokens,
            cols,
            None,
            False,
            query_row=query,
            col_blocks=blocks,
            marked_block=marked_head,
        )
        rows.append(
            PanelRow(
                "column blocks Z_0 | Z_1 | … (head 0 first)   ·   rows: tokens",
                [p],
                "values",
                _levels("values", [t.concat]),
                "value",
            )
        )
    elif s.name == "output":
        rows.append(
            PanelRow(
                "output · rows: tokens · columns: features",
                [panel("Y", t.output, tokens, feats, query_row=query)],
                "values",
                _levels("values", [t.output]),
                "value",
            )
        )
        contrib = t.contributions
        panels = [
            panel(f"head {i} · Z{sub(i)} W_O[{i}]", contrib[i], tokens, feats, i, query_row=query)
            for i in heads
        ]
        rows.append(
            PanelRow(
                "per-head contributions: Y = Σ_i Z_i W_O[i]" + (" + b_O" if c.bias else ""),
                panels,
                "values",
                _levels("values", [p.matrix for p in panels]),
                "value",
            )
        )
    parts = [
        f"n={c.n} {_noun(c.n, 'token')}",
        f"d_model={c.d_model}",
        f"h={c.h} {_noun(c.h, 'head')}"
        + (f" ({c.variant}, {c.h_kv} K/V)" if c.variant != "MHA" else ""),
        f"d_k={c.d_k}",
        f"d_v={c.d_v}",
    ]
    if c.causal:
        parts.append("causal mask")
    if head is not None:
        parts.append(f"head {head} only")
    elif c.h > 1:
        parts.append(f"head {marked_head} framed")
    if query is not None:
        parts.append(f"query {query} '{tokens[query]}' outlined")
    return Scene(
        title=f"Stage {s.index} · {s.title}",
        formula=pretty(formula_for(s, c)),
        shapes=pretty(shapes_line(s, c)),
        info=pretty(" · ".join(parts)),
        rows=rows,
        legend_blocked=legend_blocked,
    )


def _sharing(c, sym: str) -> str:
    """Which query heads share each K/V head: `heads 0–3 share K_0, heads 4–7 share K_1`."""
    per = c.h // c.h_kv
    if c.h_kv == 1:
        return f"all {c.h} heads share {sym}_0"
    if c.h_kv > 3:
        return f"each {sym}_g is shared by {per} heads: head i uses g = i // {per}"
    groups = [f"heads {g * per}–{(g + 1) * per - 1} share {sym}_{g}" for g in range(c.h_kv)]
    return ", ".join(groups)


def _noun(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


MINUS = "\u2212"  # typographic minus: every number in a figure uses it, LaTeX keeps "-"


def minus(text: str) -> str:
    """Hyphen-minus before a number → U+2212 ("-2.74" → "−2.74"); hyphens in words stay."""
    return re.sub(r"(?<![\w.])-(?=[\d.∞])", MINUS, text)


def pretty(text: str) -> str:
    """Figure typography for engine text: `1e-05` → `10^{−5}`, `2.5e+06` → `2.5×10^{6}`
    (rich text, see `rich_html`), then typographic minus signs."""

    def power(m: re.Match) -> str:
        mant, sign, digits = m.group(1), m.group(2), m.group(3).lstrip("0") or "0"
        exp = ("−" if sign == "-" else "") + digits
        return f"10^{{{exp}}}" if mant in ("1", "1.0") else f"{mant}×10^{{{exp}}}"

    text = re.sub(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]?)(\d+)(?![\w.])", power, text)
    return minus(text)


@dataclass(frozen=True)
class NumberFormat:
    """How one panel row prints numbers, in its cells and on its colour bar.

    Values are printed divided by 10**exponent (a common factor written once, as
    `factor`, in the row's caption and colour-bar label) so tiny or huge values stay
    short; a non-zero value that still rounds to 0 prints as "≈0", never as "0"."""

    exponent: int
    decimals: int
    tick_decimals: int

    @property
    def factor(self) -> str:
        """Rich text of the common factor, "" when there is none: `×10^{−5}`."""
        return "" if self.exponent == 0 else f"×10^{{{minus(str(self.exponent))}}}"

    def _scaled(self, v: float) -> float:
        return v / 10.0**self.exponent if self.exponent else v

    def cell(self, v: float) -> str:
        if not math.isfinite(v):
            return format_value(v)
        text = format_value(self._scaled(v), self.decimals)
        if text == "0" and v != 0:
            return "≈0"
        return minus(text)

    def tick(self, v: float) -> str:
        return minus(format_value(self._scaled(v), self.tick_decimals))


def number_format(kind: str, levels: tuple[float, float]) -> NumberFormat:
    """Weights: 2 decimals. Signed values: 2 decimals (3 below 1); a peak below 0.01
    or from 10⁴ up is printed as d.dd × 10^k with k shared by the whole row."""
    lo, hi = levels
    peak = max(abs(lo), abs(hi))
    exponent, decimals = 0, 2
    if kind != "weights" and peak > 0:
        mag = math.floor(math.log10(peak))
        if peak < 0.01 or peak >= 1e4:
            exponent = mag
        else:
            decimals = 3 if mag < 0 else 2  # below 1: three places (two if cells are small)
    step = abs(hi - lo) / 4 / 10.0**exponent
    tick_decimals = max(0, min(6, 1 - math.floor(math.log10(step)))) if step > 0 else 2
    return NumberFormat(exponent, decimals, tick_decimals)


# ---------------------------------------------------------------- layout ----------
def ensure_app():
    """A QApplication for fonts and painting; created on demand, offscreen if headless."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication([])
        ensure_app._app = app  # keep a reference for the process lifetime
    return app


def make_font(px: float, bold: bool = False):
    from PySide6.QtGui import QFont

    f = QFont(FONT_FAMILY)
    f.setPixelSize(max(1, int(round(px))))
    f.setBold(bold)
    f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return f


_metrics_cache: dict = {}


def text_width(text: str, px: float, bold: bool = False) -> float:
    from PySide6.QtGui import QFontMetricsF

    key = (int(round(px)), bold)
    fm = _metrics_cache.get(key)
    if fm is None:
        fm = _metrics_cache[key] = QFontMetricsF(make_font(px, bold))
    return fm.horizontalAdvance(text)


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


def _col_label_text(p: Panel, j: int) -> str:
    return p.col_labels[j]


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


def layout_scene(scene: Scene, *, vector: bool = True, header: bool = True) -> Layout:
    """Geometry of every element, in logical units (see module docstring).

    `header=False` leaves out the title block (title, formula, shapes, settings) for a
    page that prints its own header, like the handout."""
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
            avail = MAX_WIDTH - 2 * MARGIN - gutter - bar_area - (cols - 1) * PANEL_GAP
            return min(MAX_CELL, avail / (cols * nc), MAX_PANEL_HEIGHT / nr)

        panel_title_w = max(rich_width(p.title, PANEL_TITLE_PX, True) + 22 for p in row.panels)

        def titles_fit(cols: int, gutter=gutter, title_w=panel_title_w) -> bool:
            avail = MAX_WIDTH - 2 * MARGIN - gutter - bar_area - (cols - 1) * PANEL_GAP
            return cols * title_w <= avail

        # panel titles wider than their heatmaps: more lines rather than overflow
        while ncols > 1 and not titles_fit(ncols):
            ncols = math.ceil(k / (math.ceil(k / ncols) + 1))
        cell = fit(ncols)
        # narrow, tall panels (height-limited): put more per line while cells keep size
        while ncols < k:
            wider = math.ceil(k / (math.ceil(k / ncols) - 1)) if math.ceil(k / ncols) > 1 else k
            if fit(wider) < cell * 0.999 or not titles_fit(wider):
                break
            ncols = wider
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
    width = min(MAX_WIDTH, max(MIN_WIDTH, grid_w + 2 * MARGIN, title_w + 2 * MARGIN))
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


# ---------------------------------------------------------------- painting --------
def _qcolor(c):
    from PySide6.QtGui import QColor

    if isinstance(c, str):
        return QColor(c)
    return QColor(int(c[0]), int(c[1]), int(c[2]))


def rich_html(text: str) -> str:
    """Plain formula text to Qt rich text: `W_i^Q` → W<sub>i</sub><sup>Q</sup>,
    `ℝ^(n×d_model)` → ℝ<sup>n×d<sub>model</sub></sup>, `Z_{h−1}` → Z<sub>h−1</sub>."""

    def scripts(s: str) -> str:
        s = re.sub(r"_\{([^{}]*)\}", r"<sub>\1</sub>", s)
        s = re.sub(r"\^\{([^{}]*)\}", r"<sup>\1</sup>", s)
        s = re.sub(r"_([A-Za-z0-9]+)", r"<sub>\1</sub>", s)
        s = re.sub(r"\^([A-Za-z0-9]+)", r"<sup>\1</sup>", s)
        return s

    out = html.escape(text, quote=False)
    out = re.sub(r"\^\(([^()]*)\)", lambda m: "<sup>" + scripts(m.group(1)) + "</sup>", out)
    return scripts(out)


def _rich_doc(text: str, px: float, color: str, bold: bool = False):
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(make_font(px, bold))
    doc.setHtml(f'<span style="color:{color}; white-space:pre">{rich_html(text)}</span>')
    return doc


def rich_width(text: str, px: float, bold: bool = False) -> float:
    return _rich_doc(text, px, "#000000", bold).idealWidth()


def draw_rich(painter, x: float, y: float, text: str, px: float, color: str, bold=False) -> None:
    doc = _rich_doc(text, px, color, bold)
    painter.save()
    painter.translate(x, y)
    doc.drawContents(painter)
    painter.restore()


def draw_rich_wrapped(
    painter, x: float, y: float, width: float, text: str, px: float, color: str
) -> float:
    """Rich text (`W_O`, `d_model` get their subscripts) wrapped to `width`; returns
    the height used."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(make_font(px))
    doc.setTextWidth(width)
    doc.setHtml(f'<span style="color:{color}">{rich_html(minus(text))}</span>')
    painter.save()
    painter.translate(x, y)
    doc.drawContents(painter)
    painter.restore()
    return doc.size().height()


def _elide(text: str, px: float, width: float, bold: bool = False) -> str:
    if text_width(text, px, bold) <= width:
        return text
    while text and text_width(text + "…", px, bold) > width:
        text = text[:-1]
    return text + "…"


def _tick_values(kind: str, levels: tuple[float, float]) -> list[float]:
    lo, hi = levels
    return [lo + (hi - lo) * f for f in (0.0, 0.25, 0.5, 0.75, 1.0)]


def _matrix_image(p: Panel, levels, lut, pal, upscale: int = 1):
    from PySide6.QtGui import QImage

    rgb = theme.colors_for(p.matrix, levels, lut).astype(np.uint8)
    if p.blocked is not None:
        rgb[p.blocked] = [int(pal.blocked[i : i + 2], 16) for i in (1, 3, 5)]
    if upscale > 1:
        rgb = np.repeat(np.repeat(rgb, upscale, axis=0), upscale, axis=1)
    rgb = np.ascontiguousarray(rgb)
    h, w = rgb.shape[:2]
    img = QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888)
    return img.copy()  # own the pixels


def paint_scene(
    painter, layout: Layout, theme_name: str = "light", colormap: str = theme.DEFAULT_COLORMAP
) -> None:
    """Paint the whole figure in logical units on an already scaled painter.

    `colormap` is one of `theme.COLORMAP_CHOICES` (default blue–white–red)."""
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QBrush, QPen

    pal = theme.palette(theme_name)
    sc = layout.scene
    painter.save()
    painter.setRenderHint(painter.RenderHint.TextAntialiasing, True)
    painter.fillRect(QRectF(0, 0, layout.width, layout.height), _qcolor(pal.background))

    def text(x, y, w, h, s, px, color, bold=False, align=None):
        painter.setFont(make_font(px, bold))
        painter.setPen(_qcolor(color))
        painter.drawText(
            QRectF(x, y, w, h), align if align is not None else (Qt.AlignLeft | Qt.AlignVCenter), s
        )

    # ---- title block: "Stage k · Title   formula", shapes, then the setting
    y = layout.title_y
    inner_w = layout.width - 2 * MARGIN
    if layout.header:
        draw_rich(painter, MARGIN, y, sc.title, TITLE_PX, pal.text, True)
        fx = MARGIN + rich_width(sc.title, TITLE_PX, True) + 28
        draw_rich(painter, fx, y, sc.formula, TITLE_PX, pal.text)
        y += TITLE_PX * 1.5
        draw_rich(painter, MARGIN, y, "shapes:  " + sc.shapes, SHAPES_PX, pal.text)
        y += SHAPES_PX * 1.5
        draw_rich(painter, MARGIN, y, sc.info, INFO_PX, pal.muted)

    for cx, cy, caption in layout.captions:
        draw_rich(painter, cx, cy, caption, CAPTION_PX, pal.muted)

    row_of = {id(p): r for r in sc.rows for p in r.panels}
    for g in layout.panels:
        row = row_of[id(g.panel)]
        _paint_panel(painter, g, row, pal, layout.vector, colormap)

    for b in layout.bars:
        _paint_bar(painter, b, pal, colormap)

    if layout.legend_y is not None:
        sw = 18.0
        x0 = MARGIN
        r = QRectF(x0, layout.legend_y + 4, sw, sw)
        _paint_blocked_cell(painter, r, pal, True)
        text(
            x0 + sw + 8,
            layout.legend_y,
            inner_w,
            sw + 8,
            "blocked by the mask: score −∞, weight 0",
            LABEL_PX,
            pal.text,
        )
    painter.restore()
    del QBrush, QPen, QPointF


def _paint_blocked_cell(painter, r, pal, cross: bool) -> None:
    from PySide6.QtCore import QLineF, Qt
    from PySide6.QtGui import QPen

    painter.fillRect(r, _qcolor(pal.blocked))
    side = min(r.width(), r.height())
    if side < 6:
        return
    painter.save()
    painter.setRenderHint(painter.RenderHint.Antialiasing, True)
    pen = QPen(_qcolor(pal.hatch))
    pen.setWidthF(max(0.6, side * 0.03))
    painter.setPen(pen)
    # three diagonal hatch lines (↗), clipped by construction to the square cell
    x0, y0, s = r.left(), r.top(), side
    for f in (0.25, 0.5, 0.75):
        painter.drawLine(QLineF(x0, y0 + s * f, x0 + s * f, y0))
        painter.drawLine(QLineF(x0 + s * f, y0 + s, x0 + s, y0 + s * f))
    painter.drawLine(QLineF(x0, y0 + s, x0 + s, y0))
    if cross and side >= 14:
        painter.setFont(make_font(min(side * 0.45, 20)))
        painter.setPen(_qcolor(pal.text))
        painter.drawText(r, Qt.AlignCenter, "×")
    painter.restore()


def _paint_panel(
    painter, g: PanelGeom, row: PanelRow, pal, vector: bool, colormap=theme.DEFAULT_COLORMAP
) -> None:
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QPen

    p = g.panel
    nr, nc = p.matrix.shape
    cell = g.cell
    lut = theme.colormap_for(row.kind, colormap)
    levels = row.levels

    # inspected-head frame
    if p.marked and p.head is not None:
        fx, fy, fw, fh = g.frame
        painter.save()
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        pen = QPen(_qcolor(theme.head_color(p.head)))
        pen.setWidthF(3.0)
        painter.setPen(pen)
        painter.setBrush(_qcolor(pal.panel))
        painter.drawRoundedRect(QRectF(fx, fy, fw, fh), 8, 8)
        painter.restore()

    # title with head colour swatch
    tx = g.x
    ty = g.title_y
    if p.head is not None:
        painter.fillRect(QRectF(tx, ty + 5, 12, 12), _qcolor(theme.head_color(p.head)))
        tx += 18
    # rich text, so "W_O[1]" gets its subscript; vertically centred on the swatch
    draw_rich(painter, tx, ty + 1, p.title, PANEL_TITLE_PX, pal.text, True)

    heat = QRectF(g.x, g.y, nc * cell, nr * cell)
    label_font = make_font(g.label_px)

    # column blocks (concat): a strip per head above the column labels
    if p.col_blocks:
        by = g.y - g.col_label_h - 22
        for start, stop, hd in p.col_blocks:
            r = QRectF(g.x + start * cell, by, (stop - start) * cell, 18)
            painter.fillRect(r, _qcolor(theme.head_color(hd)))
            name = f"Z{sub(hd)}"
            if text_width(name, 12, True) < r.width() - 2:
                painter.setFont(make_font(12, True))
                painter.setPen(_qcolor("#ffffff"))
                painter.drawText(r, Qt.AlignCenter, name)

    # column labels
    painter.setFont(label_font)
    painter.setPen(_qcolor(pal.muted))
    for j in range(0, nc, g.col_step):
        s = p.col_labels[j]
        cx = g.x + (j + 0.5) * cell
        if g.col_rotated:
            painter.save()
            painter.translate(QPointF(cx, g.y - 4))
            painter.rotate(-90)
            painter.drawText(
                QRectF(0, -g.label_px * 0.7, g.col_label_h - 6, g.label_px * 1.4),
                Qt.AlignLeft | Qt.AlignVCenter,
                _elide(s, g.label_px, g.col_label_h - 6),
            )
            painter.restore()
        else:
            painter.drawText(
                QRectF(
                    cx - cell * g.col_step / 2,
                    g.y - g.col_label_h,
                    cell * g.col_step,
                    g.col_label_h - 4,
                ),
                Qt.AlignHCenter | Qt.AlignBottom,
                s,
            )

    # row labels
    if g.show_row_labels:
        gutter_w = 150.0
        for i in range(0, nr, g.row_step):
            bold = p.query_row == i
            painter.setFont(make_font(g.label_px, bold))
            painter.setPen(_qcolor(pal.text if bold else pal.muted))
            painter.drawText(
                QRectF(
                    g.x - gutter_w - 8,
                    g.y + i * cell + cell / 2 - g.label_px,
                    gutter_w,
                    g.label_px * 2,
                ),
                Qt.AlignRight | Qt.AlignVCenter,
                _elide(p.row_labels[i], g.label_px, gutter_w),
            )

    # cells
    rgb = theme.colors_for(p.matrix, levels, lut)
    blocked = p.blocked if p.blocked is not None else np.zeros(p.matrix.shape, bool)
    if g.raster:
        device_cell = cell * painter.transform().m11()
        if vector:
            up = max(1, min(8, int(512 // max(nr, nc))))
            img = _matrix_image(p, levels, lut, pal, up)
        else:
            img = _matrix_image(p, levels, lut, pal)
        painter.save()
        painter.setRenderHint(painter.RenderHint.SmoothPixmapTransform, device_cell < 1.0)
        painter.drawImage(heat, img)
        painter.restore()
    else:
        painter.save()
        painter.setRenderHint(painter.RenderHint.Antialiasing, False)
        painter.setPen(Qt.NoPen)
        for i in range(nr):
            for j in range(nc):
                r = QRectF(g.x + j * cell, g.y + i * cell, cell, cell)
                if blocked[i, j]:
                    _paint_blocked_cell(painter, r, pal, g.value_px > 0 or cell >= 14)
                else:
                    painter.fillRect(r, _qcolor(rgb[i, j]))
        painter.restore()
        if cell >= 12:  # thin separators make small matrices read like a table
            painter.save()
            pen = QPen(_qcolor(pal.background))
            pen.setWidthF(1.0)
            painter.setPen(pen)
            for i in range(1, nr):
                yy = g.y + i * cell
                painter.drawLine(QPointF(g.x, yy), QPointF(g.x + nc * cell, yy))
            for j in range(1, nc):
                xx = g.x + j * cell
                painter.drawLine(QPointF(xx, g.y), QPointF(xx, g.y + nr * cell))
            painter.restore()
        if g.value_px > 0:
            fmt = g.fmt or row.fmt
            painter.setFont(make_font(g.value_px))
            for i in range(nr):
                for j in range(nc):
                    if blocked[i, j]:
                        continue
                    r = QRectF(g.x + j * cell, g.y + i * cell, cell, cell)
                    painter.setPen(_qcolor(theme.text_color_on(rgb[i, j])))
                    painter.drawText(r, Qt.AlignCenter, fmt.cell(float(p.matrix[i, j])))

    # column-block separators (concat) and marked block
    if p.col_blocks:
        painter.save()
        pen = QPen(_qcolor(pal.background))
        pen.setWidthF(3.0)
        painter.setPen(pen)
        for start, _stop, _hd in p.col_blocks[1:]:
            xx = g.x + start * cell
            painter.drawLine(QPointF(xx, g.y - g.col_label_h - 22), QPointF(xx, g.y + nr * cell))
        if p.marked_block is not None and len(p.col_blocks) > 1:
            start, stop, hd = p.col_blocks[p.marked_block]
            pen = QPen(_qcolor(theme.head_color(hd)))
            pen.setWidthF(3.0)
            painter.setPen(pen)
            painter.setBrush(Qt.NoBrush)
            painter.drawRect(
                QRectF(
                    g.x + start * cell,
                    g.y - g.col_label_h - 22,
                    (stop - start) * cell,
                    nr * cell + g.col_label_h + 22,
                )
            )
        painter.restore()

    # outline
    painter.save()
    pen = QPen(_qcolor(pal.grid))
    pen.setWidthF(1.0)
    painter.setPen(pen)
    painter.setBrush(Qt.NoBrush)
    painter.drawRect(heat)
    # selected query row
    if p.query_row is not None and 0 <= p.query_row < nr:
        pen = QPen(_qcolor(pal.highlight))
        pen.setWidthF(max(2.0, min(3.5, cell * 0.12)))
        painter.setPen(pen)
        painter.drawRect(
            QRectF(g.x - 1, g.y + p.query_row * cell - 1, nc * cell + 2, max(cell, 2.0) + 2)
        )
    painter.restore()


def _paint_bar(painter, b: BarGeom, pal, colormap=theme.DEFAULT_COLORMAP) -> None:
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QPen

    row = b.row
    lut = theme.colormap_for(row.kind, colormap)
    lo, hi = row.levels
    steps = 64
    h = b.h
    for k in range(steps):
        # top = high values
        v0 = hi - (hi - lo) * (k + 0.5) / steps
        rgb = theme.colors_for(np.array([v0]), row.levels, lut)[0]
        painter.fillRect(QRectF(b.x, b.y + h * k / steps, BAR_WIDTH, h / steps + 0.5), _qcolor(rgb))
    painter.save()
    pen = QPen(_qcolor(pal.grid))
    pen.setWidthF(1.0)
    painter.setPen(pen)
    painter.setBrush(Qt.NoBrush)
    painter.drawRect(QRectF(b.x, b.y, BAR_WIDTH, h))
    painter.setFont(make_font(TICK_PX))
    for v in _tick_values(row.kind, row.levels):
        yy = b.y + h * (hi - v) / (hi - lo)
        painter.setPen(_qcolor(pal.muted))
        painter.drawLine(QPointF(b.x + BAR_WIDTH, yy), QPointF(b.x + BAR_WIDTH + 4, yy))
        painter.setPen(_qcolor(pal.text))
        painter.drawText(
            QRectF(b.x + BAR_WIDTH + 7, yy - TICK_PX, 70, TICK_PX * 2),
            Qt.AlignLeft | Qt.AlignVCenter,
            row.fmt.tick(v),
        )
    draw_rich(painter, b.x, b.y - TICK_PX * 2.7, bar_label(row), TICK_PX, pal.muted, True)
    painter.restore()


# ---------------------------------------------------------------- back ends -------
def figure_layout(
    session: Session,
    stage,
    *,
    head: int | None = None,
    query: int | None = None,
    vector: bool = False,
    trace: Trace | None = None,
) -> Layout:
    ensure_app()
    return layout_scene(
        build_scene(session, stage, head=head, query=query, trace=trace), vector=vector
    )


def render_image(
    session: Session,
    stage,
    *,
    head: int | None = None,
    query: int | None = None,
    width: int | None = None,
    theme_name: str = "light",
    trace: Trace | None = None,
    colormap: str = theme.DEFAULT_COLORMAP,
):
    """The figure as a QImage `width` px wide (default 1600), DPI metadata set."""
    from PySide6.QtGui import QImage, QPainter

    lay = figure_layout(session, stage, head=head, query=query, vector=False, trace=trace)
    w = int(width or DEFAULT_PNG_WIDTH)
    scale = w / lay.width
    h = max(1, int(math.ceil(lay.height * scale)))
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(_qcolor(theme.palette(theme_name).background))
    dpm = int(round(PNG_DPI / 0.0254))
    img.setDotsPerMeterX(dpm)
    img.setDotsPerMeterY(dpm)
    painter = QPainter(img)
    try:
        painter.scale(scale, scale)
        paint_scene(painter, lay, theme_name, colormap)
    finally:
        painter.end()
    return img


def write_png(path, session, stage, **kw) -> None:
    img = render_image(session, stage, **kw)
    if not img.save(str(path), "PNG"):
        raise OSError(f"could not write PNG to {path}")


def write_svg(
    path,
    session: Session,
    stage,
    *,
    head=None,
    query=None,
    width=None,
    theme_name="light",
    trace=None,
    colormap=theme.DEFAULT_COLORMAP,
) -> None:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtSvg import QSvgGenerator

    lay = figure_layout(session, stage, head=head, query=query, vector=True, trace=trace)
    w = float(width or lay.width)
    h = lay.height * w / lay.width
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(QSize(int(round(w)), int(round(h))))
    gen.setViewBox(QRectF(0, 0, lay.width, lay.height))
    gen.setResolution(96)
    gen.setTitle(f"{lay.scene.title}: {lay.scene.formula}")
    gen.setDescription(f"{lay.scene.shapes}\n{lay.scene.info}\nmha-gui")
    _paint_on(gen, "SVG", path, lay, theme_name, colormap)


def _paint_on(device, kind: str, path, lay, theme_name, colormap, scale: float = 1.0) -> None:
    """Paint a laid-out figure on a vector device (SVG generator, PDF writer)."""
    from PySide6.QtGui import QPainter

    painter = QPainter()
    if not painter.begin(device):
        raise OSError(f"could not write {kind} to {path}")
    try:
        painter.scale(scale, scale)
        paint_scene(painter, lay, theme_name, colormap)
    finally:
        painter.end()


def pdf_writer(path, width_pt: float, height_pt: float, title: str):
    from PySide6.QtCore import QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

    writer = QPdfWriter(str(path))
    writer.setResolution(600)
    writer.setCreator("mha-gui")
    writer.setTitle(title)
    size = QPageSize(
        QSizeF(width_pt, height_pt), QPageSize.Unit.Point, "", QPageSize.SizeMatchPolicy.ExactMatch
    )
    # QPageSize keeps a custom size as given; Portrait means "do not swap".
    portrait = QPageLayout.Orientation.Portrait
    writer.setPageLayout(QPageLayout(size, portrait, QMarginsF(0, 0, 0, 0)))
    return writer


def write_pdf(
    path,
    session: Session,
    stage,
    *,
    head=None,
    query=None,
    width=None,
    theme_name="light",
    trace=None,
    colormap=theme.DEFAULT_COLORMAP,
) -> None:
    """One page exactly the figure's size (1 unit = 0.5 pt), all vector."""
    lay = figure_layout(session, stage, head=head, query=query, vector=True, trace=trace)
    wpt, hpt = lay.width * PDF_POINTS_PER_UNIT, lay.height * PDF_POINTS_PER_UNIT
    writer = pdf_writer(path, wpt, hpt, f"{lay.scene.title}: {lay.scene.formula}")
    scale = writer.resolution() / 72.0 * PDF_POINTS_PER_UNIT
    _paint_on(writer, "PDF", path, lay, theme_name, colormap, scale)
