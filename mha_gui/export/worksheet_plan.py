"""Planning printable worksheets (issue 10), Qt-free: which cells are blank, the operands
a student needs, every text a page prints and the answer key.

`plan_worksheets` checks every argument and returns one `Sheet` per student;
export/worksheet.py paints them on A4 pages. Same seed → same cells → same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.attention.rope import inverse_frequencies
from mha_gui.engine.layer.numbers import NumberFormat, fixed_format, minus, num, peak, pretty
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stage_panels import SessionData, as_stage, make_panel
from mha_gui.engine.panels.stages import formula_for
from mha_gui.engine.teaching.exercises import Cell, Exercise, answer_text, make_exercise

MAX_ROWS, MAX_COLS = 24, 16  # larger matrices do not fit a printed page legibly
MAX_STUDENTS = 200
GIVEN_DECIMALS = 3  # operands are printed with up to 3 places (integers stay integers)


@dataclass
class Table:
    """One matrix as it is printed: cell texts, and the numbered boxes of hidden cells."""

    title: str  # rich text: W_0^Q, A_1
    texts: list[list[str]]
    rows: list[str]
    cols: list[str]
    boxes: dict[tuple[int, int], int] = field(default_factory=dict)  # (r, c) → number
    muted: set[tuple[int, int]] = field(default_factory=set)  # blocked cells, greyed


@dataclass
class Sheet:
    """One student's worksheet: what the question page prints and what the key says."""

    number: int  # 1, 2, … (student)
    exercise: Exercise
    title: str
    formula: str
    setting: str
    instruction: str
    given: list[Table]
    fill: list[Table]
    key: list[tuple[str, str]]  # ("1. A_1[2,0] = 0.42", worked explanation)


def plan_worksheets(
    session: Session, stage, blanks: int, seed: int, students: int = 1
) -> list[Sheet]:
    """Check every argument and lay out the worksheets' contents (no Qt).

    Raises ValueError (one sentence) for an unknown stage, blanks < 1 or more than the
    stage's cells, a negative seed, students < 1, or matrices too large to print.
    """
    s = as_stage(stage)
    if isinstance(students, bool) or not isinstance(students, int) or students < 1:
        raise ValueError(f"the number of students must be a whole number ≥ 1, got {students!r}")
    if students > MAX_STUDENTS:
        raise ValueError(f"at most {MAX_STUDENTS} worksheets in one file, got {students}")
    trace = session.run()
    sheets = []
    for k in range(students):
        ex = make_exercise(session, s, blanks, _seed(seed) + k, trace=trace)
        sheets.append(_sheet(session, trace, ex, k + 1))
    return sheets


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"the seed must be a whole number ≥ 0, got {seed!r}")
    return seed


def _sheet(session: Session, trace, ex: Exercise, number: int) -> Sheet:
    c = session.config
    s = ex.stage
    given: dict[str, Table] = {}
    fill: dict[tuple[str, int], list[int]] = {}
    for i, cell in enumerate(ex.cells):
        for title, m, rows, cols in _operands(session, trace, cell):
            mask = trace.mask if title[:2] in ("S_", "A_") else None  # hatch S and A only
            given.setdefault(title, _table(title, m, rows, cols, mask, None))
        fill.setdefault((cell.kind, -1 if cell.head is None else cell.head), []).append(i)
    tables = []
    for (kind, head), indices in fill.items():
        first = ex.cells[indices[0]]
        m, rows, cols = _matrix(session, trace, kind, None if head < 0 else head)
        table = _table(first.symbol, m, rows, cols, trace.mask if kind in ("S", "A") else None, ex)
        table.boxes = {(ex.cells[i].row, ex.cells[i].col): i + 1 for i in indices}
        tables.append(table)
    for t in tables:
        _check_size(t)
    for t in given.values():
        _check_size(t)
    places = ex.fmt.decimals
    factor = f" (in units of 10^{{{ex.fmt.exponent}}})" if ex.fmt.exponent else ""
    instruction = (
        f"Fill in the {len(ex.cells)} numbered boxes{factor}, each to {places} decimal "
        f"places. Given numbers are rounded to {GIVEN_DECIMALS} places."
    )
    key = [
        (f"{i + 1}.  {_rich_power(answer_text(cell, ex.fmt))}", minus(ex.solutions[i]))
        for i, cell in enumerate(ex.cells)
    ]
    return Sheet(
        number,
        ex,
        s.heading,
        pretty(formula_for(s, c)),
        pretty(_setting(session)),
        instruction,
        list(given.values()),
        tables,
        key,
    )


def _rich_power(text: str) -> str:
    """`×10^-5` → rich text `×10^{−5}` (a superscript for the whole exponent)."""
    return minus(re.sub(r"\^(-?\d+)", r"^{\1}", text))


def _setting(session: Session) -> str:
    c = session.config
    scale = f"1/√{c.d_k} = {num(c.effective_scale, 4)}" if c.scale is None else f"{c.scale:g}"
    parts = [
        f"{c.variant}: n={c.n}, d_model={c.d_model}, h={c.h}",
        f"h_kv={c.h_kv}" if c.variant != "MHA" else "",
        f"d_k={c.d_k}, d_v={c.d_v}, scale {scale}",
        "causal mask" if c.causal else "",
        "extra mask" if session.mask is not None and session.mask.any() else "",
        f"RoPE θ={c.rope_theta:g}" if c.rope else "",
        "biases" if c.bias else "",
    ]
    toks = list(session.tokens)
    return "  ·  ".join(p for p in parts if p) + "  ·  tokens: " + " ".join(toks[:16])


