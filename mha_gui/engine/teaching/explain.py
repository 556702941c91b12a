"""Where one number of the computation came from, as one line a student can check by hand.

The window's hover tooltips and the query strip use these texts; they are plain strings
built from the trace and the parameters (NumPy only, no Qt), e.g.

    A_1[2,0] = softmax(S_1[2,:])[0] = e^0.707 / Σ_j e^S_1[2,j] = 2.028 / 4.86 = 0.417

Matrix kinds (the `kind` argument): "X", "Q", "K", "V", "S" (scores), "A" (weights),
"Z" (head output), "H" (concat), "Y" (output), "C" (a head's contribution to Y), "QR"
and "KR" (Q and K rotated by RoPE: one pair of coordinates turned by its angle).
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui.engine.attention.trace import Trace
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.numbers import num
from mha_gui.engine.panels.notation import symbol
from mha_gui.engine.panels.panel_kinds import KINDS

# Expand a sum term by term only while it stays readable on one line.
MAX_TERMS = 6


def _factor(value: float, decimals: int = 2) -> str:
    text = num(value, decimals)
    return f"({text})" if text.startswith("-") else text


def token_name(tokens, i: int) -> str:
    """Token i quoted ("cat"), or #i when the layer has no tokens."""
    return f'"{tokens[i]}"' if tokens is not None and 0 <= i < len(tokens) else f"#{i}"


def _terms(a: np.ndarray, b: np.ndarray) -> str:
    """'1·2 + 0·1 + …' for a short dot product, '' when it would be too long."""
    if a.size > MAX_TERMS:
        return ""
    return " + ".join(f"{_factor(x)}·{_factor(y)}" for x, y in zip(a, b, strict=True))


def _dot(lhs: str, rhs: str, a: np.ndarray, b: np.ndarray) -> str:
    expanded = _terms(a, b)
    return f"{lhs}·{rhs}" + (f" = {expanded}" if expanded else "")


def blocked_reason(row: int, col: int, config: Config, tokens=None) -> str:
    if config.causal and col > row:
        return f"key {token_name(tokens, col)} comes after query {token_name(tokens, row)} (causal mask)"
    return (
        f"key {token_name(tokens, col)} is blocked for query {token_name(tokens, row)} by the mask"
    )


