"""`forward()`: multi-head attention with every intermediate, for a notebook or a script.

This is the validating front door: it checks every operand (engine/attention/validation.py),
picks float32 or float64, allocates or reuses a `Trace` (engine/attention/trace.py), runs every
step (engine/attention/steps.py) in the order and on the cores engine/attention/scheduler.py picks for the
layer's size, and turns an overflow into a message. Each step writes into preallocated
buffers, so that the GUI can recompute only what an edit touches (engine/attention/incremental.py)
and a benchmark sees no page-fault noise from fresh allocations.

    from mha_gui.engine import forward
    t = forward(x, w_q, w_k, w_v, w_o, causal=True)   # t.weights, t.output, ...
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from mha_gui.engine.attention import buffers
from mha_gui.engine.attention import rope as rope_mod
from mha_gui.engine.attention.rope import as_rope
from mha_gui.engine.attention.scheduler import run_all
from mha_gui.engine.attention.steps import blocked_positions, softmax_step
from mha_gui.engine.attention.trace import Trace, allocate_trace, set_switches
from mha_gui.engine.attention.validation import all_finite_many, validate_inputs
from mha_gui.engine.layer.config import ablate_heads

# Names callers import from here (the trace and two steps a notebook or view needs).
__all__ = ["Trace", "blocked_positions", "forward", "softmax_step"]


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
    """Multi-head attention with every intermediate.

    Q_i = X W_i^Q + b_i^Q, K_g = X W_g^K + b_g^K, V_g = X W_g^V + b_g^V;
    S_i = scale · Q_i K_g(i)ᵀ (blocked pairs −∞); A_i = row softmax of S_i;
    Z_i = A_i V_g(i); H = Concat(Z_0 … Z_{h−1}); Y = H W_O + b_O.

    x (n, d_model); w_q (h, d_model, d_k); w_k (h_kv, d_model, d_k); w_v (h_kv, d_model,
    d_v); w_o (h·d_v, d_model); optional biases; `mask` (n, n) bool with True = blocked;
    `causal` also blocks keys after the query. Query head i reads K/V head i // (h/h_kv).
    A query whose every key is blocked gets all-zero weights. Computes in float32 when
    every operand is float32, float64 otherwise.

    `out=previous_trace` overwrites that trace's arrays instead of allocating new ones
    when shapes and dtype match (a loop over many inputs then avoids page-fault costs);
    the returned trace is then `out` itself, so keep copies of anything you need (if the
    call raises because of a NaN or an overflow, `out` holds a partial pass).

    `rope` rotates Q and K after projection (see `mha_gui.engine.attention.rope`): None/False is
    off, True is θ = 10000, a number is θ, a (θ, scaling) pair adds Llama 3 frequency
    scaling, or pass a `RoPE`. d_k must then be even. `ablate` is an iterable of query
    heads whose Z_i is set to 0 (weights still computed): Y = Σ of the other heads'
    contributions + b_O.
    """
    given = (x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, mask)
    # X and the weights are not scanned for NaN/inf here: the pass checks Q, K, V and Y
    # instead, which any non-finite operand reaches (see _check_finite).
    x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, mask = validate_inputs(*given, scan_floats=False)
    operands = [a for a in (x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o) if a is not None]
    dtype = np.result_type(*operands, np.float32)
    if dtype not in (np.float32, np.float64):
        dtype = np.dtype(np.float64)
    x, w_q, w_k, w_v = (a.astype(dtype, copy=False) for a in (x, w_q, w_k, w_v))
    w_o = w_o.astype(dtype, copy=False)
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
    if isinstance(out, Trace) and out.fits(n, d_model, h, h_kv, d_k, d_v, dtype):
        t = out
        t.mask, t.scale = blocked, float(scale)
        set_switches(t, rope, ablate)
    else:
        t = allocate_trace(
            n, d_model, h, h_kv, d_k, d_v, dtype, w_o, float(scale), blocked, rope, ablate
        )
    # The trace keeps W_O to compute `contributions` on demand: a private copy (made
    # during the pass, from recycled memory), so that a caller who edits their W_O
    # afterwards does not silently change this trace.
    keep = buffers.empty(w_o.shape, dtype)
    if not run_all(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, t, keep_w_o=keep):
        _check_finite(t, given, (x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o))
    return t


def _check_finite(t: Trace, given, operands) -> None:
    """Q, K, V or Y is not finite: name the operand entry at fault, or the overflow.

    A NaN or ±inf anywhere in X or a weight always reaches Q, K, V or Y: every entry of
    an operand is multiplied into some entry of its product (IEEE 0·NaN = NaN and
    0·inf = NaN; a GEMM with alpha = 1 skips no term), and Q, K, V are checked before
    masking or ablation could drop a row. So the pass checks those four, each
    block while in cache, instead of first reading every operand for NaN — and only
    when one of them is not finite are the operands scanned, to raise the same message
    `validate_inputs` gives (the first bad operand and entry).

    Finite inputs can still overflow the float type (1e200² in float64, 1e20² in
    float32): then say which intermediate overflowed. Any overflow in Q, K, V, the
    scores or the weights propagates into V or Y, so the n×d checks cover the h×n×n
    arrays too.
    """
    validate_inputs(*given)
    checked = (("Q", t.q), ("K", t.k), ("V", t.v), ("Y", t.output))
    for (label, arr), finite in zip(checked, all_finite_many(a for _, a in checked), strict=True):
        if not finite:
            largest = max(float(np.abs(a).max()) for a in operands if a is not None)
            hint = " or compute in float64" if arr.dtype == np.float32 else ""
            raise ValueError(
                f"the numbers are too large for {arr.dtype.name}: {label} overflows "
                f"(largest input magnitude {largest:.3g}); use smaller values{hint}"
            )