def _index(count: int) -> list[str]:
    return [str(j) for j in range(count)]


def _matrix(session: Session, trace, kind: str, head: int | None):
    """(matrix, row labels, column labels) of a result panel: the window's panel
    (stage_panels.make_panel), except that H's columns are numbered 0 … h·d_v − 1 (paper
    has no coloured head bands to tell its blocks apart)."""
    panel = make_panel(SessionData(session, trace), kind, head)
    cols = _index(panel.matrix.shape[1]) if kind == "H" else panel.col_labels
    return panel.matrix, panel.row_labels, cols


def _operands(session: Session, trace, cell: Cell) -> list[tuple[str, np.ndarray, list, list]]:
    """What a student needs to compute `cell`: (title, matrix, row labels, column labels)."""
    c, p, tok = session.config, session.params, list(session.tokens)
    i, kind = cell.head, cell.kind
    g = None if i is None else c.kv_group(i)
    feats = _index(c.d_model)
    x = ("X", p.X, tok, feats)

    def weight(name: str, idx: int, width: int):
        sym = f"W_{idx}^{name[-1]}"
        out = [(sym, getattr(p, name)[idx], feats, _index(width))]
        bias = getattr(p, "b_" + name[-1])
        if bias is not None:
            out.append((f"b_{idx}^{name[-1]}", bias[idx][None, :], [""], _index(width)))
        return out

    if kind == "Q":
        return [x, *weight("W_Q", i, c.d_k)]
    if kind == "K":
        return [x, *weight("W_K", g, c.d_k)]
    if kind == "V":
        return [x, *weight("W_V", g, c.d_v)]
    if kind in ("QR", "KR"):  # RoPE: the projection and each position's angles m·ω_j
        inv = inverse_frequencies(c.d_k, c.rope_theta, c.rope_scaling)
        angles = np.arange(c.n)[:, None] * inv[None, :]
        name, source = (f"Q_{i}", trace.q[i]) if kind == "QR" else (f"K_{g}", trace.k[g])
        pairs = [f"{j},{j + c.d_k // 2}" for j in range(len(inv))]
        return [
            (name, source, tok, _index(c.d_k)),
            ("angle m·ω_j (radians; pair j, j+d_k/2)", angles, tok, pairs),
        ]
    if kind == "S":
        if trace.q_rot is not None:
            return [
                (f"Q_{i} after RoPE", trace.q_rot[i], tok, _index(c.d_k)),
                (f"K_{g} after RoPE", trace.k_rot[g], tok, _index(c.d_k)),
            ]
        return [
            (f"Q_{i}", trace.q[i], tok, _index(c.d_k)),
            (f"K_{g}", trace.k[g], tok, _index(c.d_k)),
        ]
    if kind == "A":
        return [(f"S_{i}", trace.scores[i], tok, tok)]
    if kind == "Z":
        return [(f"A_{i}", trace.weights[i], tok, tok), (f"V_{g}", trace.v[g], tok, _index(c.d_v))]
    if kind == "H":
        j = cell.col // c.d_v
        return [(f"Z_{j}", trace.heads[j], tok, _index(c.d_v))]
    w_o = ("W_O", p.W_O, _index(c.h * c.d_v), feats)
    if kind == "Y":
        h = ("H", trace.concat, tok, _index(c.h * c.d_v))
        bias = [] if p.b_O is None else [("b_O", p.b_O[None, :], [""], feats)]
        return [h, w_o, *bias]
    if kind == "C":
        lo, hi = i * c.d_v, (i + 1) * c.d_v
        rows = [str(r) for r in range(lo, hi)]
        return [
            (f"Z_{i}", trace.heads[i], tok, _index(c.d_v)),
            (f"W_O[{lo}:{hi},:]", p.W_O[lo:hi], rows, feats),
        ]
    return []  # X: nothing to compute from


def _table(title, m, rows, cols, mask, ex: Exercise | None) -> Table:
    """Cell texts: results in the stage's format (as the window prints them), operands
    with GIVEN_DECIMALS places — tiny or huge ones with a common ×10^k in the title."""
    square = mask is not None and m.shape == mask.shape
    fmt = ex.fmt if ex is not None else _given_format(title, m)
    if ex is None and fmt.exponent:
        title += f"  (×10^{{{minus(str(fmt.exponent))}}})"
    texts = [[fmt.cell(float(v)) for v in row] for row in m]
    muted = {(r, c) for r, c in np.argwhere(mask)} if square else set()
    return Table(title, texts, [str(x) for x in rows], [str(x) for x in cols], muted=muted)


def _given_format(title: str, m: np.ndarray) -> NumberFormat:
    kind = "weights" if title.startswith("A_") else "values"
    return fixed_format(peak(m), GIVEN_DECIMALS, kind)


def _check_size(t: Table) -> None:
    r, c = len(t.texts), len(t.texts[0]) if t.texts else 0
    if r > MAX_ROWS or c > MAX_COLS:
        raise ValueError(
            f"{t.title} is {r}×{c}: a worksheet prints matrices up to {MAX_ROWS}×{MAX_COLS}; "
            f"use a smaller layer (fewer tokens or features)"
        )
