"""What every stage shows, described once: its panels, their matrices, names and scale.

The window's heatmaps, the exported figures (PNG/SVG/PDF/GIF), the handout, LaTeX and the
hover texts all read this module, so a teacher sees the same titles, colour levels and
number format on screen and on paper. Adding a stage or a panel kind is one edit here.

A panel is one matrix: its *kind* says what it is — X, Q, K, V (the projections), QR
and KR (Q and K rotated by RoPE, shown only when the config turns RoPE on), S (scaled
scores), A (weights), Z (a head's output), H (concatenation), Y (output) or C (a
head's contribution Z_i W_O[i·d_v:(i+1)·d_v, :] to Y) — and *head* which query head it
belongs to (None for the layer-wide X, H and Y). A stage is a list of rows of panels that
share one colour scale; `plan_for(stage, config)` is that list for one config.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from mha_gui.engine.config import Config
from mha_gui.engine.numbers import NumberFormat, nice_peak, number_format, peak, pretty, sub

# the StageData adapters (stage_data.py), re-exported for callers that import from here
from mha_gui.engine.stage_data import SessionData as SessionData
from mha_gui.engine.stage_data import TraceData as TraceData
from mha_gui.engine.stages import (
    K_ROT,
    Q_ROT,
    STAGES,
    Stage,
    formula_for,
    shapes_line,
    stage_by_name,
)


class StageData(Protocol):
    """What a description reads: the session's numbers and their forward pass."""

    config: Config
    tokens: list[str]

    def matrix(self, name: str) -> np.ndarray: ...  # parameters: "X", "W_O", …
    def trace(self): ...  # an engine Trace
    def contribution(self, head: int) -> np.ndarray: ...


# ------------------------------------------------------------------ symbols -------
@dataclass(frozen=True)
class Symbol:
    """One matrix's name in every notation a consumer needs."""

    text: str  # plain, short: S_1, K_0, C_1 (tooltips, copied matrices, Σ_i C_i)
    pretty: str  # Unicode subscripts for figures: S₁
    html: str  # Qt rich text: S<sub>1</sub>
    latex: str  # amsmath: S_{1}


def symbol(kind: str, head: int | None, config: Config) -> Symbol:
    """The name of panel (kind, head); K and V of query head i are its group's K_g, V_g."""
    if kind not in KINDS:
        raise ValueError(f"unknown matrix kind {kind!r}; choose one of {', '.join(KINDS)}")
    if head is None or KINDS[kind].per is None:
        return Symbol(kind, kind, kind, kind)
    if kind == "C":
        lo, hi = head * config.d_v, (head + 1) * config.d_v
        return Symbol(
            f"C_{head}",
            f"Z{sub(head)} W_O[{lo}:{hi},:]",
            f"Z<sub>{head}</sub>W<sub>O</sub>[{lo}:{hi},:]",
            rf"Z_{{{head}}} W_O[{lo}{{:}}{hi},:]",
        )
    index = config.kv_group(head) if KINDS[kind].per == "group" else head
    letter, tex = ROTATED.get(kind, (kind, kind))
    return Symbol(
        f"{letter}_{index}",
        f"{letter}{sub(index)}",
        f"{letter}<sub>{index}</sub>",
        f"{tex}_{{{index}}}",
    )


# The rotated projections' letters (Unicode with a combining tilde, LaTeX).
ROTATED = {"QR": (Q_ROT, r"\tilde{Q}"), "KR": (K_ROT, r"\tilde{K}")}


# -------------------------------------------------------------------- kinds -------
@dataclass(frozen=True)
class Kind:
    """A panel kind: where its matrix comes from and how its axes are labelled."""

    name: str
    per: str | None  # "head" (query head), "group" (K/V head) or None (whole layer)
    source: Callable[[StageData, int | None], np.ndarray]
    columns: Callable[[Config, list[str]], list[str]]
    query_rows: bool = True  # rows are query tokens: the followed query is outlined
    masked: bool = False  # blocked (query, key) pairs are hatched


def _index(count: int) -> list[str]:
    return [str(j) for j in range(count)]


def _t(attr: str, by: str | None) -> Callable[[StageData, int | None], np.ndarray]:
    def read(data: StageData, head: int | None) -> np.ndarray:
        arr = getattr(data.trace(), attr)
        if by is None:
            return arr
        return arr[data.config.kv_group(head) if by == "group" else head]

    return read


