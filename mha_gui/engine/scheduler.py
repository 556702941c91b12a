"""Which order and which cores run the steps of one forward pass, by the layer's size.

`run_all` is the one entry point (forward() and the incremental trace's full recompute
call it): small layers take one batched call per step; above `PARALLEL_ABOVE_BYTES` of
scores every head becomes its own job on every core (`run_all_cores`, with BLAS
single-threaded), or — where OpenBLAS's threads cannot be switched off — only the
softmax is shared out in row blocks. The arithmetic itself is engine/steps.py's.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine import rope as rope_mod
from mha_gui.engine.row_softmax import blas_threads, parallel_rows, softmax_rows
from mha_gui.engine.steps import (
    ablate_step,
    concat_step,
    mix_step,
    output_step,
    project_all,
    project_head,
    rope_step,
    scores_step,
    softmax_step,
)
from mha_gui.engine.trace import Trace

# Above this many bytes of h×n×n scores every step runs on every core (`run_all_cores`,
# or only the softmax where BLAS's threads cannot be switched off); below, one batched
# call per step costs fewer Python calls.
PARALLEL_ABOVE_BYTES = 1024 * 1024
# Above this, scores and weights together outgrow a typical L3 cache and the softmax goes
# in cache-sized row blocks (n=512, h=12: float64 0.8 ms faster; float32, half the size,
# 0.5 ms slower for the extra Python calls).
STREAM_ABOVE_BYTES = 16 * 1024 * 1024


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