def explain_cell(
    kind: str,
    head: int | None,
    row: int,
    col: int,
    *,
    trace: Trace,
    params,
    config: Config,
    tokens=None,
) -> str:
    """One line (sometimes two) saying what `kind`[head][row, col] is and how it was made.

    `params` is a Parameters (or any object with X, W_Q, W_K, W_V, W_O and b_* attributes).
    K and V panels of query head `head` show K/V group `config.kv_group(head)`.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown matrix kind {kind!r}; choose one of {', '.join(KINDS)}")
    t, c = trace, config
    sym = symbol(kind, head, c).text
    cell = f"{sym}[{row},{col}]"
    b = lambda name: getattr(params, name, None)  # noqa: E731

    if kind == "X":
        return (
            f"{cell} = {num(params.X[row, col])}   (token {token_name(tokens, row)}, feature {col})"
        )

    if kind in ("Q", "K", "V"):
        g = head if kind == "Q" else c.kv_group(head)
        w = {"Q": params.W_Q, "K": params.W_K, "V": params.W_V}[kind][g]
        out = {"Q": t.q, "K": t.k, "V": t.v}[kind][g]
        lower = kind.lower()
        text = f"{cell} = " + _dot(f"x_{row}", f"W_{g}^{kind}[:,{col}]", params.X[row], w[:, col])
        bias = b(f"b_{kind}")
        if bias is not None:
            text += f" + b_{g}^{kind}[{col}] ({num(bias[g, col])})"
        text += f" = {num(out[row, col])}"
        role = {"Q": "query", "K": "key", "V": "value"}[kind]
        return f"{text}   ({role} vector {lower}_{row} of token {token_name(tokens, row)})"

    if kind in ("QR", "KR"):
        return _rotation(kind, head, row, col, t, c, tokens, cell)

    if kind == "S":
        value = t.scores[head, row, col]
        pair = f"(query {token_name(tokens, row)} → key {token_name(tokens, col)})"
        if t.mask[row, col]:
            return f"{cell} = −∞   blocked: {blocked_reason(row, col, c, tokens)}"
        g = c.kv_group(head)
        q, k = t.q_scores[head, row], t.k_scores[g, col]  # rotated with RoPE
        dot = float(q @ k)
        scaled = (
            f"/ √{c.d_k} = {num(dot)} / {num(math.sqrt(c.d_k))}"
            if c.scale is None
            else f"· {num(t.scale, 4)} = {num(dot)} · {num(t.scale, 4)}"
        )
        expanded = _terms(q, k)
        tilde = "\u0303" if c.rope else ""  # q̃·k̃: the rotated vectors
        qk = f"q{tilde}_{row}·k{tilde}_{col}"
        first = f"{cell} = {qk} {scaled} = {num(value)}   {pair}"
        return first + (f"\n  {qk} = {expanded} = {num(dot)}" if expanded else "")

    if kind == "A":
        value = t.weights[head, row, col]
        srow = t.scores[head, row]
        head_txt = f"{cell} = softmax(S_{head}[{row},:])[{col}]"
        if t.mask[row, col]:
            return f"{head_txt} = 0   blocked: {blocked_reason(row, col, c, tokens)}"
        finite = srow[np.isfinite(srow)]
        peak = float(finite.max())
        if peak > 30 or finite.min() < -30:  # e^s would overflow: show the shifted form
            e = math.exp(srow[col] - peak)
            total = float(np.exp(finite - peak).sum())
            expo = f"e^({num(srow[col])}−{num(peak)})"
            denom = f"Σ_j e^(S_{head}[{row},j]−max)"
        else:
            e = math.exp(srow[col])
            total = float(np.exp(finite).sum())
            expo = f"e^{_factor(srow[col], 3)}"
            denom = f"Σ_j e^S_{head}[{row},j]"
        return (
            f"{head_txt} = {expo} / {denom} = {num(e)} / {num(total)} = {num(value)}"
            f"   (how much query {token_name(tokens, row)} reads key {token_name(tokens, col)})"
        )

    if kind == "Z":
        g = c.kv_group(head)
        value = t.heads[head, row, col]
        if head in t.ablate:  # its weights are computed, its output is not used
            return (
                f"{cell} = 0   (head {head} is switched off: Z_{head} = 0, whatever "
                f"A_{head}·V_{g} would give; query {token_name(tokens, row)}, output feature {col})"
            )
        text = f"{cell} = Σ_j A_{head}[{row},j]·V_{g}[j,{col}]"
        expanded = _terms(t.weights[head, row], t.v[g, :, col])
        if expanded:
            text += f" = {expanded}"
        return f"{text} = {num(value)}   (query {token_name(tokens, row)}, output feature {col})"

    if kind == "H":
        i, k = divmod(col, c.d_v)
        return (
            f"{cell} = Z_{i}[{row},{k}] = {num(t.concat[row, col])}"
            f"   (head {i}'s block, columns {i * c.d_v}–{(i + 1) * c.d_v - 1})"
        )

    if kind == "C":
        lo, hi = head * c.d_v, (head + 1) * c.d_v
        value = t.contributions[head, row, col]
        text = f"{cell} = " + _dot(
            f"z_{head},{row}", f"W_O[{lo}:{hi},{col}]", t.heads[head, row], params.W_O[lo:hi, col]
        )
        return f"{text} = {num(value)}   (head {head}'s share of Y[{row},{col}])"

    # kind == "Y"
    parts = " + ".join(num(t.contributions[i, row, col]) for i in range(c.h))
    bias = b("b_O")
    if bias is not None:
        parts += f" + b_O[{col}] ({num(bias[col])})"
    first = f"{cell} = h_{row}·W_O[:,{col}] = Σ_i C_i[{row},{col}]"
    if c.h <= 8:
        first += f" = {parts}"
    return f"{first} = {num(t.output[row, col])}   (token {token_name(tokens, row)})"


def _rotation(kind: str, head, t_row: int, col: int, t: Trace, c: Config, tokens, cell: str):
    """RoPE turns the pair (j, j + d_k/2) of position t's vector by the angle t·ω_j:
    first half x_j cos − x_{j+d/2} sin, second half x_j cos + x_{j−d/2} sin."""
    if t.rope is None:
        return f"{cell}: RoPE is off, so Q and K are not rotated (turn RoPE on to see them)"
    g = head if kind == "QR" else c.kv_group(head)
    plain = (t.q if kind == "QR" else t.k)[g, t_row]
    rotated = (t.q_rot if kind == "QR" else t.k_rot)[g, t_row, col]
    name = symbol(kind[0], head, c).text
    half = c.d_k // 2
    j = col % half
    partner = col + half if col < half else col - half
    omega = float(t.rope.inv_freq(c.d_k)[j])
    angle = t_row * omega
    cos, sin = math.cos(angle), math.sin(angle)
    x, y = float(plain[col]), float(plain[partner])
    sign = "−" if col < half else "+"
    role = "query" if kind == "QR" else "key"
    scaled = " (llama3-scaled)" if t.rope.scaling else ""
    return (
        f"{cell} = {name}[{t_row},{col}]·cos α {sign} {name}[{t_row},{partner}]·sin α"
        f" = {_factor(x)}·{_factor(cos, 3)} {sign} {_factor(y)}·{_factor(sin, 3)}"
        f" = {num(rotated)}   ({role} {token_name(tokens, t_row)} at position {t_row})"
        f"\n  α = position · ω_{j} = {t_row} · {num(omega, 4)} = {num(angle, 4)} rad;"
        f"  ω_{j} = θ^(−2·{j}/{c.d_k}) with θ = {t.rope.theta:g}{scaled}:"
        f" pair ({min(col, partner)}, {max(col, partner)}) of {name}[{t_row}] turns by α"
    )
