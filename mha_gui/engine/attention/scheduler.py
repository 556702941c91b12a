"""Which order and which cores run the steps of one forward pass, by the layer's size.

`run_all` is the one entry point (forward() and the incremental trace's full recompute
call it). Small layers take one batched call per step (engine/attention/steps.py). Above
`JOBS_ABOVE_FLOPS` the pass is one list of jobs shared by every core with BLAS
single-threaded (`run_jobs`): blocks of heads projected by one GEMM each, a few heads'
attention from scores to Z_i, one block of the output per core. Where OpenBLAS's threads
cannot be switched off, the batched steps run with BLAS's threads and only the softmax is
shared out in row blocks.

`run_all` also says whether Q, K, V and Y are all finite: the jobs check each block
while it is still in cache, which is what lets forward() skip a pass over its operands
(a NaN or ±inf in any operand reaches one of them: see forward.py).
"""

from __future__ import annotations

import threading

import numpy as np

from mha_gui.engine.attention import rope as rope_mod
from mha_gui.engine.attention.row_softmax import blas_threads, parallel_rows, softmax_rows
from mha_gui.engine.attention.steps import (
    ablate_step,
    concat_step,
    mix_step,
    output_step,
    project_all,
    rope_step,
    scores_step,
    softmax_step,
)
from mha_gui.engine.attention.trace import Trace
from mha_gui.engine.attention.validation import all_finite, all_finite_many

# Multiply-adds of the matrix products above which the pass runs as jobs on every core
# (d_model 768, 12 heads: n = 128 ~0.33 G, n = 256 ~0.70 G, n = 384 ~1.13 G, n = 512
# ~1.61 G). Below, a handful of batched calls on BLAS's own threads cost less: measured
# after 0.3 s of idle, as the window calls the engine, the jobs' second thread added
# nothing at n = 128 (two workers 1.62–2.19× the GEMM floor, one worker 1.87–2.23×,
# the batched calls 1.45–1.59×; float32 1.77–2.15× against 1.48–1.92×) — waking our
# pool thread and handing it the interpreter lock costs what its share saves, where
# BLAS's threads wake in C — and n = 256 float32 was 2.32× against 1.54×; from n = 384
# float64 on the jobs win (1.26× against 1.40×; n = 512 0.85–1.28× against 1.30–1.87×).
JOBS_ABOVE_FLOPS = 1_000_000_000
# Above this many bytes of h×n×n scores, the batched path's softmax (used only where BLAS
# cannot be made single-threaded) goes in row blocks on every core; above
# STREAM_ABOVE_BYTES in cache-sized blocks.
PARALLEL_ABOVE_BYTES = 1024 * 1024
STREAM_ABOVE_BYTES = 16 * 1024 * 1024
# Each projection job copies its heads' weights side by side into one matrix of about
# BLOCK_COLUMNS columns for one GEMM: BLAS then packs X once per job instead of once per
# head. Measured here (one core, relative to the floor's pre-packed GEMMs, 12 heads of
# 64): n = 512 per-head GEMMs 1.3–1.6×, blocks of 6 heads 1.1–1.25×; n = 128 float64
# per-head 1.45–1.6×, blocks 1.3–1.4×. Only float32 layers of at most
# PACK_ROWS_PER_D_K · d_k rows multiply per head (n = 128: 1.0× per head, 1.2× packed).
PACK_ROWS_PER_D_K = 3
BLOCK_COLUMNS = 1152
# Scores per attention job, at most (a few small heads share a job, fewer Python calls);
# a head taller than ATTEND_ROWS (n = 2048) is split into jobs of that many rows.
ATTEND_BYTES = 1 << 20
ATTEND_ROWS = 1024
# The last attention jobs are halved if they keep at least this many rows each.
TAIL_ROWS = 64
# Output rows or columns per job, at least (thinner GEMMs lose efficiency).
OUTPUT_SPLIT = 128
# A row of exp(scores) whose sum lies outside [1/SUM_RANGE, SUM_RANGE] (or is not
# finite) is redone by the max-subtracting softmax (see `attend`). The exact softmax's
# sums lie in [1, n]; within this range the products E·V keep their precision unless
# |V| itself is within SUM_RANGE of the float's limits (float64 1e±308, float32 1e±38),
# and an overflow there is caught too.
SUM_RANGE = {np.dtype(np.float64): 1e200, np.dtype(np.float32): 1e15}


