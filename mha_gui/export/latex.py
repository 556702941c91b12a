"""LaTeX of a stage: its equation and its matrices as amsmath `bmatrix`.

`stage_document()` returns a complete document that compiles with a plain
`pdflatex` (article + amsmath + amssymb). `matrix_bmatrix()` returns one matrix, for
"Copy matrix as LaTeX". Token names go into `%` comments beside each row and above
the columns (a comment cannot break the document, whatever the token holds).
Matrices larger than `MAX_SIDE` rows or columns are elided with \\vdots / \\cdots.
"""

from __future__ import annotations

import math
import unicodedata

import numpy as np

from mha_gui.engine.attention.forward import Trace
from mha_gui.engine.layer.numbers import fixed_format, peak
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stage_panels import PanelView, SessionData, describe_stage
from mha_gui.engine.panels.stages import Stage, shapes_line, stage_by_name

MAX_SIDE = 12
HEAD_KEEP = 9  # shown before the ellipsis; the last row/column is shown after it


def _number(v: float, decimals: int) -> str:
    if not math.isfinite(v):
        return r"-\infty" if v < 0 else (r"\infty" if v > 0 else r"\text{NaN}")
    text = f"{v:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text


def _common_exponent(m: np.ndarray, decimals: int) -> int:
    """The power of ten to pull out of `m`, or 0 when `decimals` places show it well."""
    top = peak(m)
    return fixed_format(top, decimals).exponent if top < 10.0 ** (1 - decimals) else 0


def _keep(n: int, max_side: int) -> list[int | None]:
    if n <= max_side:
        return list(range(n))
    return list(range(HEAD_KEEP)) + [None] + [n - 1]


def _comment(text: str) -> str:
    return " ".join(str(text).split())


def matrix_bmatrix(
    matrix,
    decimals: int = 2,
    row_labels=None,
    col_labels=None,
    max_side: int = MAX_SIDE,
) -> str:
    """One matrix as `\\begin{bmatrix} … \\end{bmatrix}` with `decimals` places.

    When the largest entry would keep fewer than two significant digits at `decimals`
    places (tiny scores, a small custom scale), a common factor is pulled out —
    `10^{-5} \\cdot \\begin{bmatrix} 4.12 …` — so no nonzero entry prints as 0.00.
    """
    m = np.atleast_2d(np.asarray(matrix, dtype=float))
    exponent = _common_exponent(m, decimals)
    if exponent:
        return rf"10^{{{exponent}}} \cdot " + matrix_bmatrix(
            m / 10.0**exponent, decimals, row_labels, col_labels, max_side
        )
    rows, cols = _keep(m.shape[0], max_side), _keep(m.shape[1], max_side)
    lines = [r"\begin{bmatrix}"]
    if col_labels is not None:
        shown = [("…" if j is None else _comment(col_labels[j])) for j in cols]
        lines.append("  % columns: " + ", ".join(shown))
    for k, i in enumerate(rows):
        if i is None:
            cells = [r"\ddots" if j is None else r"\vdots" for j in cols]
        else:
            cells = [r"\cdots" if j is None else _number(float(m[i, j]), decimals) for j in cols]
        line = "  " + " & ".join(cells) + (r" \\" if k < len(rows) - 1 else "")
        if row_labels is not None and i is not None:
            line += f" % {_comment(row_labels[i])}"
        lines.append(line)
    lines.append(r"\end{bmatrix}")
    return "\n".join(lines)


