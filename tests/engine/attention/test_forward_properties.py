"""forward() against the plain per-head loop on random shapes, masks, biases and groupings."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import forward
from tests.engine.reference import reference_forward

FIELDS = ("q", "k", "v", "scores", "weights", "heads", "concat", "output", "contributions")


@st.composite
def layers(draw, even_d_k=False):
    """Random operands and options; `even_d_k` for layers that RoPE must be able to rotate."""
    n = draw(st.integers(1, 7))
    d_model = draw(st.integers(1, 6))
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    d_k = 2 * draw(st.integers(1, 3)) if even_d_k else draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    spread = draw(st.sampled_from([0.1, 1.0, 5.0]))
    arrays = dict(
        x=rng.normal(0, spread, (n, d_model)),
        w_q=rng.normal(0, 1, (h, d_model, d_k)),
        w_k=rng.normal(0, 1, (h_kv, d_model, d_k)),
        w_v=rng.normal(0, 1, (h_kv, d_model, d_v)),
        w_o=rng.normal(0, 1, (h * d_v, d_model)),
    )
    if draw(st.booleans()):
        arrays.update(
            b_q=rng.normal(size=(h, d_k)),
            b_k=rng.normal(size=(h_kv, d_k)),
            b_v=rng.normal(size=(h_kv, d_v)),
            b_o=rng.normal(size=(d_model,)),
        )
    options = dict(causal=draw(st.booleans()))
    if draw(st.booleans()):
        options["mask"] = rng.random((n, n)) < draw(st.sampled_from([0.2, 0.5, 1.0]))
    if draw(st.booleans()):
        options["scale"] = draw(st.floats(0.01, 10.0))
    return arrays, options


def _close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert np.array_equal(np.isneginf(a), np.isneginf(b))
    fa, fb = np.where(np.isfinite(a), a, 0), np.where(np.isfinite(b), b, 0)
    np.testing.assert_allclose(fa, fb, rtol=1e-9, atol=1e-9)


@settings(max_examples=250, deadline=None)
@given(layers())
def test_forward_matches_per_head_loop(case):
    arrays, options = case
    t = forward(**arrays, **options)
    ref = reference_forward(**arrays, **options)
    for name in FIELDS:
        _close(getattr(t, name), ref[name])


@settings(max_examples=100, deadline=None)
@given(layers())
def test_float32_inputs_stay_float32_and_close(case):
    arrays, options = case
    t64 = forward(**arrays, **options)
    t32 = forward(**{k: v.astype(np.float32) for k, v in arrays.items()}, **options)
    assert t32.output.dtype == np.float32
    np.testing.assert_allclose(t32.weights, t64.weights, atol=2e-4)


@settings(max_examples=100, deadline=None)
@given(layers())
def test_rows_of_weights_sum_to_one_or_zero_when_fully_blocked(case):
    arrays, options = case
    t = forward(**arrays, **options)
    sums = t.weights.sum(axis=-1)
    dead = t.mask.all(axis=-1)
    np.testing.assert_allclose(sums[:, ~dead], 1.0, atol=1e-12)
    assert np.all(sums[:, dead] == 0)
    assert np.all(t.weights[:, t.mask] == 0)
    assert np.all(np.isneginf(t.scores[:, t.mask]))


@pytest.mark.parametrize("big", [1e6, -1e6, 3e5])
def test_huge_scores_stay_finite(big):
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    w = np.full((1, 2, 2), big)
    t = forward(x, w, np.full((1, 2, 2), 1.0), w, np.eye(2), scale=1.0)
    assert np.all(np.isfinite(t.weights)) and np.all(np.isfinite(t.output))
    np.testing.assert_allclose(t.weights.sum(-1), 1.0)


def test_fully_blocked_row_gives_zero_weights_and_zero_head_output():
    rng = np.random.default_rng(0)
    mask = np.zeros((3, 3), bool)
    mask[1, :] = True
    t = forward(
        rng.normal(size=(3, 4)),
        rng.normal(size=(2, 4, 2)),
        rng.normal(size=(2, 4, 2)),
        rng.normal(size=(2, 4, 3)),
        rng.normal(size=(6, 4)),
        mask=mask,
    )
    assert np.all(t.weights[:, 1] == 0) and np.all(t.heads[:, 1] == 0)
    assert np.all(np.isfinite(t.output))


@settings(max_examples=60, deadline=None)
@given(layers(), layers())
def test_out_reuses_buffers_only_when_shapes_match_and_stays_exact(first, second):
    (a1, o1), (a2, o2) = first, second
    previous = forward(**a1, **o1)
    t = forward(**a2, **o2, out=previous)
    fresh = forward(**a2, **o2)
    for name in FIELDS:
        _close(getattr(t, name), getattr(fresh, name))
    same = previous.q.shape == fresh.q.shape and previous.v.shape == fresh.v.shape
    assert (t is previous) == (same and previous.output.shape == fresh.output.shape)