KINDS: dict[str, Kind] = {
    "X": Kind("X", None, lambda d, _h: d.matrix("X"), lambda c, _t: _index(c.d_model)),
    "Q": Kind("Q", "head", _t("q", "head"), lambda c, _t: _index(c.d_k)),
    "K": Kind("K", "group", _t("k", "group"), lambda c, _t: _index(c.d_k), query_rows=False),
    "QR": Kind("QR", "head", _t("q_rot", "head"), lambda c, _t: _index(c.d_k)),
    "KR": Kind("KR", "group", _t("k_rot", "group"), lambda c, _t: _index(c.d_k), query_rows=False),
    "V": Kind("V", "group", _t("v", "group"), lambda c, _t: _index(c.d_v), query_rows=False),
    "S": Kind("S", "head", _t("scores", "head"), lambda _c, t: list(t), masked=True),
    "A": Kind("A", "head", _t("weights", "head"), lambda _c, t: list(t), masked=True),
    "Z": Kind("Z", "head", _t("heads", "head"), lambda c, _t: _index(c.d_v)),
    "H": Kind(
        "H", None, _t("concat", None), lambda c, _t: [str(j % c.d_v) for j in range(c.h * c.d_v)]
    ),
    "Y": Kind("Y", None, _t("output", None), lambda c, _t: _index(c.d_model)),
    "C": Kind("C", "head", lambda d, h: d.contribution(h), lambda c, _t: _index(c.d_model)),
}


# ------------------------------------------------------------------- stages -------
@dataclass(frozen=True)
class RowPlan:
    kind: str
    caption: str  # what the row shows (figures print it under the panels)


@dataclass(frozen=True)
class StagePlan:
    """The rows of panels of one stage, its colour class and its colour-bar label."""

    rows: tuple[RowPlan, ...]
    color: str  # "weights" (0..1, sequential) or "values" (signed, diverging)
    bar_label: str


PLANS: dict[str, StagePlan] = {
    "input": StagePlan(
        (RowPlan("X", "rows: tokens · columns: features 0…d_model−1"),), "values", "X"
    ),
    "projections": StagePlan(
        (
            RowPlan("Q", "Q_i = X W_i^Q · rows: query tokens"),
            RowPlan("K", "K_i = X W_i^K · rows: key tokens"),
            RowPlan("V", "V_i = X W_i^V · rows: key tokens"),
        ),
        "values",
        "Q, K, V",
    ),
    "scores": StagePlan((RowPlan("S", "rows: queries · columns: keys"),), "values", "score"),
    "weights": StagePlan(
        (RowPlan("A", "rows: queries · columns: keys · each row sums to 1"),),
        "weights",
        "weight (0–1)",
    ),
    "mixing": StagePlan((RowPlan("Z", "rows: queries · columns: value features"),), "values", "Z"),
    "concat": StagePlan(
        (RowPlan("H", "column blocks Z_0 | Z_1 | … (head 0 first) · rows: tokens"),), "values", "H"
    ),
    "output": StagePlan(
        (
            RowPlan("Y", "output · rows: tokens · columns: features"),
            RowPlan("C", "per-head contributions C_i = Z_i W_O[i·d_v:(i+1)·d_v, :] · Y = Σ_i C_i"),
        ),
        "values",
        "Y, contributions",
    ),
}
assert set(PLANS) == {s.name for s in STAGES}, "every stage needs a plan"

# With RoPE the projections stage shows Q and K before and after rotation, side by side.
ROPE_ROWS = {
    "Q": RowPlan("QR", "Q̃_i = RoPE(Q_i): row t rotated by position t · rows: query tokens"),
    "K": RowPlan("KR", "K̃_i = RoPE(K_i): row t rotated by position t · rows: key tokens"),
}

LAYER_TITLES = {"X": "input X", "H": "H = Concat(Z₀ … Z_{h−1})", "Y": "output Y"}


def as_stage(stage: Stage | int | str) -> Stage:
    if isinstance(stage, Stage):
        return stage
    if isinstance(stage, int) and not isinstance(stage, bool):
        return STAGES[stage]
    return stage_by_name(str(stage))


