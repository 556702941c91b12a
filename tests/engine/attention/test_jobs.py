"""The jobs path of forward() (engine/attention/scheduler.py `run_jobs`) and what it relies on.

Forced on small random layers in each of its shapes — projections per head or packed in
blocks, several heads or a few rows per attention job, one or several output blocks —
and compared with the per-head reference; its softmax without the max pass must give
the reference's weights where exp would overflow or underflow too; a NaN or ±inf in any
operand must still be refused with the message naming it, even where masking or
ablation hides it from the output (the operands are scanned only after the pass); a
failing job must reach the caller without leaving the pool stuck; and the trace's
contributions must use the W_O of the pass.
"""

import contextlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import forward
from mha_gui.engine.attention import scheduler
from tests.engine.attention.test_forward_properties import FIELDS, _close
from tests.engine.attention.test_rope import rope_layers
from tests.engine.reference import reference_forward


@contextlib.contextmanager
def jobs(packed: bool, rows: int, attend_bytes: int, columns: int):
    """The jobs path at any size, in one of its shapes."""
    with mock.patch.multiple(
        scheduler,
        JOBS_ABOVE_FLOPS=0,
        PACK_ROWS_PER_D_K=0 if packed else 10**9,
        BLOCK_COLUMNS=columns,
        ATTEND_ROWS=rows,
        ATTEND_BYTES=attend_bytes,
        TAIL_ROWS=1,
        OUTPUT_SPLIT=1,
    ):
        yield


def _layer(n=12, d=6, h=4, kv=2, d_k=3, d_v=2, seed=9):
    rng = np.random.default_rng(seed)
    shapes = dict(x=(n, d), w_q=(h, d, d_k), w_k=(kv, d, d_k), w_v=(kv, d, d_v), w_o=(h * d_v, d))
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


SHAPES = st.tuples(st.booleans(), st.sampled_from([1, 2, 1000]), st.sampled_from([0, 10**9]))


@settings(max_examples=150, deadline=None)
@given(rope_layers(), SHAPES, st.sampled_from([1, 8, 10**6]), st.sampled_from(["f8", "f4"]))
def test_every_shape_of_the_jobs_path_matches_the_reference(case, shape, columns, dtype):
    arrays, options, rope = case
    packed, rows, attend_bytes = shape  # float64 always packs; float32 may go per head
    given = {k: v.astype(dtype) for k, v in arrays.items()}
    with jobs(packed, rows, attend_bytes, columns):
        t = forward(**given, **options, rope=(rope["theta"], rope["scaling"]))
    ref = reference_forward(**arrays, **options, rope=rope)
    if dtype == "f8":
        for name in FIELDS:
            _close(getattr(t, name), ref[name])
        _close(t.q_rot, ref["q_rot"])
    else:
        assert t.output.dtype == np.float32
        np.testing.assert_allclose(t.weights, ref["weights"], atol=2e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 40.0, 400.0, 4000.0])
def test_the_softmax_without_a_max_pass_matches_where_exp_would_overflow(dtype, scale):
    """Scores up to ~±1e4: exp(S) alone overflows or underflows in some rows (every row
    in float32 beyond ~±88), and those rows are redone with their maximum subtracted."""
    n, h = 24, 3
    arrays = _layer(n=n, d=8, h=h, kv=h, d_k=4, d_v=4, seed=4)
    arrays["b_q"] = np.full((h, 4), -3.0)  # pushes many rows far below zero
    mask = np.random.default_rng(4).random((n, n)) < 0.3
    mask[5] = True  # a query with every key blocked
    ref = reference_forward(**arrays, mask=mask, scale=scale)
    with jobs(True, 1000, 10**9, 10**6):
        t = forward(**{k: v.astype(dtype) for k, v in arrays.items()}, mask=mask, scale=scale)
    if dtype == np.float64:
        for name in FIELDS:
            _close(getattr(t, name), ref[name])
    else:
        np.testing.assert_allclose(t.weights, ref["weights"], atol=2e-4)
    sums = t.weights.sum(axis=-1)
    np.testing.assert_allclose(np.delete(sums, 5, axis=1), 1.0, rtol=1e-5)
    assert not t.weights[:, 5].any() and not t.heads[:, 5].any()


