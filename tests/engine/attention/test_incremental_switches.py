"""The incremental trace's switch path (`reset(session, same_numbers=True)`): changing the
extra mask or the ablated heads with the numbers unchanged, mixed with ordinary edits,
always ends equal to a fresh forward — and recomputes only what the switch touched."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine.attention import incremental
from mha_gui.engine.attention.incremental import IncrementalTrace
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import random_parameters
from mha_gui.engine.layer.session import Session, default_tokens
from tests.engine.attention.spies import counted

FIELDS = ("scores", "weights", "heads", "concat", "output", "contributions")


def assert_equals_fresh_forward(t, session):
    ref = session.run()
    for name in FIELDS:
        np.testing.assert_allclose(getattr(t, name), getattr(ref, name), atol=1e-12)
    assert np.array_equal(np.isneginf(t.scores), np.isneginf(ref.scores))
    assert np.array_equal(t.mask, ref.mask)


def session_for(seed: int, causal: bool) -> Session:
    cfg = Config(n=5, d_model=6, h=4, h_kv=2, d_k=2, d_v=3, causal=causal, bias=True, rope=True)
    return Session(cfg, default_tokens(5), random_parameters(cfg, seed=seed))


step = st.one_of(
    st.tuples(st.just("mask"), st.integers(0, 4), st.integers(0, 4)),
    st.tuples(st.just("ablate"), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("edit"), st.sampled_from(["W_Q", "W_K", "W_O", "X"]), st.integers(0, 1)),
)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 1000), st.booleans(), st.lists(st.lists(step, max_size=3), max_size=6))
def test_mask_and_ablation_switches_mixed_with_edits_equal_a_fresh_forward(seed, causal, turns):
    s = session_for(seed, causal)
    inc = IncrementalTrace(s)
    inc.refresh()
    for turn in turns:  # everything in one turn is refreshed once
        for kind, a, b in turn:
            if kind == "mask":
                mask = np.zeros((5, 5), bool) if s.mask is None else s.mask.copy()
                mask[a, b] = not mask[a, b]
                s = dataclasses.replace(s, mask=mask if mask.any() else None)
                inc.reset(s, same_numbers=True)
            elif kind == "ablate":
                off = set(s.config.ablate) | {a} if b else set(s.config.ablate) - {a}
                s = dataclasses.replace(s, config=s.config.with_changes(ablate=tuple(off)))
                inc.reset(s, same_numbers=True)
            else:
                array = getattr(s.params, a)
                array.flat[b] += 0.25
                inc.mark(a, None)
        t, _heads = inc.refresh()
        assert_equals_fresh_forward(t, s)


def test_a_mask_cell_recomputes_only_its_row(monkeypatch):
    s = session_for(3, causal=False)
    inc = IncrementalTrace(s)
    inc.refresh()
    calls = []
    for name in ("scores_step", "softmax_step", "mix_step", "project_head", "run_all"):
        real = getattr(incremental, name)
        monkeypatch.setattr(incremental, name, counted(real, lambda k, name=name: name, calls))
    before = inc.trace.scores.copy()
    mask = np.zeros((5, 5), bool)
    mask[2, 4] = True
    s = dataclasses.replace(s, mask=mask)
    inc.reset(s, same_numbers=True)
    t, heads = inc.refresh()
    assert heads == {0, 1, 2, 3}  # every head's row 2 changed
    # no whole-head step: one softmax per head, of that row alone
    assert calls == ["softmax_step"] * 4
    changed = np.argwhere(~np.isclose(t.scores, before, equal_nan=True))
    assert set(changed[:, 1]) == {2}
    assert_equals_fresh_forward(t, s)


def test_switching_a_head_on_only_mixes_it_again(monkeypatch):
    s = session_for(5, causal=True)
    s = dataclasses.replace(s, config=s.config.with_changes(ablate=(1,)))
    inc = IncrementalTrace(s)
    inc.refresh()
    calls = []
    for name in ("scores_step", "softmax_step", "mix_step"):
        real = getattr(incremental, name)
        monkeypatch.setattr(
            incremental, name, counted(real, lambda k, name=name: (name, k.get("heads")), calls)
        )
    s = dataclasses.replace(s, config=s.config.with_changes(ablate=()))
    inc.reset(s, same_numbers=True)
    t, heads = inc.refresh()
    assert heads == {1} and calls == [("mix_step", [1])]
    assert_equals_fresh_forward(t, s)
    s = dataclasses.replace(s, config=s.config.with_changes(ablate=(1, 2)))
    inc.reset(s, same_numbers=True)
    calls.clear()
    t, heads = inc.refresh()
    assert heads == {1, 2} and calls == []  # switched off: Z = 0, nothing to compute
    assert_equals_fresh_forward(t, s)