def plan_for(stage: Stage | int | str, config: Config) -> StagePlan:
    """The stage's rows for this config: with RoPE on, the projections stage gains the
    rotated Q̃ and K̃ right after Q and K (every consumer reads the rows from here)."""
    plan = PLANS[as_stage(stage).name]
    if not config.rope or as_stage(stage).name != "projections":
        return plan
    rows = []
    for row in plan.rows:
        rows += [row, ROPE_ROWS[row.kind]] if row.kind in ROPE_ROWS else [row]
    return StagePlan(tuple(rows), plan.color, plan.bar_label)


def rope_note(config: Config) -> str:
    """What RoPE's captions add: which features pair up and by how much they turn."""
    scaled = " (llama3-scaled)" if config.rope_scaling else ""
    return (
        f"pairs (j, j+{config.d_k // 2}) turn by t·θ^(−2j/{config.d_k}), "
        f"θ = {config.rope_theta:g}{scaled}"
    )


def panel_keys(stage: Stage | int | str, config: Config) -> list[tuple[str, int]]:
    """Every panel of a stage as (kind, head), head −1 for a layer-wide panel."""
    plan = plan_for(stage, config)
    keys = []
    for row in plan.rows:
        if KINDS[row.kind].per is None:
            keys.append((row.kind, -1))
        else:
            keys += [(row.kind, i) for i in range(config.h)]
    return keys


def caption(stage: Stage | int | str, kind: str, config: Config) -> str:
    """A row's caption adapted to the config (GQA's shared K/V heads, biases)."""
    s = as_stage(stage)
    text = next(r.caption for r in plan_for(s, config).rows if r.kind == kind)
    if kind in ROTATED:
        text += f" · {rope_note(config)}"
    if kind in ("K", "V", "KR") and config.variant != "MHA":
        letter = kind[0]
        text = text.replace(f"{letter}_i", f"{letter}_g").replace("W_i", "W_g")
        text = text.replace(f"{letter}\u0303_i", f"{letter}\u0303_g")
        text += f" · {_sharing(config, symbol(kind, 0, config).text[:-2])}"
    if kind == "C" and config.bias:
        text += " + b_O"
    return text


def _sharing(c: Config, sym: str) -> str:
    """Which query heads share each K/V head: `heads 0–3 share K_0, heads 4–7 share K_1`."""
    per = c.h // c.h_kv
    if c.h_kv == 1:
        return f"all {c.h} heads share {sym}_0"
    if c.h_kv > 3:
        return f"each {sym}_g is shared by {per} heads: head i uses g = i // {per}"
    return ", ".join(f"heads {g * per}–{(g + 1) * per - 1} share {sym}_{g}" for g in range(c.h_kv))


def panel_title(kind: str, head: int | None, config: Config, html: bool = False) -> str:
    """The title over a panel: `head 1 · S₁` (a head's), `output Y` (the layer's)."""
    if head is None or KINDS[kind].per is None:
        return LAYER_TITLES.get(kind, kind)
    sym = symbol(kind, head, config)
    return f"head {head} · {sym.html if html else sym.pretty}"


def stage_levels(stage: Stage | int | str, peaks: Iterable[float]) -> tuple[float, float]:
    """The one colour scale of a stage, shared by all its panels (every head, on screen and
    on paper): 0..1 for weights, else ±nice_peak of the largest finite magnitude."""
    if PLANS[as_stage(stage).name].color == "weights":
        return (0.0, 1.0)
    top = nice_peak(max(peaks, default=0.0))
    return (-top, top)


WEIGHTS_RANGES = {
    "fixed": "weight (0–1)",
    "head": "weight ÷ head's max",
    "row": "weight ÷ row's max",
}


def check_weights_range(name: str) -> str:
    if name not in WEIGHTS_RANGES:
        raise ValueError(
            f"unknown weights range {name!r}; choose one of {', '.join(WEIGHTS_RANGES)}"
        )
    return name


def weights_colours(matrix: np.ndarray, weights_range: str) -> np.ndarray:
    """What the colours of a weights panel show: the weights themselves ("fixed", 0–1),
    or divided by the panel's ("head") or each row's ("row") largest weight — a layer of
    128 tokens whose weights are all near 1/128 is then not a blank panel. The printed
    numbers stay the weights."""
    if check_weights_range(weights_range) == "fixed":
        return matrix
    axis = None if weights_range == "head" else -1
    top = np.max(matrix, axis=axis, keepdims=axis is not None)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(top > 0, matrix / np.where(top > 0, top, 1.0), 0.0)


