"""The textbook's identities, checked on the engine's own output."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import forward
from mha_gui.engine.forward import softmax_step
from mha_gui.engine.presets import split_columns


def _layer(seed, n=5, d_model=8, h=4, h_kv=None, d_k=2, d_v=3):
    h_kv = h if h_kv is None else h_kv
    rng = np.random.default_rng(seed)
    return dict(
        x=rng.normal(size=(n, d_model)),
        w_q=rng.normal(size=(h, d_model, d_k)),
        w_k=rng.normal(size=(h_kv, d_model, d_k)),
        w_v=rng.normal(size=(h_kv, d_model, d_v)),
        w_o=rng.normal(size=(h * d_v, d_model)),
    )


seeds = st.integers(0, 10_000)


@given(seeds, st.integers(1, 8), st.integers(1, 6), st.integers(1, 5))
def test_split_concat_round_trip_is_exact(seed, n, h, d_k):
    x = np.random.default_rng(seed).normal(size=(n, h * d_k))
    split = x.reshape(n, h, d_k).transpose(1, 0, 2)
    assert np.array_equal(split.transpose(1, 0, 2).reshape(n, h * d_k), x)
    # and the engine's H is exactly the heads side by side, head 0 first
    t = forward(
        x,
        np.ones((h, h * d_k, d_k)),
        np.ones((h, h * d_k, d_k)),
        np.random.default_rng(seed).normal(size=(h, h * d_k, d_k)),
        np.eye(h * d_k),
    )
    for i in range(h):
        assert np.array_equal(t.concat[:, i * d_k : (i + 1) * d_k], t.heads[i])


@given(seeds)
def test_one_packed_projection_equals_per_head_projections(seed):
    rng = np.random.default_rng(seed)
    n, d_model, h = 6, 16, 4
    packed = rng.normal(size=(d_model, d_model))
    x = rng.normal(size=(n, d_model))
    heads = split_columns(packed, h)
    q_packed = (x @ packed).reshape(n, h, d_model // h).transpose(1, 0, 2)
    t = forward(x, heads, heads, heads, np.eye(d_model))
    np.testing.assert_allclose(t.q, q_packed, rtol=1e-12, atol=1e-12)


@settings(max_examples=50)
@given(seeds, st.permutations(range(4)))
def test_permuting_heads_with_w_o_row_blocks_keeps_y(seed, perm):
    p = _layer(seed)
    d_v = p["w_v"].shape[2]
    perm = list(perm)
    blocks = p["w_o"].reshape(4, d_v, -1)[perm].reshape(4 * d_v, -1)
    permuted = dict(p, w_q=p["w_q"][perm], w_k=p["w_k"][perm], w_v=p["w_v"][perm], w_o=blocks)
    np.testing.assert_allclose(
        forward(**permuted).output, forward(**p).output, rtol=1e-10, atol=1e-10
    )


@given(seeds, st.floats(0.1, 10.0))
def test_scaling_w_q_by_c_and_scale_by_1_over_c_keeps_weights(seed, c):
    p = _layer(seed)
    base = forward(**p)
    scaled = forward(**dict(p, w_q=p["w_q"] * c), scale=base.scale / c)
    np.testing.assert_allclose(scaled.weights, base.weights, rtol=1e-9, atol=1e-12)


@given(seeds, st.floats(-50, 50))
def test_softmax_is_shift_invariant(seed, shift):
    s = np.random.default_rng(seed).normal(size=(3, 4, 5))
    a, b = np.empty_like(s), np.empty_like(s)
    softmax_step(s, a)
    softmax_step(s + shift, b)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@given(seeds)
def test_causal_weights_are_zero_above_the_diagonal(seed):
    t = forward(**_layer(seed), causal=True)
    assert np.all(np.triu(t.weights, k=1) == 0)
    np.testing.assert_allclose(t.weights.sum(-1), 1.0)


@pytest.mark.parametrize("h_kv", [1, 2])
def test_gqa_and_mqa_equal_mha_with_k_v_repeated(h_kv):
    p = _layer(7, h=4, h_kv=h_kv)
    rep = 4 // h_kv
    mha = dict(p, w_k=np.repeat(p["w_k"], rep, axis=0), w_v=np.repeat(p["w_v"], rep, axis=0))
    a, b = forward(**p), forward(**mha)
    np.testing.assert_allclose(a.output, b.output, rtol=1e-12)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12)


@given(seeds, st.booleans())
def test_contributions_plus_bias_sum_to_y(seed, with_bias):
    p = _layer(seed)
    b_o = np.random.default_rng(seed).normal(size=8) if with_bias else None
    t = forward(**p, b_o=b_o)
    total = t.contributions.sum(axis=0) + (0 if b_o is None else b_o)
    np.testing.assert_allclose(total, t.output, rtol=1e-10, atol=1e-10)


def test_q_is_stored_unscaled():
    p = _layer(3)
    t = forward(**p)
    np.testing.assert_allclose(t.q, np.stack([p["x"] @ w for w in p["w_q"]]), rtol=1e-12)