def run_all(
    x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t: Trace, keep_w_o=None, project: bool = True
) -> bool:
    """Every step in order into the buffers of `t` (already validated operands).

    `keep_w_o`, if given, is an array W_O is copied into for the trace to keep (forward()
    keeps a private copy for `contributions`); otherwise the trace refers to `w_o`.
    `project=False`: Q, K, V (and, with RoPE, their rotations) are in `t` already (the
    incremental trace redid the rows an edit of X changed): the pass starts at the scores.
    Returns whether Q, K, V and Y are all finite.
    """
    t.invalidate_contributions()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if blas_threads.available and flops(t) > JOBS_ABOVE_FLOPS:
            with blas_threads.single():
                finite = run_jobs(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t, keep_w_o, project)
        else:
            if keep_w_o is not None:
                np.copyto(keep_w_o, w_o, casting="unsafe")
            _run_batched(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t, project)
            finite = all(all_finite_many((t.q, t.k, t.v, t.output)))
    t.w_o = w_o if keep_w_o is None else keep_w_o
    return finite


def flops(t: Trace) -> int:
    """Multiply-adds of the pass's matrix products (projections, scores, A·V, output)."""
    h, n, d_k = t.q.shape
    h_kv, _, d_v = t.v.shape
    d_model = t.output.shape[1]
    projections = n * d_model * (h * d_k + h_kv * (d_k + d_v)) + n * h * d_v * d_model
    return projections + h * n * n * (d_k + d_v)


def _run_batched(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t: Trace, project=True) -> None:
    if project:
        project_all(x, w_q, w_k, w_v, b_q, b_k, b_v, (t.q, t.k, t.v))
    if project and t.rope is not None:
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


class _Aborted(Exception):
    """Another job of the same pass failed: stop waiting for its results."""


class _Pass:
    """The jobs of one pass and what they wait for.

    Jobs are taken strictly in list order by whichever thread is free (`parallel_rows`),
    so a job's inputs — produced by earlier jobs — have always been taken already: a wait
    is only ever for a job running on another thread, never for one not yet started.
    If a job fails, every waiter is released and the pass ends with that error.
    """

    def __init__(self, groups: int, attention_jobs: int) -> None:
        self.projected = [threading.Event() for _ in range(groups)]  # per K/V group
        self.attended = threading.Event()
        self._left = attention_jobs
        self._lock = threading.Lock()
        self.failed = False
        self.finite = True

    def wait(self, event: threading.Event) -> None:
        event.wait()
        if self.failed:
            raise _Aborted

    def attention_done(self) -> None:
        with self._lock:
            self._left -= 1
            if self._left == 0:
                self.attended.set()

    def fail(self) -> None:
        self.failed = True
        for event in (*self.projected, self.attended):
            event.set()


