"""The forward pass of multi-head attention, one separable step per teaching stage.

Each step writes into preallocated buffers (`Trace`), so that the GUI can recompute only
what an edit touches and a benchmark sees no page-fault noise from fresh allocations.
`forward()` is the notebook-friendly front door that validates, allocates and runs
every step.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from mha_gui.engine import buffers
from mha_gui.engine import rope as rope_mod
from mha_gui.engine.config import ablate_heads
from mha_gui.engine.rope import RoPE, as_rope
from mha_gui.engine.row_softmax import blas_threads, parallel_rows, softmax_rows
from mha_gui.engine.validation import all_finite_many, validate_inputs


@dataclass
class Trace:
    """Every intermediate of one forward pass, shapes as in DESIGN.md.

    `q` holds the unscaled projections; the scale is folded into the n×d_k operand
    of the score product, never into the h×n×n scores. `contributions` is computed on
    first access: it costs as much as the output projection and most callers never
    read it.

    With RoPE, `q` and `k` stay the projections X W + b and `q_rot`, `k_rot` hold them
    rotated to their positions; the scores use the rotated ones. Without it both are
    None. Query heads listed in `ablate` keep their scores and weights but their Z_i
    (`heads[i]`) is zero, so H, Y and the contributions show what the others give.
    """

    q: np.ndarray  # (h, n, d_k)
    k: np.ndarray  # (h_kv, n, d_k)
    v: np.ndarray  # (h_kv, n, d_v)
    scores: np.ndarray  # (h, n, n), -inf where blocked
    weights: np.ndarray  # (h, n, n)
    heads: np.ndarray  # (h, n, d_v)
    concat: np.ndarray  # (n, h*d_v)
    output: np.ndarray  # (n, d_model)
    mask: np.ndarray  # (n, n) bool, True = blocked (explicit mask OR causal)
    scale: float
    w_o: np.ndarray = field(repr=False)
    q_rot: np.ndarray | None = None  # (h, n, d_k) with RoPE
    k_rot: np.ndarray | None = None  # (h_kv, n, d_k) with RoPE
    rope: RoPE | None = None
    ablate: tuple[int, ...] = ()
    # cos/sin tables (n, d_k) of `rope`, kept for one-head updates and buffer reuse
    rope_tables: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @property
    def q_scores(self) -> np.ndarray:
        """The queries the scores are made of: rotated with RoPE, else the projections."""
        return self.q if self.q_rot is None else self.q_rot

    @property
    def k_scores(self) -> np.ndarray:
        return self.k if self.k_rot is None else self.k_rot

    @cached_property
    def contributions(self) -> np.ndarray:
        """Head i's share of Y: Z_i W_O[i·d_v:(i+1)·d_v, :]; Σ_i contributions + b_O = Y."""
        h, n, d_v = self.heads.shape
        out = buffers.empty((h, n, self.w_o.shape[1]), self.heads.dtype)
        return np.matmul(self.heads, self.w_o.reshape(h, d_v, -1), out=out)

    def invalidate_contributions(self) -> None:
        self.__dict__.pop("contributions", None)

    def as_dict(self) -> dict[str, np.ndarray]:
        """The npz/notebook view: DESIGN.md's keys, plus Q_rot and K_rot with RoPE."""
        rotated = {} if self.q_rot is None else {"Q_rot": self.q_rot, "K_rot": self.k_rot}
        return {
            "Q": self.q,
            "K": self.k,
            **rotated,
            "V": self.v,
            "scores": self.scores,
            "weights": self.weights,
            "heads": self.heads,
            "concat": self.concat,
            "output": self.output,
            "contributions": self.contributions,
            "mask": self.mask,
        }


def blocked_positions(n: int, mask: np.ndarray | None, causal: bool) -> np.ndarray:
    """The n×n boolean matrix of blocked (query, key) pairs: the mask OR the causal mask."""
    blocked = np.zeros((n, n), dtype=bool) if mask is None else np.array(mask, dtype=bool)
    if causal:
        blocked |= np.triu(np.ones((n, n), dtype=bool), k=1)
    return blocked


# ------------------------------------------------------------------- steps --------
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


