"""The seven teaching stages, each with every fact about it in one place.

A `Stage` holds what it shows (title, formula, LaTeX, a sentence to read out), its rows
of panels and their colour class (`plan`), its operands and results with their shapes
(`operands`), its cost (`flops`, and how that grows with n: `growth`). The slider, the
stage bar, figure titles, LaTeX export, the statistics panel and `mha-gui info` all
read this table, so a formula is written once and the same shapes appear everywhere.
Adding a stage is one entry in `STAGES` (tests/engine/panels/test_stage_tables.py checks that
every table that reads the stages covers it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mha_gui.engine.layer.config import Config

# RoPE's rotated queries and keys: Q̃, K̃ (a combining tilde over the letter)
Q_ROT, K_ROT = "Q\u0303", "K\u0303"


@dataclass(frozen=True)
class RowPlan:
    kind: str  # a panel kind of engine/panels/panel_kinds.py
    caption: str  # what the row shows (figures print it under the panels)


@dataclass(frozen=True)
class StagePlan:
    """The rows of panels of one stage, its colour class and its colour-bar label."""

    rows: tuple[RowPlan, ...]
    color: str  # "weights" (0..1, sequential) or "values" (signed, diverging)
    bar_label: str


Shape = tuple[str, str]  # ("Q_i", "4×2"): a symbol and its shape


def _x(a: int, b: int) -> str:
    return f"{a}×{b}"


class Operands:
    """The matrices of one config as (symbol, "n×m") pairs, for the stages' operand lists.

    With GQA/MQA the K/V head that query head i reads is written K_g, V_g.
    """

    def __init__(self, config: Config):
        c = self.config = config
        g = "g" if c.variant != "MHA" else "i"
        self.x = ("X", _x(c.n, c.d_model))
        self.w_q = ("W_i^Q", _x(c.d_model, c.d_k))
        self.w_k = (f"W_{g}^K", _x(c.d_model, c.d_k))
        self.w_v = (f"W_{g}^V", _x(c.d_model, c.d_v))
        self.q, self.k = ("Q_i", _x(c.n, c.d_k)), (f"K_{g}", _x(c.n, c.d_k))
        self.v = (f"V_{g}", _x(c.n, c.d_v))
        self.q_rot, self.k_rot = (f"{Q_ROT}_i", self.q[1]), (f"{K_ROT}_{g}", self.k[1])
        self.s, self.a = ("S_i", _x(c.n, c.n)), ("A_i", _x(c.n, c.n))
        self.z, self.zs = ("Z_i", _x(c.n, c.d_v)), (f"{c.h} × Z_i", _x(c.n, c.d_v))
        self.hh = ("H", _x(c.n, c.h * c.d_v))
        self.w_o, self.y = ("W_O", _x(c.h * c.d_v, c.d_model)), ("Y", _x(c.n, c.d_model))

    @property
    def rotated(self) -> list[Shape]:
        """Q̃_i and K̃_g when RoPE is on (the projections stage shows them), else none."""
        return [self.q_rot, self.k_rot] if self.config.rope else []

    @property
    def scored(self) -> list[Shape]:
        """What the scores are made of: the rotated Q̃, K̃ with RoPE, else Q and K."""
        return self.rotated or [self.q, self.k]


@dataclass(frozen=True)
class Stage:
    index: int
    name: str
    title: str
    formula: str  # Unicode, for the window and figure titles
    latex: str  # for .tex export (amsmath)
    what: str  # one sentence a teacher can read out
    plan: StagePlan = field(repr=False)
    # (inputs, results) for one head, each a list of (symbol, "n×m")
    operands: Callable[[Operands], tuple[list[Shape], list[Shape]]] = field(repr=False)
    flops: Callable[[Config], int] = field(repr=False)  # a multiply-add counts as 2
    growth: str = ""  # how the cost grows with the sequence length n ("∝ n²")

    @property
    def number(self) -> int:
        """The stage's number for people: 1 (input) … 7 (output), the same in the window,
        every export, handout, worksheet, exercise and lesson. Session files keep `index`
        (0-based), so the numbering people read never changes a file format."""
        return self.index + 1

    @property
    def heading(self) -> str:
        """ "Stage 4 · Attention weights": how every figure, page and panel names a stage."""
        return f"Stage {self.number} · {self.title}"


def _projection_flops(c: Config) -> int:
    widths = c.h * c.d_k + c.h_kv * (c.d_k + c.d_v)
    return 2 * c.n * c.d_model * widths + (c.n * widths if c.bias else 0)


STAGES: tuple[Stage, ...] = (
    Stage(
        0,
        "input",
        "Input",
        "X ∈ ℝ^(n×d_model)",
        r"X \in \mathbb{R}^{n \times d_{\text{model}}}",
        "Each row of X is one token's vector; every head reads all of it.",
        plan=StagePlan(
            (RowPlan("X", "rows: tokens · columns: features 0…d_model−1"),), "values", "X"
        ),
        operands=lambda o: ([], [o.x]),
        flops=lambda c: 0,
    ),
    Stage(
        1,
        "projections",
        "Projections",
        "Q_i = X W_i^Q,  K_i = X W_i^K,  V_i = X W_i^V",
        r"Q_i = X W_i^Q,\quad K_i = X W_i^K,\quad V_i = X W_i^V",
        "Every head projects the full input with its own three matrices.",
        plan=StagePlan(
            (
                RowPlan("Q", "Q_i = X W_i^Q · rows: query tokens"),
                RowPlan("K", "K_i = X W_i^K · rows: key tokens"),
                RowPlan("V", "V_i = X W_i^V · rows: key tokens"),
            ),
            "values",
            "Q, K, V",
        ),
        operands=lambda o: ([o.x, o.w_q, o.w_k, o.w_v], [o.q, o.k, o.v, *o.rotated]),
        flops=_projection_flops,
        growth="∝ n",
    ),
    Stage(
        2,
        "scores",
        "Scaled scores",
        "S_i = Q_i K_iᵀ / √d_k",
        r"S_i = \frac{Q_i K_i^\top}{\sqrt{d_k}}",
        "Row j compares query j with every key; blocked positions are masked out.",
        plan=StagePlan((RowPlan("S", "rows: queries · columns: keys"),), "values", "score"),
        operands=lambda o: (o.scored, [o.s]),
        # the scale multiplies Q (n×d_k per head), then one product per head
        flops=lambda c: c.h * c.n * c.d_k + 2 * c.h * c.n * c.n * c.d_k,
        growth="∝ n²",
    ),
    Stage(
        3,
        "weights",
        "Attention weights",
        "A_i = softmax(Q_i K_iᵀ / √d_k)",
        r"A_i = \operatorname{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right)",
        "Softmax normalises each row within its head: every row sums to 1.",
        plan=StagePlan(
            (RowPlan("A", "rows: queries · columns: keys · each row sums to 1"),),
            "weights",
            "weight (0–1)",
        ),
        operands=lambda o: ([o.s], [o.a]),
        # max, subtract, exp, sum, divide: about five operations per entry
        flops=lambda c: 5 * c.h * c.n * c.n,
        growth="∝ n²",
    ),
    Stage(
        4,
        "mixing",
        "Value mixing",
        "Z_i = A_i V_i",
        r"Z_i = A_i V_i",
        "Each query's output is a weighted average of this head's value vectors.",
        plan=StagePlan((RowPlan("Z", "rows: queries · columns: value features"),), "values", "Z"),
        operands=lambda o: ([o.a, o.v], [o.z]),
        flops=lambda c: 2 * c.h * c.n * c.n * c.d_v,
        growth="∝ n²",
    ),
    Stage(
        5,
        "concat",
        "Concatenation",
        "H = Concat(Z_0, …, Z_{h−1})",
        r"H = \operatorname{Concat}(Z_0, \ldots, Z_{h-1})",
        "Head outputs are placed side by side, head 0 first.",
        plan=StagePlan(
            (RowPlan("H", "column blocks Z_0 | Z_1 | … (head 0 first) · rows: tokens"),),
            "values",
            "H",
        ),
        operands=lambda o: ([o.zs], [o.hh]),
        flops=lambda c: 0,
    ),
    Stage(
        6,
        "output",
        "Output projection",
        "Y = H W_O",
        r"Y = H W_O",
        "W_O mixes all heads back to d_model; Y is the sum of per-head contributions.",
        plan=StagePlan(
            (
                RowPlan("Y", "output · rows: tokens · columns: features"),
                RowPlan(
                    "C", "per-head contributions C_i = Z_i W_O[i·d_v:(i+1)·d_v, :] · Y = Σ_i C_i"
                ),
            ),
            "values",
            "Y, contributions",
        ),
        operands=lambda o: ([o.hh, o.w_o], [o.y]),
        flops=lambda c: 2 * c.n * c.h * c.d_v * c.d_model + (c.n * c.d_model if c.bias else 0),
        growth="∝ n",
    ),
)
STAGE_NAMES = tuple(s.name for s in STAGES)
PLANS: dict[str, StagePlan] = {s.name: s.plan for s in STAGES}

# With RoPE the projections stage shows Q and K before and after rotation, side by side.
ROPE_ROWS = {
    "Q": RowPlan("QR", "Q̃_i = RoPE(Q_i): row t rotated by position t · rows: query tokens"),
    "K": RowPlan("KR", "K̃_i = RoPE(K_i): row t rotated by position t · rows: key tokens"),
}


def stage_by_name(name: str) -> Stage:
    """Look a stage up by name or number, with a message listing the valid names."""
    key = str(name).strip().lower()
    for stage in STAGES:
        if key in (stage.name, str(stage.index)):
            return stage
    raise ValueError(f"unknown stage {name!r}; choose one of: {', '.join(STAGE_NAMES)}")


def as_stage(stage: Stage | int | str) -> Stage:
    """A Stage, its index or its name (any of which callers hold) as the Stage."""
    return stage if isinstance(stage, Stage) else stage_by_name(str(stage))


def plan_for(stage: Stage | int | str, config: Config) -> StagePlan:
    """The stage's rows for this config: with RoPE on, the projections stage gains the
    rotated Q̃ and K̃ right after Q and K (every consumer reads the rows from here)."""
    s = as_stage(stage)
    if not config.rope or s.name != "projections":
        return s.plan
    rows = []
    for row in s.plan.rows:
        rows += [row, ROPE_ROWS[row.kind]] if row.kind in ROPE_ROWS else [row]
    return StagePlan(tuple(rows), s.plan.color, s.plan.bar_label)


def operand_shapes(
    stage: Stage | int | str, config: Config
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(inputs, results) of one stage for one head, each a list of (symbol, "n×m")."""
    return as_stage(stage).operands(Operands(config))