def run_jobs(
    x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t: Trace, keep_w_o=None, project: bool = True
) -> bool:
    """`run_all` for real layers, as one list of jobs shared by every core.

    Call it with BLAS single-threaded (`blas_threads.single()`): each thread runs whole
    jobs — no BLAS threads spin beside them, and no thread waits at a step's end for the
    slowest, since a job waits only for the jobs whose results it reads. Jobs:

    1. projections of a few K/V groups and their query heads (+ biases, RoPE), each
       result checked for finiteness while in cache;
    2. attention of a few query heads (or a block of a tall head's rows), from scores to
       Z_i and its columns of H, once its heads are projected (`attend`);
    3. the copy of W_O the trace keeps (`keep_w_o`), which a thread done with its last
       attention job takes while the other finishes theirs;
    4. one block of the output H W_O + b_O per core, once every head is done: blocks of
       columns when n < d_model (each job packs the smaller H again), else of rows.
    """
    h, n, d_k = t.q.shape
    h_kv = t.k.shape[0]
    group = h // h_kv
    parallel_rows.setup()
    workers = parallel_rows.workers
    rows = n if n <= ATTEND_ROWS else ATTEND_ROWS
    attention = [
        (heads, r0, min(n, r0 + rows))
        for heads in _head_blocks(h, group, rows * n * t.scores.itemsize, workers)
        for r0 in range(0, n, rows)
    ]
    attention = _split_tail(attention, workers)
    run_ = _Pass(h_kv, len(attention))
    packed = t.q.dtype == np.float64 or n > PACK_ROWS_PER_D_K * d_k
    projected = project
    project = _project_packed if packed else _project_heads
    jobs = [
        lambda gs=gs: project(x, w_q, w_k, w_v, b_q, b_k, b_v, t, gs, group, run_)
        for gs in _group_blocks(t, packed)
    ]
    if not projected:  # Q, K, V are in the trace already
        jobs = []
        for event in run_.projected:
            event.set()
    blocked = t.mask if t.mask.any() else None
    ablate = set(t.ablate)

    def attend_job(heads: range, r0: int, r1: int) -> None:
        for g in range(heads.start // group, (heads.stop - 1) // group + 1):
            run_.wait(run_.projected[g])
        attend(t, heads, r0, r1, blocked, ablate)
        run_.attention_done()

    jobs += [lambda a=a: attend_job(*a) for a in attention]
    if keep_w_o is not None:
        jobs.append(lambda: np.copyto(keep_w_o, w_o, casting="unsafe"))
    d_model = w_o.shape[1]
    by_rows = n >= d_model  # split the larger side: the other operand is packed per job
    side = n if by_rows else d_model
    out_parts = max(1, min(workers, side // OUTPUT_SPLIT))
    bounds = [round(j * side / out_parts) for j in range(out_parts + 1)]

    def output_job(j: int) -> None:
        run_.wait(run_.attended)
        part = slice(bounds[j], bounds[j + 1])
        if by_rows:
            y = t.output[part]
            np.matmul(t.concat[part], w_o, out=y)
            if b_o is not None:
                y += b_o
        else:
            y = t.output[:, part]
            np.matmul(t.concat, w_o[:, part], out=y)
            if b_o is not None:
                y += b_o[part]
        if not all_finite(y):
            run_.finite = False

    jobs += [lambda j=j: output_job(j) for j in range(out_parts)]

    def job(k: int) -> None:
        try:
            jobs[k]()
        except _Aborted:
            pass
        except BaseException:
            run_.fail()
            raise

    parallel_rows.each(job, len(jobs))
    return run_.finite


def _split_tail(attention: list, workers: int) -> list:
    """The last `workers` attention jobs split into halves of their rows: the outputs
    wait for the slowest thread's last job, so the last jobs should be short."""
    last = attention[-workers:]
    if len(attention) <= workers or any(r1 - r0 < 2 * TAIL_ROWS for _, r0, r1 in last):
        return attention
    halves = []
    for heads, r0, r1 in last:
        mid = (r0 + r1) // 2
        halves += [(heads, r0, mid), (heads, mid, r1)]
    return attention[:-workers] + halves


def _group_blocks(t: Trace, packed: bool) -> list[range]:
    """The K/V groups of each projection job: one group each, or (packed) as many as
    make a GEMM about BLOCK_COLUMNS wide."""
    h, _, d_k = t.q.shape
    h_kv, _, d_v = t.v.shape
    width = (h // h_kv) * d_k + d_k + d_v  # one group's columns: its query heads, K and V
    per = max(1, min(h_kv, round(BLOCK_COLUMNS / width))) if packed else 1
    return [range(g, min(h_kv, g + per)) for g in range(0, h_kv, per)]


def _head_blocks(h: int, group: int, head_bytes: int, workers: int) -> list[range]:
    """Query heads per attention job: heads of one K/V group (with GQA) or consecutive
    heads (MHA), about ATTEND_BYTES of scores per job but at least two jobs per core."""
    per = max(1, min(ATTEND_BYTES // max(1, head_bytes), -(-h // (2 * workers))))
    if group > 1:
        per = min(per, group)
        return [range(i, min(i + per, (i // group + 1) * group)) for i in _starts(h, group, per)]
    return [range(i, min(h, i + per)) for i in range(0, h, per)]


def _starts(h: int, group: int, per: int) -> list[int]:
    return [g * group + j for g in range(h // group) for j in range(0, group, per)]


def _project_heads(x, w_q, w_k, w_v, b_q, b_k, b_v, t: Trace, groups, group, run_) -> None:
    """Q, K, V of K/V groups `groups` and their query heads, one GEMM per head.

    For a short layer (n up to ~3·d_k) this beats copying the weights side by side:
    BLAS packs the n×d_model X for each head, which is cheap when X is small.
    """
    g0, g1 = groups.start, groups.stop
    parts = (
        (w_q, b_q, t.q, t.q_rot, range(g0 * group, g1 * group)),
        (w_k, b_k, t.k, t.k_rot, groups),
        (w_v, b_v, t.v, None, groups),
    )
    finite = True
    for w, b, out, rotated, heads in parts:
        block = out[heads.start : heads.stop]
        np.matmul(x, w[heads.start : heads.stop], out=block)
        if b is not None:
            block += b[heads.start : heads.stop, None, :]
        finite = finite and all_finite(block)
        _rotate(t, out, rotated, heads)
    if not finite:
        run_.finite = False
    for g in groups:
        run_.projected[g].set()


def _project_packed(x, w_q, w_k, w_v, b_q, b_k, b_v, t: Trace, groups, group, run_) -> None:
    """Q, K, V of K/V groups `groups` and their query heads as one GEMM.

    The heads' weights are copied side by side into one d_model × width matrix (the
    textbook's packed layout, for these heads only), so BLAS packs X once for all of
    them instead of once per head; the product is checked while in cache and split.
    """
    g0, g1 = groups.start, groups.stop
    parts = (
        (w_q, b_q, t.q, t.q_rot, range(g0 * group, g1 * group)),
        (w_k, b_k, t.k, t.k_rot, groups),
        (w_v, b_v, t.v, None, groups),
    )
    n, d = x.shape
    width = sum(len(heads) * w.shape[2] for w, _, _, _, heads in parts)
    packed = np.empty((d, width), x.dtype)
    col = 0
    for w, _, _, _, heads in parts:
        m, wd = len(heads), w.shape[2]
        source = w[heads.start : heads.stop].transpose(1, 0, 2)
        np.copyto(packed[:, col : col + m * wd].reshape(d, m, wd), source)
        col += m * wd
    result = np.empty((n, width), x.dtype)
    np.matmul(x, packed, out=result)
    col = 0
    for w, b, out, rotated, heads in parts:
        m, wd = len(heads), w.shape[2]
        block = result[:, col : col + m * wd].reshape(n, m, wd)
        if b is not None:
            block += b[heads.start : heads.stop]
        np.copyto(out[heads.start : heads.stop], block.transpose(1, 0, 2))
        _rotate(t, out, rotated, heads)
        col += m * wd
    if not all_finite(result):
        run_.finite = False
    for g in groups:
        run_.projected[g].set()


def _rotate(t: Trace, out, rotated, heads: range) -> None:
    if rotated is not None and t.rope is not None:
        cos, sin = t.rope_tables
        for i in heads:
            rope_mod.apply(out[i], cos, sin, out=rotated[i])


def attend(t: Trace, heads: range, r0: int, r1: int, blocked, ablate) -> None:
    """Query heads `heads` (of one K/V group, or any with MHA), rows r0:r1, from scores
    to Z_i, while their blocks are in cache.

    S = scale · Q_i K_gᵀ (blocked pairs −∞); E = exp(S); one GEMM E·[V_g | 1] gives
    E·V_g and every row's sum Σ_j E_ij together; then A = E / sum and Z_i = E·V_g / sum.
    That is the row softmax without its max pass and subtraction pass: exp(S − c)/Σ is
    the same for any c, and c = 0 is exact whenever nothing overflows or underflows — a
    row whose sum is outside SUM_RANGE (a row with every key blocked sums to 0) or whose
    E·V is not finite is done again by `softmax_rows`, which subtracts its maximum. The sums
    come out of a product that is needed anyway, so the softmax makes two passes over
    the n×n block (exp, normalise) instead of five. Each Z_i also goes into its columns
    of H here, while in cache.
    """
    q, k, v = t.q_scores, t.k_scores, t.v
    group = q.shape[0] // k.shape[0]
    i0, i1 = heads.start, heads.stop
    d_v = v.shape[2]
    if group == 1:
        keys, values = k[i0:i1], v[i0:i1]
    else:  # one K/V group, broadcast over its query heads
        g = i0 // group
        keys, values = k[g : g + 1], v[g : g + 1]
    scores, weights = t.scores[i0:i1, r0:r1], t.weights[i0:i1, r0:r1]
    np.matmul(q[i0:i1, r0:r1] * t.scale, keys.transpose(0, 2, 1), out=scores)
    if blocked is not None:
        np.copyto(scores, -np.inf, where=blocked[r0:r1])
    np.exp(scores, out=weights)
    ones = np.empty((values.shape[0], values.shape[1], d_v + 1), v.dtype)
    ones[..., :d_v] = values
    ones[..., d_v] = 1.0
    ev = np.matmul(weights, ones)
    sums = ev[..., d_v:]
    inv = np.divide(1.0, sums)
    limit = SUM_RANGE[sums.dtype]
    bad = ~((sums >= 1.0 / limit) & (sums <= limit))  # NaN fails both
    bad[..., 0] |= ~np.isfinite(ev[..., :d_v]).all(axis=-1)  # E·V overflowed
    if bad.any():
        for j, r in zip(*np.nonzero(bad[..., 0]), strict=True):
            fixed = weights[j, r : r + 1]
            softmax_rows(scores[j, r : r + 1], fixed)
            ev[j, r, :d_v] = fixed @ values[j if len(values) > 1 else 0]
            inv[j, r] = 1.0
    np.multiply(weights, inv, out=weights)
    z = t.heads[i0:i1, r0:r1]
    np.multiply(ev[..., :d_v], inv, out=z)
    for i in ablate.intersection(heads):
        z[i - i0] = 0.0
    # H[:, i·d_v:(i+1)·d_v] = Z_i for these heads and rows (concat_step's layout)
    h_cat = t.concat[r0:r1].reshape(r1 - r0, -1, d_v)[:, i0:i1]
    np.copyto(h_cat, z.transpose(1, 0, 2))
