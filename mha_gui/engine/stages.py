"""The seven teaching stages: what each one shows, its formula and its operand shapes.

The slider, the stage bar, figure titles, LaTeX export and `mha-gui info` all read this
table, so a formula is written once and the same shapes appear everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha_gui.engine.config import Config


@dataclass(frozen=True)
class Stage:
    index: int
    name: str
    title: str
    formula: str  # Unicode, for the window and figure titles
    latex: str  # for .tex export (amsmath)
    what: str  # one sentence a teacher can read out


STAGES: tuple[Stage, ...] = (
    Stage(
        0,
        "input",
        "Input",
        "X ∈ ℝ^(n×d_model)",
        r"X \in \mathbb{R}^{n \times d_{\text{model}}}",
        "Each row of X is one token's vector; every head reads all of it.",
    ),
    Stage(
        1,
        "projections",
        "Projections",
        "Q_i = X W_i^Q,  K_i = X W_i^K,  V_i = X W_i^V",
        r"Q_i = X W_i^Q,\quad K_i = X W_i^K,\quad V_i = X W_i^V",
        "Every head projects the full input with its own three matrices.",
    ),
    Stage(
        2,
        "scores",
        "Scaled scores",
        "S_i = Q_i K_iᵀ / √d_k",
        r"S_i = \frac{Q_i K_i^\top}{\sqrt{d_k}}",
        "Row j compares query j with every key; blocked positions are masked out.",
    ),
    Stage(
        3,
        "weights",
        "Attention weights",
        "A_i = softmax(Q_i K_iᵀ / √d_k)",
        r"A_i = \operatorname{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right)",
        "Softmax normalises each row within its head: every row sums to 1.",
    ),
    Stage(
        4,
        "mixing",
        "Value mixing",
        "Z_i = A_i V_i",
        r"Z_i = A_i V_i",
        "Each query's output is a weighted average of this head's value vectors.",
    ),
    Stage(
        5,
        "concat",
        "Concatenation",
        "H = Concat(Z_0, …, Z_{h−1})",
        r"H = \operatorname{Concat}(Z_0, \ldots, Z_{h-1})",
        "Head outputs are placed side by side, head 0 first.",
    ),
    Stage(
        6,
        "output",
        "Output projection",
        "Y = H W_O",
        r"Y = H W_O",
        "W_O mixes all heads back to d_model; Y is the sum of per-head contributions.",
    ),
)
STAGE_NAMES = tuple(s.name for s in STAGES)


def stage_by_name(name: str) -> Stage:
    """Look a stage up by name or number, with a message listing the valid names."""
    key = str(name).strip().lower()
    for stage in STAGES:
        if key in (stage.name, str(stage.index)):
            return stage
    raise ValueError(f"unknown stage {name!r}; choose one of: {', '.join(STAGE_NAMES)}")


def _x(a: int, b: int) -> str:
    return f"{a}×{b}"


def operand_shapes(
    stage: Stage | int | str, config: Config
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(inputs, results) of one stage for one head, each a list of (symbol, "n×m").

    With GQA/MQA the K/V head that query head i reads is written K_g, V_g.
    """
    s = stage if isinstance(stage, Stage) else stage_by_name(str(stage))
    c = config
    g = "g" if c.variant != "MHA" else "i"
    q, k, v = ("Q_i", _x(c.n, c.d_k)), (f"K_{g}", _x(c.n, c.d_k)), (f"V_{g}", _x(c.n, c.d_v))
    x = ("X", _x(c.n, c.d_model))
    scores, weights = ("S_i", _x(c.n, c.n)), ("A_i", _x(c.n, c.n))
    z, hh = ("Z_i", _x(c.n, c.d_v)), ("H", _x(c.n, c.h * c.d_v))
    table = {
        "input": ([], [x]),
        "projections": (
            [
                x,
                ("W_i^Q", _x(c.d_model, c.d_k)),
                (f"W_{g}^K", _x(c.d_model, c.d_k)),
                (f"W_{g}^V", _x(c.d_model, c.d_v)),
            ],
            [q, k, v] + ([(f"{Q_ROT}_i", q[1]), (f"{K_ROT}_{g}", k[1])] if c.rope else []),
        ),
        "scores": (
            [q, k] if not c.rope else [(f"{Q_ROT}_i", q[1]), (f"{K_ROT}_{g}", k[1])],
            [scores],
        ),
        "weights": ([scores], [weights]),
        "mixing": ([weights, v], [z]),
        "concat": ([(f"{c.h} × Z_i", _x(c.n, c.d_v))], [hh]),
        "output": ([hh, ("W_O", _x(c.h * c.d_v, c.d_model))], [("Y", _x(c.n, c.d_model))]),
    }
    return table[s.name]


# RoPE's rotated queries and keys: Q̃, K̃ (a combining tilde over the letter)
Q_ROT, K_ROT = "Q\u0303", "K\u0303"


def formula_for(stage: Stage | int | str, config: Config) -> str:
    """The stage's formula adapted to the config (scale, causal mask, GQA naming)."""
    s = stage if isinstance(stage, Stage) else stage_by_name(str(stage))
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


def shapes_line(stage: Stage | int | str, config: Config) -> str:
    """`Q_i: 4×2, K_i: 4×2 → S_i: 4×4`: operands, then the results after an arrow."""
    inputs, results = operand_shapes(stage, config)
    right = ", ".join(f"{a}: {b}" for a, b in results)
    if not inputs:
        return right
    return ", ".join(f"{a}: {b}" for a, b in inputs) + " → " + right