def bar_label(stage: Stage | int | str, weights_range: str = "fixed") -> str:
    plan = PLANS[as_stage(stage).name]
    return (
        WEIGHTS_RANGES[check_weights_range(weights_range)]
        if plan.color == "weights"
        else plan.bar_label
    )


def stage_format(stage: Stage | int | str, levels: tuple[float, float]) -> NumberFormat:
    return number_format(PLANS[as_stage(stage).name].color, levels)


# -------------------------------------------------------------- descriptions ------
@dataclass
class PanelView:
    """One panel with its numbers, ready to draw."""

    kind: str
    head: int | None
    matrix: np.ndarray
    row_labels: list[str]
    col_labels: list[str]
    symbol: Symbol
    title: str  # Unicode (figures)
    title_html: str  # rich text (the window)
    blocked: np.ndarray | None = None
    query_rows: bool = True
    col_blocks: list[tuple[int, int, int]] = field(default_factory=list)  # H: (start, stop, head)
    colours: np.ndarray | None = None  # what the colours show, when not `matrix` itself

    @property
    def display(self) -> np.ndarray:
        return self.matrix if self.colours is None else self.colours

    @property
    def key(self) -> tuple[str, int]:
        return (self.kind, -1 if self.head is None else self.head)


@dataclass
class RowView:
    kind: str
    caption: str
    panels: list[PanelView]


@dataclass
class StageView:
    """Everything one stage shows: title, formula, shapes, rows of panels, one scale."""

    stage: Stage
    formula: str
    shapes: str
    rows: list[RowView]
    color: str  # "weights" or "values"
    levels: tuple[float, float]
    fmt: NumberFormat
    bar_label: str

    @property
    def title(self) -> str:
        return f"Stage {self.stage.index} · {self.stage.title}"

    @property
    def panels(self) -> list[PanelView]:
        return [p for row in self.rows for p in row.panels]

    @property
    def blocked_shown(self) -> bool:
        return any(p.blocked is not None for p in self.panels)


def make_panel(data: StageData, kind: str, head: int | None) -> PanelView:
    """Panel (kind, head) of the data's current numbers."""
    c, spec = data.config, KINDS[kind]
    head = None if spec.per is None else head
    matrix = spec.source(data, head)
    blocked = None
    if spec.masked:
        mask = data.trace().mask
        blocked = mask if mask is not None and mask.any() else None
    blocks = [(i * c.d_v, (i + 1) * c.d_v, i) for i in range(c.h)] if kind == "H" else []
    return PanelView(
        kind,
        head,
        matrix,
        list(data.tokens),
        spec.columns(c, list(data.tokens)),
        symbol(kind, head, c),
        panel_title(kind, head, c),
        panel_title(kind, head, c, html=True),
        blocked,
        spec.query_rows,
        blocks,
    )


def describe_stage(
    data: StageData,
    stage: Stage | int | str,
    heads: Iterable[int] | None = None,
    weights_range: str = "fixed",
) -> StageView:
    """What `stage` shows for `heads` (default: all). The colour scale always covers every
    head, so one head's figure has the colours that head has in the window.
    `weights_range` picks what the weights' colours show (see `weights_colours`)."""
    s = as_stage(stage)
    c = data.config
    plan = plan_for(s, c)
    shown = list(range(c.h)) if heads is None else list(heads)
    rows, peaks = [], []
    for row in plan.rows:
        layer = KINDS[row.kind].per is None
        everyone = [
            make_panel(data, row.kind, None if layer else i)
            for i in ([None] if layer else range(c.h))
        ]
        peaks += [peak(p.matrix) for p in everyone]
        panels = everyone if layer else [p for p in everyone if p.head in shown]
        if plan.color == "weights" and weights_range != "fixed":
            for p in panels:
                p.colours = weights_colours(p.matrix, weights_range)
        rows.append(RowView(row.kind, caption(s, row.kind, c), panels))
    levels = stage_levels(s, peaks)
    return StageView(
        s,
        pretty(formula_for(s, c)),
        pretty(shapes_line(s, c)),
        rows,
        plan.color,
        levels,
        number_format(plan.color, levels),
        bar_label(s, weights_range),
    )
