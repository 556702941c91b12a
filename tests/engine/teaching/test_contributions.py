"""Contribution sizes and the MHA/GQA/MQA comparison: numbers checked against plain numpy
and hand-written formulas (no Qt)."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Config, Session, load_preset, random_parameters
from mha_gui.engine.layer.session import default_tokens
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.engine.panels.stats import gqa_choices, kv_variants, layer_stats, parameter_count
from mha_gui.engine.teaching.contributions import contribution_norms, norms_of


@st.composite
def sessions(draw):
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    n, d_model, d_k, d_v = (draw(st.integers(1, 5)) for _ in range(4))
    ablate = tuple(sorted(set(draw(st.lists(st.integers(0, h - 1), max_size=h)))))
    config = Config(
        n=n,
        d_model=d_model,
        h=h,
        h_kv=h_kv,
        d_k=d_k,
        d_v=d_v,
        bias=draw(st.booleans()),
        causal=draw(st.booleans()),
        ablate=ablate,
    )
    params = random_parameters(config, seed=draw(st.integers(0, 2**31)))
    return Session(config, default_tokens(n), params)


def by_hand(session):
    """Every head's Z_i = A_i V_g(i), its share, and Y − b_O, from the parameters alone."""
    c, p = session.config, session.params
    x = p.X
    mask = np.triu(np.ones((c.n, c.n), bool), 1) if c.causal else np.zeros((c.n, c.n), bool)
    shares = []
    for i in range(c.h):
        g = i // (c.h // c.h_kv)
        q = x @ p.W_Q[i] + (p.b_Q[i] if c.bias else 0)
        k = x @ p.W_K[g] + (p.b_K[g] if c.bias else 0)
        v = x @ p.W_V[g] + (p.b_V[g] if c.bias else 0)
        s = q @ k.T / np.sqrt(c.d_k)
        s[mask] = -np.inf
        a = np.exp(s - s.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        shares.append((a @ v) @ p.W_O[i * c.d_v : (i + 1) * c.d_v])
    return np.array(shares)


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_sizes_match_an_independent_computation(session):
    c = session.config
    shares = by_hand(session)  # what every head would add, switched on
    nm = contribution_norms(SessionData(session))
    on = [i for i in range(c.h) if i not in c.ablate]
    expected = np.linalg.norm(shares, axis=2)
    assert np.allclose(nm.lost, expected, atol=1e-10)
    assert np.allclose(nm.norms[on], expected[on], atol=1e-10)
    assert np.all(nm.norms[list(c.ablate)] == 0)
    # the total is ‖Y − b_O‖ of the ablated layer: the kept heads' sum
    y = session.run().output - (session.params.b_O if c.bias else 0)
    assert np.allclose(nm.total, np.linalg.norm(y, axis=1), atol=1e-10)
    assert np.allclose(nm.total, np.linalg.norm(shares[on].sum(axis=0), axis=1), atol=1e-10)
    # heads can cancel, never more than add up
    assert np.all(nm.total <= nm.norms.sum(axis=0) + 1e-9)


def test_norms_of_small_example_by_hand():
    # two heads, one token, d_model 2: C_0 = (3, 4), C_1 = (−3, 0)
    contributions = np.array([[[3.0, 4.0]], [[-3.0, 0.0]]])
    nm = norms_of(contributions, np.ones((2, 1, 1)), np.zeros((2, 1, 1)), np.zeros((2, 2)))
    assert nm.norms.tolist() == [[5.0], [3.0]]
    assert nm.total.tolist() == [4.0]  # (0, 4): the heads partly cancel
    assert nm.share(0, 0) == pytest.approx(5 / 8)
    assert nm.peak == 5.0


# ---------------------------------------------------------------- MHA / GQA / MQA ----
def test_kv_variants_of_the_gqa_preset_by_hand():
    c = load_preset("gqa").config  # n 4, d_model 8, h 8 query heads, h_kv 2
    n, d, h, dk, dv = c.n, c.d_model, c.h, c.d_k, c.d_v
    rows = {v.h_kv: v for v in kv_variants(c)}
    assert sorted(rows) == [1, 2, 4, 8]
    for g, v in rows.items():
        assert v.kv_cache_per_token == g * (dk + dv)
        assert v.kv_cache == n * g * (dk + dv)
        assert v.parameters == h * d * dk + g * d * (dk + dv) + h * dv * d
        assert v.current == (g == c.h_kv)
    assert [rows[g].variant for g in (8, 4, 2, 1)] == ["MHA", "GQA", "GQA", "MQA"]
    # the layer's own row agrees with `mha-gui info`'s numbers
    st_ = layer_stats(c)
    assert rows[c.h_kv].kv_cache_per_token == st_.kv_cache_per_token
    assert rows[c.h_kv].parameters == st_.parameters == parameter_count(c)


def test_kv_variants_with_biases_count_the_smaller_key_value_biases():
    c = Config(n=5, d_model=6, h=4, d_k=3, d_v=2, h_kv=4, bias=True)
    rows = {v.h_kv: v for v in kv_variants(c)}
    for g, v in rows.items():
        weights = 4 * 6 * 3 + g * 6 * (3 + 2) + 4 * 2 * 6
        biases = 4 * 3 + g * (3 + 2) + 6
        assert v.parameters == weights + biases
        assert v.kv_cache == 5 * g * 5


def test_one_head_has_one_variant_and_a_prime_h_no_gqa():
    assert [v.h_kv for v in kv_variants(Config(h=1, d_model=4, d_k=4, d_v=4))] == [1]
    assert [v.variant for v in kv_variants(Config(h=7, d_model=7, d_k=1, d_v=1))] == [
        "MHA",
        "MQA",
    ]


@given(st.integers(1, 128), st.data())
def test_gqa_choices_are_divisors_and_keep_the_current_one(h, data):
    divisors = [g for g in range(1, h + 1) if h % g == 0]
    current = data.draw(st.sampled_from(divisors))
    picks = gqa_choices(h, current)
    assert all(h % g == 0 and 1 < g < h for g in picks)
    assert picks == sorted(set(picks), reverse=True) and len(picks) <= 4
    if 1 < current < h:
        assert current in picks
    between = [g for g in divisors if 1 < g < h]
    if len(between) <= 4:
        assert sorted(picks) == between


def test_variants_keep_everything_but_h_kv():
    c = replace(load_preset("causal-6x16").config, ablate=(1,))
    for v in kv_variants(c):
        assert v.groups(c.h)[-1].stop == c.h and len(v.groups(c.h)) == v.h_kv
