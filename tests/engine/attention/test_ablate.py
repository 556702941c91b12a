"""Head ablation: Z_i = 0 for the switched-off heads, weights untouched, Y = the rest + b_O."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Config, Session, forward, random_parameters
from mha_gui.engine.attention.incremental import IncrementalTrace
from mha_gui.engine.layer.session import default_tokens


@st.composite
def ablated_layers(draw):
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    n, d_model, d_k, d_v = (draw(st.integers(1, 5)) for _ in range(4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    args = dict(
        x=rng.normal(size=(n, d_model)),
        w_q=rng.normal(size=(h, d_model, d_k)),
        w_k=rng.normal(size=(h_kv, d_model, d_k)),
        w_v=rng.normal(size=(h_kv, d_model, d_v)),
        w_o=rng.normal(size=(h * d_v, d_model)),
        b_o=rng.normal(size=(d_model,)) if draw(st.booleans()) else None,
        causal=draw(st.booleans()),
    )
    ablate = draw(st.lists(st.integers(0, h - 1), max_size=h + 1))
    return args, ablate


@settings(max_examples=200, deadline=None)
@given(ablated_layers())
def test_ablated_output_is_the_other_heads_plus_bias(case):
    args, ablate = case
    full = forward(**args)
    t = forward(**args, ablate=ablate)
    off = sorted(set(ablate))
    kept = [i for i in range(full.heads.shape[0]) if i not in off]
    b_o = 0 if args["b_o"] is None else args["b_o"]
    expect = full.contributions[kept].sum(axis=0) + b_o
    np.testing.assert_allclose(t.output, expect, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(t.weights, full.weights)  # still computed and shown
    np.testing.assert_array_equal(t.scores, full.scores)
    assert not t.heads[off].any() and not t.contributions[off].any()
    np.testing.assert_array_equal(t.heads[kept], full.heads[kept])
    np.testing.assert_allclose(t.contributions.sum(axis=0) + b_o, t.output, atol=1e-12)
    assert t.ablate == tuple(off)


def test_every_head_off_leaves_only_the_bias():
    rng = np.random.default_rng(0)
    args = [rng.normal(size=s) for s in ((3, 2), (2, 2, 2), (2, 2, 2), (2, 2, 2), (4, 2))]
    b_o = np.array([0.5, -1.0])
    t = forward(*args, b_o=b_o, ablate=range(2))
    np.testing.assert_array_equal(t.output, np.tile(b_o, (3, 1)))
    assert not t.concat.any()


@pytest.mark.parametrize(
    "ablate, words",
    [
        ([2], "ablate head 2 is out of range: this layer has query heads 0..1"),
        ([-1], "ablate head -1 is out of range"),
        (["1"], "whole-number head indices, got '1'"),
        ([1.0], "whole-number head indices, got 1.0"),
        ([True], "whole-number head indices, got True"),
        (1, "must be a list of query-head indices"),
        ("01", "must be a list of query-head indices"),
    ],
)
def test_bad_ablate_is_refused_with_the_reason(ablate, words):
    rng = np.random.default_rng(0)
    args = [rng.normal(size=s) for s in ((3, 2), (2, 2, 2), (2, 2, 2), (2, 2, 2), (4, 2))]
    with pytest.raises(ValueError) as info:
        forward(*args, ablate=ablate)
    assert words in str(info.value)
    with pytest.raises(ValueError) as info:
        Config(ablate=ablate)
    assert words in str(info.value)


def test_config_normalises_and_keeps_ablation_through_resizes():
    c = Config.from_dict({"n": 2, "d_model": 2, "h": 4, "d_k": 2, "d_v": 2, "ablate": [3, 1, 3]})
    assert c.ablate == (1, 3) and c.to_dict()["ablate"] == [1, 3]
    assert Config.from_dict(c.to_dict()) == c
    assert c.with_changes(h=2, h_kv=2).ablate == (1,)  # heads that no longer exist drop out
    assert c.with_changes(n=5).ablate == (1, 3)
    with pytest.raises(ValueError, match="out of range"):
        c.with_changes(h=2, h_kv=2, ablate=(3,))
    assert "ablate" not in Config().to_dict()


def test_session_run_applies_the_configs_ablation():
    cfg = Config(n=3, d_model=4, h=3, d_k=2, d_v=2, bias=True, ablate=(0, 2))
    s = Session(cfg, default_tokens(3), random_parameters(cfg, seed=4))
    t = s.run()
    plain = Session(cfg.with_changes(ablate=()), s.tokens, s.params).run()
    np.testing.assert_allclose(t.output, plain.contributions[1] + s.params.b_O, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 1000), st.lists(st.sets(st.integers(0, 3)), min_size=1, max_size=8))
def test_switching_ablation_incrementally_equals_a_fresh_forward(seed, steps):
    cfg = Config(n=5, d_model=6, h=4, h_kv=2, d_k=2, d_v=3, causal=True, bias=True, rope=True)
    s = Session(cfg, default_tokens(5), random_parameters(cfg, seed=seed))
    inc = IncrementalTrace(s)
    inc.refresh()
    for off in steps:
        before = set(s.config.ablate)
        s = Session(s.config.with_changes(ablate=tuple(off)), s.tokens, s.params)
        inc.reset(s, same_numbers=True)
        t, heads = inc.refresh()
        assert heads == before ^ off  # only the switched heads were recomputed
        ref = s.run()
        for name in ("weights", "heads", "concat", "output", "contributions"):
            np.testing.assert_allclose(getattr(t, name), getattr(ref, name), atol=1e-12)