def latex_formula(stage: Stage | int | str, config) -> str:
    """Stage.latex adapted to the config, like stages.formula_for: scale, mask, GQA, bias."""
    s = stage if isinstance(stage, Stage) else stage_by_name(str(stage))
    text = s.latex
    frac = r"\frac{Q_i K_i^\top}{\sqrt{d_k}}"
    if s.name in ("scores", "weights"):
        core = frac
        if config.scale is not None:
            core = rf"{_tex_scalar(config.scale)}\, Q_i K_i^\top"
        if config.causal:
            core = rf"\operatorname{{mask}}\!\left({core}\right)"
        text = text.replace(frac, core)
    if config.rope:  # the scores read the rotated queries and keys
        text = text.replace("Q_i K_i^\\top", r"\tilde{Q}_i \tilde{K}_i^\top")
    if config.variant != "MHA" and s.name in ("projections", "scores", "weights", "mixing"):
        text = text.replace("K_i", "K_g").replace("V_i", "V_g")
        text = text.replace("W_i^K", "W_g^K").replace("W_i^V", "W_g^V")
    if config.bias:
        if s.name == "projections":
            text = r"Q_i = X W_i^Q + b_i^Q,\quad K_i = X W_i^K + b_i^K,\quad V_i = X W_i^V + b_i^V"
            if config.variant != "MHA":
                text = text.replace("K_i", "K_g").replace("V_i", "V_g").replace("W_i^K", "W_g^K")
                text = (
                    text.replace("W_i^V", "W_g^V")
                    .replace("b_i^K", "b_g^K")
                    .replace("b_i^V", "b_g^V")
                )
        if s.name == "output":
            text = r"Y = H W_O + b_O"
    if config.rope and s.name == "projections":
        text += r",\quad \tilde{Q}_i = \operatorname{RoPE}(Q_i),\quad \tilde{K}_i = "
        text += r"\operatorname{RoPE}(K_i)"
    if config.rope and config.variant != "MHA":
        text = text.replace(r"\tilde{K}_i", r"\tilde{K}_g").replace("RoPE}(K_i)", "RoPE}(K_g)")
    return text


def stage_matrices(
    session: Session, stage, *, head: int | None = None, trace: Trace | None = None
) -> list[PanelView]:
    """The stage's panels (stage_panels' description), each matrix once: query heads
    that share a K/V head (GQA/MQA) print K_g and V_g a single time."""
    view = describe_stage(SessionData(session, trace), stage, None if head is None else [head])
    seen: set[str] = set()
    out = []
    for p in view.panels:
        if p.symbol.text not in seen:
            seen.add(p.symbol.text)
            out.append(p)
    return out


def _tex_scalar(value: float) -> str:
    """0.5 → `0.5`; 1e-05 → `1 \\times 10^{-5}` (not `1e-05`, which LaTeX sets as 1e − 05)."""
    text = f"{value:g}"
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}"


def _ascii(ch: str) -> str:
    """A character plain pdflatex can set: accents dropped (ï → i), anything else → ?."""
    if ord(ch) < 128:
        return ch
    base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
    return base or "?"


def _tex_text(text: str) -> str:
    repl = {
        "\\": r"\textbackslash{}",
        "{": r"\{",
        "}": r"\}",
        "$": r"\$",
        "&": r"\&",
        "#": r"\#",
        "%": r"\%",
        "_": r"\_",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
    }
    ascii_only = "".join(_ascii(ch) for ch in str(text))
    return "".join(repl.get(ch, ch) for ch in ascii_only)


def _tex_shapes(stage, config) -> str:
    line = shapes_line(stage, config).replace("×", r"\times ").replace("→", r"\rightarrow")
    return line


def stage_document(
    session: Session,
    stage,
    *,
    head: int | None = None,
    decimals: int = 2,
    trace: Trace | None = None,
) -> str:
    s = stage if isinstance(stage, Stage) else stage_by_name(str(stage))
    c = session.config
    mats = stage_matrices(session, s, head=head, trace=trace)
    toks = list(session.tokens)
    if len(toks) > 24:
        toks = toks[:8] + ["…"] + toks[-2:]
    tokens = ", ".join(r"\ldots" if t == "…" else _tex_text(t) for t in toks)
    lines = [
        "% Generated by mha-gui: " + _comment(f"stage {s.number} ({s.name})"),
        r"\documentclass{article}",
        r"\usepackage{amsmath}",
        r"\usepackage{amssymb}",
        r"\setcounter{MaxMatrixCols}{" + str(MAX_SIDE + 2) + "}",
        r"\begin{document}",
        "",
        rf"\section*{{Stage {s.number} $\cdot$ {_tex_text(s.title)}}}",
        _tex_text(s.what),
        "",
        r"\[",
        latex_formula(s, c),
        r"\]",
        "",
        r"Shapes: $" + _tex_shapes(s, c) + "$.",
        "",
        rf"Tokens (rows): \texttt{{{tokens}}}. "
        + rf"$n={c.n}$, $d_{{\text{{model}}}}={c.d_model}$, $h={c.h}$, $d_k={c.d_k}$, $d_v={c.d_v}$"
        + (r", causal mask" if c.causal else "")
        + ".",
        "",
    ]
    for p in mats:
        lines.append(r"\[")
        lines.append(
            f"{p.symbol.latex} = " + matrix_bmatrix(p.matrix, decimals, p.row_labels, p.col_labels)
        )
        lines.append(r"\]")
        lines.append("")
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"
