"""The neuron view's numbers: q_j ⊙ k_k adds up to S_i[j, k], the bars are the trace's row."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Config, Session, load_preset, random_parameters
from mha_gui.engine.layer.session import default_tokens
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.engine.teaching.neuron import neuron, strongest_key
from tests.engine.reference import reference_inv_freq, reference_rotate


def independent_score_parts(session: Session, head: int, query: int, key: int):
    """q_j and k_k from X and the weights by hand (rotated per pair with RoPE), no trace."""
    c, p = session.config, session.params
    g = head // (c.h // c.h_kv)
    q = p.X[query] @ p.W_Q[head] + (0 if p.b_Q is None else p.b_Q[head])
    k = p.X[key] @ p.W_K[g] + (0 if p.b_K is None else p.b_K[g])
    if c.rope:
        freqs = reference_inv_freq(c.d_k, c.rope_theta, c.rope_scaling)
        q, k = reference_rotate(q, query, freqs), reference_rotate(k, key, freqs)
    products = [float(q[d]) * float(k[d]) for d in range(c.d_k)]
    scale = 1 / math.sqrt(c.d_k) if c.scale is None else c.scale
    return q, k, products, scale


@st.composite
def sessions(draw):
    h_kv = draw(st.integers(1, 3))
    rope = draw(st.booleans())
    config = Config(
        n=draw(st.integers(1, 7)),
        d_model=draw(st.integers(1, 6)),
        h=h_kv * draw(st.integers(1, 3)),  # MHA, GQA and MQA
        h_kv=h_kv,
        d_k=2 * draw(st.integers(1, 3)) if rope else draw(st.integers(1, 5)),
        d_v=draw(st.integers(1, 3)),
        causal=draw(st.booleans()),
        bias=draw(st.booleans()),
        scale=draw(st.one_of(st.none(), st.floats(0.05, 5.0))),
        rope=rope,
        rope_theta=draw(st.sampled_from([10000.0, 10.0])),
    )
    seed = draw(st.integers(0, 2**31))
    mask = None
    if draw(st.booleans()):
        mask = np.random.default_rng(seed).random((config.n, config.n)) < 0.3
    session = Session(config, default_tokens(config.n), random_parameters(config, seed), mask=mask)
    head = draw(st.integers(0, config.h - 1))
    query = draw(st.integers(0, config.n - 1))
    key = draw(st.one_of(st.none(), st.integers(0, config.n - 1)))
    return session, head, query, key


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_products_add_up_to_the_score(case):
    session, head, query, key = case
    trace = session.run()
    nu = neuron(SessionData(session, trace), head, query, key)
    q, k, products, scale = independent_score_parts(session, head, query, nu.key)

    np.testing.assert_allclose(nu.q, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nu.k, k, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nu.products, products, rtol=1e-12, atol=1e-12)
    assert nu.dot == pytest.approx(math.fsum(products), rel=1e-12, abs=1e-12)
    assert nu.scale == scale
    assert nu.rotated == session.config.rope
    assert nu.group == head // session.config.group_size
    blocked = bool(trace.mask[query, nu.key])
    assert nu.blocked == blocked
    if blocked:
        assert nu.score == -math.inf == trace.scores[head, query, nu.key]
    else:
        assert abs(nu.score - trace.scores[head, query, nu.key]) <= 1e-12 * max(1, abs(nu.score))
    # the bars are the trace's row: scores (−∞ where blocked) and softmax weights
    np.testing.assert_array_equal(nu.scores, trace.scores[head, query])
    np.testing.assert_array_equal(nu.weights, trace.weights[head, query])
    np.testing.assert_array_equal(nu.blocked_keys, trace.mask[query])
    if key is None:
        assert not nu.chosen and nu.key == strongest_key(nu.weights, nu.blocked_keys)
    else:
        assert nu.chosen and nu.key == key


def test_default_key_is_the_largest_weight():
    session = load_preset("toy")
    trace = session.run()
    for head in range(session.config.h):
        for query in range(session.config.n):
            nu = neuron(SessionData(session, trace), head, query)
            assert nu.key == int(np.argmax(trace.weights[head, query]))
            assert nu.weight == trace.weights[head, query].max()


def test_strongest_key_skips_blocked_keys_and_survives_an_all_blocked_row():
    weights = np.array([0.0, 0.0, 0.0])
    assert strongest_key(weights, np.array([True, False, True])) == 1
    assert strongest_key(weights, np.array([True, True, True])) == 0
    assert strongest_key(np.array([0.2, 0.5, 0.3]), np.zeros(3, bool)) == 1


def test_toy_numbers_by_hand():
    # toy preset, head 1, query 2 "sat": q = (2, 2), strongest key 2 "sat": k = (1, 2)
    nu = neuron(SessionData(load_preset("toy")), 1, 2)
    assert (nu.key, list(nu.q), list(nu.k), list(nu.products)) == (2, [2, 2], [1, 2], [2, 4])
    assert nu.dot == 6 and nu.score == pytest.approx(6 / math.sqrt(2), abs=1e-15)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2, 0, None), "head 2 is out of range: this layer has heads 0..1"),
        ((0, 4, None), "query 4 is out of range: this layer has tokens 0..3"),
        ((0, 0, 9), "key 9 is out of range: this layer has tokens 0..3"),
        ((0, 0, -1), "key -1 is out of range"),
        ((0, 0, 1.5), "key must be a whole number, got 1.5"),
        ((True, 0, None), "head must be a whole number"),
    ],
)
def test_bad_indices_are_refused_with_a_message(args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        neuron(SessionData(load_preset("toy")), *args)