# Above this many bytes of h×n×n scores every step runs on every core (`run_all_cores`,
# or only the softmax where BLAS's threads cannot be switched off); below, one batched
# call per step costs fewer Python calls.
PARALLEL_ABOVE_BYTES = 1024 * 1024
# Above this, scores and weights together outgrow a typical L3 cache and the softmax goes
# in cache-sized row blocks (n=512, h=12: float64 0.8 ms faster; float32, half the size,
# 0.5 ms slower for the extra Python calls).
STREAM_ABOVE_BYTES = 16 * 1024 * 1024


def concat_step(heads: np.ndarray, out: np.ndarray) -> None:
    """H[:, i·d_v:(i+1)·d_v] = Z_i, head 0 first."""
    h, n, d_v = heads.shape
    out.reshape(n, h, d_v)[...] = heads.transpose(1, 0, 2)


def output_step(concat, w_o, b_o, out) -> None:
    np.matmul(concat, w_o, out=out)
    if b_o is not None:
        out += b_o


# ---------------------------------------------------------- on every core ---------
# The softmax block of `attend_head`. A head's scores come straight from their product
# and are still in the (L3) cache, so smaller blocks only add Python calls: at n=512 a
# whole head (2 MB in float64) in one block ran the attention 10–15 % faster than
# 256 KB blocks. Larger heads still go in blocks of this size.
HEAD_BLOCK_BYTES = 2 * 1024 * 1024


def attend_head(q, k, v, scale: float, blocked, any_blocked: bool, t_out, i: int) -> None:
    """Query head i from its scores to its Z_i, while its n×n block is still in cache.

    The same arithmetic as `scores_step`, the row softmax and `mix_step` for one head,
    but run back to back: the scores go into the trace and straight into the softmax,
    and the weights straight into A·V, each read from the cache instead of memory.
    """
    scores, weights, heads = t_out
    g = i // (q.shape[0] // k.shape[0])
    np.matmul(q[i] * scale, k[g].T, out=scores[i])
    if any_blocked:
        np.putmask(scores[i], blocked, -np.inf)
    softmax_rows(scores[i], weights[i], HEAD_BLOCK_BYTES)
    np.matmul(weights[i], v[g], out=heads[i])


def run_all_cores(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t: Trace) -> None:
    """`run_all` for large layers, as independent jobs shared by every core.

    Call it with BLAS single-threaded (`blas_threads.single()`): each thread then runs
    whole jobs — one head's projection, one head's attention from scores to Z_i, a
    block of output rows — with no BLAS threads spinning beside it. Splitting the work
    this way also needs no packed copy of the weights (each head's X W_i is its own
    product) and keeps each head's n×n scores in cache from the product to A·V.

    One cost remains outside our control: for ~0.1 s after a multi-threaded BLAS call
    elsewhere in the process, OpenBLAS's idle threads still spin and slow these jobs
    (n=512 float64 measured ~50 ms instead of ~39 right after one; the old path, BLAS
    threads plus a threaded softmax, ~45 ms either way). Back-to-back passes never
    wake BLAS's threads and run at full speed.
    """
    projections = [
        (w, b, out, i)
        for w, b, out in zip((w_q, w_k, w_v), (b_q, b_k, b_v), (t.q, t.k, t.v), strict=True)
        for i in range(w.shape[0])
    ]

    def project_one(j: int) -> None:
        w, b, out, i = projections[j]
        project_head(x, w, b, out, i)

    parallel_rows.each(project_one, len(projections))
    if t.rope is not None:
        cos, sin = t.rope_tables
        rotations = [(t.q, t.q_rot, i) for i in range(t.q.shape[0])]
        rotations += [(t.k, t.k_rot, i) for i in range(t.k.shape[0])]

        def rotate_one(j: int) -> None:
            src, dst, i = rotations[j]
            rope_mod.apply(src[i], cos, sin, out=dst[i])

        parallel_rows.each(rotate_one, len(rotations))
    any_blocked = bool(t.mask.any())
    q, k, trace_out = t.q_scores, t.k_scores, (t.scores, t.weights, t.heads)
    parallel_rows.each(
        lambda i: attend_head(q, k, t.v, t.scale, t.mask, any_blocked, trace_out, i),
        t.q.shape[0],
    )
    ablate_step(t.heads, t.ablate)
    concat_step(t.heads, t.concat)
    n = t.output.shape[0]
    parts = min(n, parallel_rows.workers)  # one block of rows each: more cost 10–20 %
    bounds = [round(j * n / parts) for j in range(parts + 1)]

    def output_rows(j: int) -> None:
        r0, r1 = bounds[j], bounds[j + 1]
        output_step(t.concat[r0:r1], w_o, b_o, t.output[r0:r1])

    parallel_rows.each(output_rows, parts)


