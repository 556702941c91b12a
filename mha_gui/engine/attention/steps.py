"""The reference steps of multi-head attention, one per teaching stage, into given buffers.

Each step reads its operands and writes its result into a preallocated array (a Trace's
buffer), for every head at once or — with `heads=` — only for the heads an edit touched,
so that `forward()` and the incremental trace share one implementation of the arithmetic.
Query head i reads key/value head i // (h / h_kv) throughout (GQA; h_kv = 1 is MQA).
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.attention import buffers
from mha_gui.engine.attention import rope as rope_mod


def blocked_positions(n: int, mask: np.ndarray | None, causal: bool) -> np.ndarray:
    """The n×n boolean matrix of blocked (query, key) pairs: the mask OR the causal mask."""
    blocked = np.zeros((n, n), dtype=bool) if mask is None else np.array(mask, dtype=bool)
    if causal:
        blocked |= np.triu(np.ones((n, n), dtype=bool), k=1)
    return blocked


def project(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, out: np.ndarray) -> None:
    """out[i] = x @ w[i] (+ b[i]) for every head, written straight into `out`.

    The textbook packs the heads into one d_model × h·d_k matrix; numerically it is the
    same (a test checks it), but repacking the weights and unpacking the result costs a
    copy of each, which measured 1.1–1.9× slower here than one broadcast matmul.
    """
    np.matmul(x, w, out=out)
    if b is not None:
        out += b[:, None, :]


# Multiply-adds of the three projections below which per-head GEMMs are as fast as one
# packed GEMM (the packing copies are not worth it for a toy layer).
PACK_ABOVE = 1 << 18


def project_all(x, w_q, w_k, w_v, b_q, b_k, b_v, outs) -> None:
    """Q, K and V as one GEMM: X · [W^Q_0 … W^Q_{h-1} | W^K_0 … | W^V_0 …] (+ biases).

    This is the textbook's packed projection. For a real layer one n×d_model×(h·d_k +
    2·h_kv·d) product runs ~20 % faster than 3·h thin per-head products; the copies in
    and out (weights packed side by side, result split back into heads) cost less than
    that. Small layers take the per-head products (fewer calls).
    """
    n, d = x.shape
    ws = (w_q, w_k, w_v)
    widths = [w.shape[0] * w.shape[2] for w in ws]
    total = sum(widths)
    if n * d * total < PACK_ABOVE:
        for w, b, out in zip(ws, (b_q, b_k, b_v), outs, strict=True):
            project(x, w, b, out)
        return
    packed = buffers.empty((d, total), x.dtype)
    col = 0
    for w, width in zip(ws, widths, strict=True):
        block = packed[:, col : col + width].reshape(d, w.shape[0], w.shape[2])
        np.copyto(block, w.transpose(1, 0, 2))
        col += width
    result = buffers.empty((n, total), x.dtype)
    np.matmul(x, packed, out=result)
    col = 0
    for w, b, out, width in zip(ws, (b_q, b_k, b_v), outs, widths, strict=True):
        split = result[:, col : col + width].reshape(n, w.shape[0], w.shape[2])
        np.copyto(out, split.transpose(1, 0, 2))
        if b is not None:
            out += b[:, None, :]
        col += width


def rope_step(x: np.ndarray, tables, out: np.ndarray, heads=None) -> None:
    """out[i] = x[i] rotated to each token's position (Hugging Face's rotate_half form).

    Rotating after the bias is what Hugging Face does (the bias is part of q_proj).
    """
    cos, sin = tables
    if heads is None:
        rope_mod.apply(x, cos, sin, out=out)
        return
    for i in heads:
        rope_mod.apply(x[i], cos, sin, out=out[i])


def ablate_step(heads: np.ndarray, ablate) -> None:
    """Z_i = 0 for every switched-off query head (its weights are left as computed)."""
    if ablate:
        heads[list(ablate)] = 0.0


def project_head(x, w, b, out, i: int) -> None:
    """Recompute one head's projection after an edit that touched only that head."""
    np.matmul(x, w[i], out=out[i])
    if b is not None:
        out[i] += b[i]


def scores_step(q, k, scale: float, blocked: np.ndarray, out: np.ndarray, heads=None) -> None:
    """out[i] = scale · q[i] k[g(i)]ᵀ, blocked entries -inf.

    Query heads that share a K/V head are stacked so each group is one GEMM; the scale
    multiplies the n×d_k query, not the n×n product.
    """
    h, n, d_k = q.shape
    h_kv = k.shape[0]
    group = h // h_kv
    if heads is None:
        qs = buffers.empty(q.shape, q.dtype)  # scaled copy: the n×d_k operand, not n×n
        np.multiply(q, scale, out=qs)
        qs = qs.reshape(h_kv, group * n, d_k)
        np.matmul(qs, k.transpose(0, 2, 1), out=out.reshape(h_kv, group * n, n))
        if blocked.any():
            out[:, blocked] = -np.inf
        return
    for i in heads:
        np.matmul(q[i] * scale, k[i // group].T, out=out[i])
        if blocked.any():
            out[i][blocked] = -np.inf


def softmax_step(scores: np.ndarray, out: np.ndarray, heads=None) -> None:
    """Row softmax in place in `out`, subtracting the row maximum.

    A row whose every key is blocked has no distribution to normalise: its weights are
    all zero (so that query's head output is zero), rather than NaN.
    """
    if heads is not None:
        for i in heads:
            softmax_step(scores[i : i + 1], out[i : i + 1])
        return
    row_max = scores.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(row_max)
    if dead.any():
        row_max[dead] = 0.0
    np.subtract(scores, row_max, out=out)
    np.exp(out, out=out)
    total = out.sum(axis=-1, keepdims=True)
    if dead.any():
        total[dead] = 1.0
    out /= total


def mix_step(weights, v, out, heads=None) -> None:
    """out[i] = weights[i] @ v[g(i)], grouped like `scores_step`."""
    h, n, _ = weights.shape
    h_kv, _, d_v = v.shape
    group = h // h_kv
    if heads is None:
        np.matmul(weights.reshape(h_kv, group * n, n), v, out=out.reshape(h_kv, group * n, d_v))
        return
    for i in heads:
        np.matmul(weights[i], v[i // group], out=out[i])


def concat_step(heads: np.ndarray, out: np.ndarray) -> None:
    """H[:, i·d_v:(i+1)·d_v] = Z_i, head 0 first."""
    h, n, d_v = heads.shape
    out.reshape(n, h, d_v)[...] = heads.transpose(1, 0, 2)


def output_step(concat, w_o, b_o, out) -> None:
    np.matmul(concat, w_o, out=out)
    if b_o is not None:
        out += b_o
