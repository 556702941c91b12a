"""Partial recomputes after any edit sequence equal a fresh forward()."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Config, Session, random_parameters
from mha_gui.engine.attention.incremental import IncrementalTrace
from mha_gui.engine.layer.session import default_tokens
from tests.engine.attention.spies import counted

NAMES = ["X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"]


@st.composite
def scenarios(draw, switches=False):
    """A config, a seed and a list of edits; `switches` adds RoPE and ablated heads."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    extra = {}
    if switches:
        extra = dict(
            rope=True,
            rope_theta=draw(st.sampled_from([10000.0, 10.0])),
            ablate=draw(st.lists(st.integers(0, h - 1), max_size=h)),
        )
    cfg = Config(
        n=draw(st.integers(1, 6)),
        d_model=draw(st.integers(1, 5)),
        h=h,
        h_kv=h_kv,
        d_k=draw(st.sampled_from([2, 4]) if switches else st.integers(1, 3)),
        d_v=draw(st.integers(1, 3)),
        causal=draw(st.booleans()),
        bias=draw(st.booleans()),
        **extra,
    )
    edits = draw(
        st.lists(
            st.tuples(
                st.sampled_from(NAMES), st.integers(0, 10**6), st.floats(-3, 3), st.booleans()
            ),
            max_size=25,
        )
    )
    return cfg, draw(st.integers(0, 1000)), edits


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_incremental_equals_fresh_forward(scenario):
    _check_edit_sequence(scenario)


@settings(max_examples=150, deadline=None)
@given(scenarios(switches=True))
def test_incremental_with_rope_and_ablation_equals_fresh_forward(scenario):
    t = _check_edit_sequence(scenario)
    assert t.q_rot is not None and not t.heads[list(scenario[0].ablate)].any()


def _check_edit_sequence(scenario):
    cfg, seed, edits = scenario
    s = Session(cfg, default_tokens(cfg.n), random_parameters(cfg, seed=seed))
    inc = IncrementalTrace(s)
    inc.refresh()
    for name, where, value, refresh_now in edits:
        arrays = s.params.as_dict()
        if name not in arrays:
            continue
        a = arrays[name]
        idx = np.unravel_index(where % a.size, a.shape)
        a[idx] = value
        head = int(idx[0]) if name in ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V") else None
        inc.mark(name, head)
        if refresh_now:
            inc.refresh()
    t, _ = inc.refresh()
    ref = s.run()
    for field in ("q", "k", "v", "weights", "heads", "concat", "output", "contributions"):
        np.testing.assert_allclose(getattr(t, field), getattr(ref, field), rtol=1e-12, atol=1e-12)
    for field in ("q_rot", "k_rot"):
        if getattr(ref, field) is None:
            assert getattr(t, field) is None
        else:
            np.testing.assert_allclose(getattr(t, field), getattr(ref, field), atol=1e-12)
    assert np.array_equal(np.isneginf(t.scores), np.isneginf(ref.scores))
    return t


def test_reports_which_heads_changed():
    cfg = Config(n=3, d_model=4, h=4, h_kv=2, d_k=2, d_v=2)
    s = Session(cfg, default_tokens(3), random_parameters(cfg))
    inc = IncrementalTrace(s)
    assert inc.refresh()[1] is None  # first refresh: everything
    s.params.W_K[1, 0, 0] += 1
    inc.mark("W_K", 1)
    assert inc.refresh()[1] == {2, 3}  # K/V head 1 serves query heads 2 and 3
    s.params.W_O[0, 0] += 1
    inc.mark("W_O")
    assert inc.refresh()[1] == set()  # only the output projection
    s.params.X[0, 0] += 1
    inc.mark("X")
    assert inc.refresh()[1] is None


def test_long_scrub_of_one_head_stays_exact():
    """Hundreds of rank updates of Y must not drift from a fresh forward()."""
    cfg = Config(n=7, d_model=6, h=4, h_kv=2, d_k=3, d_v=2, causal=True)
    s = Session(cfg, default_tokens(7), random_parameters(cfg, seed=3))
    inc = IncrementalTrace(s)
    inc.refresh()
    rng = np.random.default_rng(0)
    for step in range(300):
        s.params.W_Q[1, step % 6, step % 3] = rng.normal(0, 3)
        inc.mark("W_Q", 1)
        t, heads = inc.refresh()
        assert heads == {1}
    np.testing.assert_allclose(t.output, s.run().output, rtol=1e-12, atol=1e-12)


def test_an_edit_of_a_few_rows_of_x_redoes_their_projections_only(monkeypatch):
    """A layer large enough for the jobs on every core, with RoPE and GQA: an edit of
    two rows of X projects those rows (not the layer) and still equals forward()."""
    import mha_gui.engine.attention.scheduler as scheduler

    cfg = Config(n=96, d_model=256, h=8, h_kv=4, d_k=32, d_v=32, rope=True, bias=True)
    s = Session(cfg, default_tokens(cfg.n), random_parameters(cfg, seed=5))
    inc = IncrementalTrace(s)
    inc.refresh()
    projected = []
    for name in ("_project_packed", "_project_heads", "project_all"):
        original = getattr(scheduler, name)
        monkeypatch.setattr(scheduler, name, counted(original, lambda _k: 1, projected))
    monkeypatch.setattr(scheduler, "JOBS_ABOVE_FLOPS", 0)  # the jobs' path
    s.params.X[3, 7] += 0.5
    s.params.X[60, 0] -= 2.0
    inc.mark("X")
    t, heads = inc.refresh()
    assert heads is None and projected == []
    ref = s.run()
    for field in ("q", "k", "v", "q_rot", "k_rot", "weights", "heads", "output"):
        np.testing.assert_allclose(getattr(t, field), getattr(ref, field), rtol=1e-12, atol=1e-12)
    # a third of the rows: the whole projection is cheaper than its rows one by one
    s.params.X[: cfg.n // 3] += 0.25
    inc.mark("X")
    t, _ = inc.refresh()
    assert projected
    np.testing.assert_allclose(t.output, s.run().output, rtol=1e-12, atol=1e-12)