def formula_for(stage: Stage | int | str, config: Config) -> str:
    """The stage's formula adapted to the config (scale, causal mask, GQA naming)."""
    s = as_stage(stage)
    text = s.formula
    if config.rope and s.name in ("scores", "weights"):  # the scores read the rotated Q, K
        text = text.replace("Q_i K_iᵀ", f"{Q_ROT}_i {K_ROT}_iᵀ")
    if s.name in ("scores", "weights"):
        if config.scale is not None:
            text = text.replace("/ √d_k", f"· {config.scale:g}")
        if config.causal:
            text = text.replace("S_i = ", "S_i = mask(") + (")" if s.name == "scores" else "")
            if s.name == "weights":
                text = text.replace("softmax(", "softmax(mask(").rstrip(")") + "))"
    if config.bias:
        if s.name == "projections":
            text = "Q_i = X W_i^Q + b_i^Q, …"
        if s.name == "output":
            text = "Y = H W_O + b_O"
    if config.rope and s.name == "projections":
        text += f",  {Q_ROT}_i = RoPE(Q_i),  {K_ROT}_i = RoPE(K_i)"
    if config.variant != "MHA" and s.name in ("projections", "scores", "weights", "mixing"):
        text = text.replace("K_i", "K_g").replace("V_i", "V_g").replace("W_i^K", "W_g^K")
        text = text.replace("W_i^V", "W_g^V").replace(f"{K_ROT}_i", f"{K_ROT}_g")
    return text


def _grouped(operands: list[tuple[str, str]]) -> str:
    """ "Q_i, K_i, V_i: 4×2": neighbours of one shape named together (one short line
    under the stage's title)."""
    groups: list[tuple[list[str], str]] = []
    for symbol, shape in operands:
        if groups and groups[-1][1] == shape:
            groups[-1][0].append(symbol)
        else:
            groups.append(([symbol], shape))
    return ", ".join(f"{', '.join(names)}: {shape}" for names, shape in groups)


def shapes_line(stage: Stage | int | str, config: Config) -> str:
    """`Q_i, K_i: 4×2 → S_i: 4×4`: operands, then the results after an arrow."""
    inputs, results = operand_shapes(stage, config)
    right = _grouped(results)
    if not inputs:
        return right
    return _grouped(inputs) + " → " + right