HIDDEN = {
    # a NaN in the X row of a query whose every key is blocked: its scores are -inf,
    # its weights 0, nothing of it reaches Y; Q is what shows it
    "X row of a blocked query": ("x", (3, 1), "X[3, 1] is nan"),
    # W_V of the group whose only query heads are switched off: Z is set to 0
    "W_V of ablated heads": ("w_v", (1, 2, 0), "W_V[1, 2, 0] is nan"),
    # W_O rows of an ablated head multiply zeros: 0·inf = NaN still reaches Y
    "W_O row of an ablated head": ("w_o", (6, 4), "W_O[6, 4] is inf"),
    "W_Q": ("w_q", (2, 5, 2), "W_Q[2, 5, 2] is nan"),
    "W_K": ("w_k", (0, 0, 0), "W_K[0, 0, 0] is -inf"),
}


@pytest.mark.parametrize("path", ["jobs", "batched"])
@pytest.mark.parametrize("case", sorted(HIDDEN))
def test_a_non_finite_operand_is_named_even_where_the_output_hides_it(case, path):
    name, index, words = HIDDEN[case]
    arrays = _layer()
    value = {"W_O row of an ablated head": np.inf, "W_K": -np.inf}.get(case, np.nan)
    arrays[name][index] = value
    mask = np.zeros((12, 12), bool)
    mask[3] = True
    threshold = 0 if path == "jobs" else 1 << 60
    with (
        mock.patch.object(scheduler, "JOBS_ABOVE_FLOPS", threshold),
        pytest.raises(ValueError) as err,
    ):
        forward(**arrays, mask=mask, ablate=[2, 3])
    assert str(err.value).startswith(words) and "must be finite" in str(err.value)


def test_a_failing_job_reaches_the_caller_and_leaves_the_pool_working():
    arrays = _layer(n=40, d=8, h=8, kv=8)
    real = scheduler.attend

    def failing(t, heads, *rest):
        if 5 in heads:
            raise RuntimeError("job for head 5 failed")
        return real(t, heads, *rest)

    with (
        mock.patch.object(scheduler, "JOBS_ABOVE_FLOPS", 0),
        mock.patch.object(scheduler, "ATTEND_BYTES", 0),
        mock.patch.object(scheduler, "attend", failing),
        pytest.raises(RuntimeError, match="head 5"),
    ):
        forward(**arrays)
    with mock.patch.object(scheduler, "JOBS_ABOVE_FLOPS", 0):
        t = forward(**arrays)  # the output jobs that waited for head 5 were let go
    _close(t.output, reference_forward(**arrays)["output"])


@pytest.mark.parametrize("threshold", [0, 1 << 60], ids=["jobs", "batched"])
def test_contributions_use_the_w_o_of_the_pass(threshold):
    arrays = _layer()
    b_o = np.arange(6.0)
    with mock.patch.object(scheduler, "JOBS_ABOVE_FLOPS", threshold):
        t = forward(**arrays, b_o=b_o)
        expected = t.output.copy()
        arrays["w_o"][:] = 0.0  # the caller edits their W_O afterwards
        np.testing.assert_allclose(t.contributions.sum(axis=0) + b_o, expected, atol=1e-12)
        again = forward(**arrays, b_o=b_o, out=t)  # a reused trace: this pass's W_O
    assert again is t
    np.testing.assert_allclose(t.contributions, 0.0)
    np.testing.assert_allclose(t.output, np.broadcast_to(b_o, t.output.shape))


def test_rows_whose_e_v_overflows_are_redone_even_when_their_sums_are_finite():
    """float32, scores ≈ 85 (e^85 ≈ 8e36: sums below the float32 limit) and |V| ≈ 1e3: E·V
    overflows. With the sums' range opened wide, only the E·V check catches it."""
    n, d = 16, 2
    x = np.ones((n, d), np.float32)
    w_q = np.full((1, d, 1), 1.0, np.float32)
    w_k = np.full((1, d, 1), 21.25, np.float32)  # scores = 2 · 2 · 21.25 = 85 (scale 1)
    w_v = np.full((1, d, 1), 500.0, np.float32)
    w_o = np.ones((1, d), np.float32)
    wide = {np.dtype(np.float64): 1e300, np.dtype(np.float32): 3e38}
    with jobs(True, 1000, 10**9, 10**6), mock.patch.object(scheduler, "SUM_RANGE", wide):
        t = forward(x, w_q, w_k, w_v, w_o, scale=1.0)
    np.testing.assert_allclose(t.weights, 1.0 / n, rtol=1e-6)
    np.testing.assert_allclose(t.heads, 1000.0, rtol=1e-6)
