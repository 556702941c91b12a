"""The textbook's identities, checked on the engine's own output."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import forward
from mha_gui.engine.attention.steps import softmax_step
from mha_gui.engine.layer.presets import split_columns


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


# ------------------------------------------------------------------------------------
# mha_gui.engine.teaching.identities: the five demonstrations of the Tools menu, on random layers
# (MHA/GQA/MQA, causal, extra mask, biases, RoPE, ablated heads). Each side is computed
# independently; every comparison must be float64 rounding (≤ 1e-12 relative).
from mha_gui.engine.layer.config import Config  # noqa: E402
from mha_gui.engine.layer.parameters import Parameters  # noqa: E402
from mha_gui.engine.layer.session import Session, default_tokens  # noqa: E402
from mha_gui.engine.teaching import identities as ids  # noqa: E402


@st.composite
def sessions(draw):
    h_kv = draw(st.sampled_from([1, 2, 3]))
    h = h_kv * draw(st.integers(1, 3))
    rope = draw(st.booleans())
    d_k = draw(st.integers(1, 3)) * 2 if rope else draw(st.integers(1, 5))
    cfg = Config(
        n=draw(st.integers(1, 7)),
        d_model=draw(st.integers(1, 9)),
        h=h,
        h_kv=h_kv,
        d_k=d_k,
        d_v=draw(st.integers(1, 4)),
        causal=draw(st.booleans()),
        bias=draw(st.booleans()),
        scale=draw(st.one_of(st.none(), st.floats(0.05, 3.0))),
        rope=rope,
        ablate=draw(st.sets(st.integers(0, h - 1), max_size=h)),
    )
    rng = np.random.default_rng(draw(seeds))
    arrays = {k: rng.normal(size=s) for k, s in cfg.parameter_shapes().items()}
    mask = rng.random((cfg.n, cfg.n)) < 0.2 if draw(st.booleans()) else None
    return Session(cfg, default_tokens(cfg.n), Parameters(**arrays), mask=mask)


def _holds(identity):
    for check in identity.checks:
        assert check.relative <= 1e-12, (identity.name, check)
    assert identity.holds


@settings(max_examples=60, deadline=None)
@given(sessions(), st.sampled_from(["Q", "K", "V"]))
def test_packed_projection_identity(session, which):
    identity = ids.packed_projection(session, which)
    _holds(identity)
    # independent: one matmul with the heads' matrices side by side
    p = session.params
    w = {"Q": p.W_Q, "K": p.W_K, "V": p.W_V}[which]
    heads, d_model, d = w.shape
    glued = np.concatenate(list(w), axis=1)
    one = p.X @ glued + (
        0 if p.b_Q is None else {"Q": p.b_Q, "K": p.b_K, "V": p.b_V}[which].ravel()
    )
    np.testing.assert_allclose(identity.rows[0].parts[0].matrix, one, rtol=1e-12, atol=1e-12)
    assert len(identity.rows[1].parts) == heads


@settings(max_examples=60, deadline=None)
@given(sessions())
def test_split_concat_identity_is_exact(session):
    identity = ids.split_concat(session)
    assert identity.max_abs == 0.0
    t = session.run()
    for i, part in enumerate(identity.rows[1].parts):
        assert np.array_equal(part.matrix, t.heads[i])


@settings(max_examples=80, deadline=None)
@given(sessions(), st.randoms(use_true_random=False))
def test_permuting_heads_keeps_y_with_gqa_mqa_bias_rope_ablation(session, rnd):
    c = session.config
    # a random valid permutation: shuffle the groups, then heads within each group
    groups = list(range(c.h_kv))
    rnd.shuffle(groups)
    perm = []
    for g in groups:
        members = list(range(g * c.group_size, (g + 1) * c.group_size))
        rnd.shuffle(members)
        perm += members
    _holds(ids.permutation_identity(session, perm))
    permuted = ids.permute_heads(session, perm)
    # the heads really moved: new head j's weights are old head perm[j]'s, Z_j follows
    before, after = session.run(), permuted.run()
    for j, old in enumerate(perm):
        assert np.array_equal(permuted.params.W_Q[j], session.params.W_Q[old])
        np.testing.assert_allclose(after.heads[j], before.heads[old], rtol=1e-12, atol=1e-12)
    assert sorted(permuted.config.ablate) == sorted(perm.index(i) for i in c.ablate)


@pytest.mark.parametrize(("h", "h_kv", "perm"), [(4, 2, [1, 2, 0, 3]), (6, 3, [0, 2, 1, 3, 4, 5])])
def test_a_permutation_that_splits_a_kv_group_is_refused(h, h_kv, perm):
    cfg = Config(n=3, d_model=4, h=h, h_kv=h_kv, d_k=2, d_v=2)
    with pytest.raises(ValueError, match="share K/V head"):
        ids.check_permutation(cfg, perm)


@pytest.mark.parametrize("perm", [[0, 0, 1, 2], [0, 1, 2], [0, 1, 2, 4], ["a", 1, 2, 3]])
def test_a_list_that_is_not_a_permutation_is_refused(perm):
    cfg = Config(n=3, d_model=4, h=4, d_k=2, d_v=2)
    with pytest.raises(ValueError, match="permutation"):
        ids.check_permutation(cfg, perm)


@pytest.mark.parametrize(("h", "h_kv"), [(1, 1), (4, 4), (4, 2), (6, 3), (4, 1)])
def test_reversing_the_heads_is_always_a_valid_permutation(h, h_kv):
    cfg = Config(n=3, d_model=4, h=h, h_kv=h_kv, d_k=2, d_v=2)
    assert ids.check_permutation(cfg, ids.default_permutation(cfg)) == tuple(range(h))[::-1]


@settings(max_examples=60, deadline=None)
@given(sessions())
def test_folding_the_scale_into_w_q_keeps_scores_and_weights(session):
    identity = ids.fold_scale(session)
    _holds(identity)
    folded = ids.folded_scale(session)
    assert folded.config.scale == 1.0
    s = session.config.effective_scale
    np.testing.assert_allclose(folded.params.W_Q, session.params.W_Q * s)
    # the session itself is not touched
    assert session.config.scale != 1.0 or s == 1.0
    assert not np.shares_memory(folded.params.W_Q, session.params.W_Q)


@settings(max_examples=60, deadline=None)
@given(sessions(), st.integers(0, 50), st.integers(0, 50), st.floats(-100, 100))
def test_adding_a_constant_to_a_row_of_scores_keeps_its_softmax(session, head, query, c):
    head %= session.config.h
    query %= session.config.n
    identity = ids.softmax_shift(session, head, query, c)
    _holds(identity)
    t = session.run()
    np.testing.assert_allclose(identity.rows[1].parts[0].matrix[0], t.weights[head, query])
    row, shifted = (p.matrix[0] for p in identity.rows[0].parts)
    finite = np.isfinite(row)
    np.testing.assert_allclose(shifted[finite] - row[finite], c, atol=1e-12)
    assert np.all(np.isneginf(shifted[~finite]))


def test_shift_refuses_bad_head_query_and_constant():
    s = Session(
        Config(n=3, d_model=4, h=2, d_k=2, d_v=2),
        default_tokens(3),
        Parameters(
            **{
                k: np.ones(v)
                for k, v in Config(n=3, d_model=4, h=2, d_k=2, d_v=2).parameter_shapes().items()
            }
        ),
    )
    for kw, msg in (
        ({"head": 2, "query": 0}, "head 2"),
        ({"head": 0, "query": 3}, "query 3"),
        ({"head": 0, "query": 0, "c": float("inf")}, "finite"),
    ):
        with pytest.raises(ValueError, match=msg):
            ids.softmax_shift(s, **kw)


def test_compare_counts_equal_infinities_as_equal():
    a = np.array([[1.0, -np.inf]])
    assert ids.compare("x", a, a.copy()).max_abs == 0.0
    assert ids.compare("x", a, np.array([[1.5, -np.inf]])).max_abs == 0.5
