"""The one description of every stage: every consumer reads it, so pin what it says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.engine.panels.stage_panels import (
    KINDS,
    PLANS,
    SessionData,
    describe_stage,
    panel_keys,
    stage_levels,
    symbol,
    weights_colours,
)
from mha_gui.engine.panels.stages import STAGES


@pytest.mark.parametrize("stage", [s.name for s in STAGES])
def test_every_panel_holds_the_trace_matrix_it_names(stage):
    session = load_preset("gqa")
    data = SessionData(session)
    t = data.trace()
    view = describe_stage(data, stage)
    assert [p.key for p in view.panels] == panel_keys(stage, session.config)
    c = session.config
    for p in view.panels:
        expected = {
            "X": lambda p: session.params.X,
            "Q": lambda p: t.q[p.head],
            "K": lambda p: t.k[c.kv_group(p.head)],
            "V": lambda p: t.v[c.kv_group(p.head)],
            "S": lambda p: t.scores[p.head],
            "A": lambda p: t.weights[p.head],
            "Z": lambda p: t.heads[p.head],
            "H": lambda p: t.concat,
            "Y": lambda p: t.output,
            "C": lambda p: t.contributions[p.head],
        }[p.kind](p)
        np.testing.assert_array_equal(p.matrix, expected)
        assert len(p.row_labels) == p.matrix.shape[0] and len(p.col_labels) == p.matrix.shape[1]


def test_levels_cover_every_head_even_when_one_head_is_described():
    session = load_preset("toy")
    data = SessionData(session)
    everyone = describe_stage(data, "output")
    one = describe_stage(data, "output", heads=[1])
    assert one.levels == everyone.levels
    assert [p.head for p in one.rows[1].panels] == [1]
    top = max(float(np.abs(p.matrix).max()) for p in everyone.panels)
    assert everyone.levels[1] >= top and everyone.levels[1] < top * 1.1
    assert describe_stage(data, "weights").levels == (0.0, 1.0)


def test_symbols_in_every_notation():
    c = load_preset("gqa").config  # 8 heads sharing 2 K/V heads
    assert symbol("K", 5, c).text == "K_1" and symbol("K", 5, c).latex == "K_{1}"
    assert symbol("S", 5, c).pretty == "S₅" and symbol("S", 5, c).html == "S<sub>5</sub>"
    assert symbol("C", 1, c).text == "C_1"
    assert "W_O[" in symbol("C", 1, c).pretty
    assert symbol("H", None, c).text == "H"
    with pytest.raises(ValueError, match="unknown matrix kind"):
        symbol("W", 0, c)


def test_every_stage_has_a_plan_and_every_row_kind_is_known():
    assert set(PLANS) == {s.name for s in STAGES}
    for plan in PLANS.values():
        assert all(row.kind in KINDS for row in plan.rows)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 1000),
    tokens=st.integers(1, 9),
    heads=st.sampled_from([1, 2, 4]),
    mode=st.sampled_from(["head", "row"]),
)
def test_weights_colour_ranges_scale_to_one_and_keep_the_numbers(seed, tokens, heads, mode):
    session = random_session(seed=seed, tokens=tokens, d_model=4 * heads, heads=heads)
    view = describe_stage(SessionData(session), "weights", weights_range=mode)
    assert view.levels == (0.0, 1.0)
    for p in view.panels:
        np.testing.assert_array_equal(p.matrix, session.run().weights[p.head])
        top = p.display.max() if mode == "head" else p.display.max(axis=1)
        np.testing.assert_allclose(top, 1.0)
        ratio = p.matrix / (p.matrix.max() if mode == "head" else p.matrix.max(axis=1)[:, None])
        np.testing.assert_allclose(p.display, ratio)
    assert "max" in view.bar_label


def test_weights_colours_of_an_all_blocked_row_stay_zero():
    a = np.array([[0.5, 0.5], [0.0, 0.0]])
    np.testing.assert_array_equal(weights_colours(a, "row"), [[1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="unknown weights range"):
        weights_colours(a, "log")


def test_stage_levels_round_the_peak_up():
    assert stage_levels("scores", [0.40626, 0.1]) == (-0.41, 0.41)
    assert stage_levels("scores", []) == (-1.0, 1.0)