# --------------------------------------------------------------- front door -------
def allocate_trace(
    n, d_model, h, h_kv, d_k, d_v, dtype, w_o, scale, blocked, rope=None, ablate=()
) -> Trace:
    """Empty buffers for every intermediate (and the rotated Q/K when `rope` is a RoPE)."""
    rotated = rope is not None
    empty = buffers.empty
    return Trace(
        q=empty((h, n, d_k), dtype),
        k=empty((h_kv, n, d_k), dtype),
        v=empty((h_kv, n, d_v), dtype),
        scores=empty((h, n, n), dtype),
        weights=empty((h, n, n), dtype),
        heads=empty((h, n, d_v), dtype),
        concat=empty((n, h * d_v), dtype),
        output=empty((n, d_model), dtype),
        mask=blocked,
        scale=scale,
        w_o=w_o,
        q_rot=empty((h, n, d_k), dtype) if rotated else None,
        k_rot=empty((h_kv, n, d_k), dtype) if rotated else None,
        rope=rope,
        ablate=tuple(ablate),
        rope_tables=rope.tables(n, d_k, dtype) if rotated else None,
    )


def set_switches(t: Trace, rope: RoPE | None, ablate) -> None:
    """Point a trace whose buffers fit at a (possibly different) RoPE and ablation.

    The cos/sin tables are recomputed only when θ, the scaling or the shape changed.
    """
    if rope is not None:
        h, n, d_k = t.q.shape
        if t.q_rot is None:
            t.q_rot = np.empty_like(t.q)
            t.k_rot = np.empty_like(t.k)
        if t.rope != rope or t.rope_tables is None or t.rope_tables[0].shape != (n, d_k):
            t.rope_tables = rope.tables(n, d_k, t.q.dtype)
    else:
        t.q_rot = t.k_rot = t.rope_tables = None
    t.rope = rope
    t.ablate = tuple(ablate)


def _fits(t: Trace, n, d_model, h, h_kv, d_k, d_v, dtype) -> bool:
    return (
        isinstance(t, Trace)
        and t.q.shape == (h, n, d_k)
        and t.v.shape == (h_kv, n, d_v)
        and t.output.shape == (n, d_model)
        and t.q.dtype == dtype
    )


def run_all(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t: Trace) -> Trace:
    """Every step in order into the buffers of `t` (already validated operands)."""
    if t.scores.nbytes > PARALLEL_ABOVE_BYTES and blas_threads.available:
        with blas_threads.single():
            run_all_cores(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t)
        t.w_o = w_o
        t.invalidate_contributions()
        return t
    project_all(x, w_q, w_k, w_v, b_q, b_k, b_v, (t.q, t.k, t.v))
    if t.rope is not None:
        rope_step(t.q, t.rope_tables, t.q_rot)
        rope_step(t.k, t.rope_tables, t.k_rot)
    scores_step(t.q_scores, t.k_scores, t.scale, t.mask, t.scores)
    if t.scores.nbytes > PARALLEL_ABOVE_BYTES:
        h, n, _ = t.scores.shape
        rows = softmax_rows if t.scores.nbytes > STREAM_ABOVE_BYTES else softmax_step
        parallel_rows.run(rows, t.scores.reshape(h * n, n), t.weights.reshape(h * n, n))
    else:
        softmax_step(t.scores, t.weights)
    mix_step(t.weights, t.v, t.heads)
    ablate_step(t.heads, t.ablate)
    concat_step(t.heads, t.concat)
    output_step(t.concat, w_o, b_o, t.output)
    t.w_o = w_o
    t.invalidate_contributions()
    return t


def forward(
    x,
    w_q,
    w_k,
    w_v,
    w_o,
    *,
    b_q=None,
    b_k=None,
    b_v=None,
    b_o=None,
    mask=None,
    causal: bool = False,
    scale: float | None = None,
    rope=None,
    ablate=None,
    out: Trace | None = None,
) -> Trace:
    """Multi-head attention with every intermediate (see DESIGN.md for the equations).

    x (n, d_model); w_q (h, d_model, d_k); w_k (h_kv, d_model, d_k); w_v (h_kv, d_model,
    d_v); w_o (h·d_v, d_model); optional biases; `mask` (n, n) bool with True = blocked;
    `causal` also blocks keys after the query. Query head i reads K/V head i // (h/h_kv).
    A query whose every key is blocked gets all-zero weights. Computes in float32 when
    every operand is float32, float64 otherwise.

    `out=previous_trace` overwrites that trace's arrays instead of allocating new ones
    when shapes and dtype match (a loop over many inputs then avoids page-fault costs);
    the returned trace is then `out` itself, so keep copies of anything you need.

    `rope` rotates Q and K after projection (see `mha_gui.engine.rope`): None/False is
    off, True is θ = 10000, a number is θ, a (θ, scaling) pair adds Llama 3 frequency
    scaling, or pass a `RoPE`. d_k must then be even. `ablate` is an iterable of query
    heads whose Z_i is set to 0 (weights still computed): Y = Σ of the other heads'
    contributions + b_O.
    """
    x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, mask = validate_inputs(
        x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, mask
    )
    operands = [a for a in (x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o) if a is not None]
    dtype = np.result_type(*operands, np.float32)
    if dtype not in (np.float32, np.float64):
        dtype = np.dtype(np.float64)
    x, w_q, w_k, w_v = (a.astype(dtype, copy=False) for a in (x, w_q, w_k, w_v))
    # The trace keeps W_O to compute `contributions` on demand: a private copy, so that a
    # caller who edits their W_O afterwards does not silently change this trace.
    w_o_copy = buffers.empty(w_o.shape, dtype)
    np.copyto(w_o_copy, w_o, casting="unsafe")
    w_o = w_o_copy
    b_q, b_k, b_v, b_o = (
        None if b is None else b.astype(dtype, copy=False) for b in (b_q, b_k, b_v, b_o)
    )
    if scale is None:
        scale = 1.0 / np.sqrt(w_q.shape[2])
    elif (
        isinstance(scale, (bool, np.bool_))
        or not isinstance(scale, numbers.Real)
        or not math.isfinite(scale)
        or scale <= 0
    ):
        raise ValueError(f"scale must be a positive finite number (or None), got {scale!r}")
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    n, d_model = x.shape
    h, _, d_k = w_q.shape
    h_kv, _, d_v = w_v.shape
    rope = as_rope(rope)
    if rope is not None:
        rope_mod.check_head_width(d_k)
    ablate = ablate_heads(ablate, h)
    blocked = blocked_positions(n, mask, causal)
    if out is not None and _fits(out, n, d_model, h, h_kv, d_k, d_v, dtype):
        t = out
        t.mask, t.scale = blocked, float(scale)
        set_switches(t, rope, ablate)
    else:
        t = allocate_trace(
            n, d_model, h, h_kv, d_k, d_v, dtype, w_o, float(scale), blocked, rope, ablate
        )
    with np.errstate(over="ignore", invalid="ignore"):
        run_all(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t)
    _check_no_overflow(t, (x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o))
    return t


def _check_no_overflow(t: Trace, operands) -> None:
    """Finite inputs can still overflow the float type (1e200² in float64, 1e20² in float32).

    A NaN output would be silently wrong, so say which intermediate overflowed instead.
    Any overflow in Q, K, V, the scores or the weights propagates into V or Y, so these
    cheap n×d checks cover the h×n×n arrays too.
    """
    checked = (("Q", t.q), ("K", t.k), ("V", t.v), ("Y", t.output))
    for (label, arr), finite in zip(checked, all_finite_many(a for _, a in checked), strict=True):
        if not finite:
            largest = max(float(np.abs(a).max()) for a in operands if a is not None)
            hint = " or compute in float64" if arr.dtype == np.float32 else ""
            raise ValueError(
                f"the numbers are too large for {arr.dtype.name}: {label} overflows "
                f"(largest input magnitude {largest:.3g}); use smaller values{hint}"
            )
