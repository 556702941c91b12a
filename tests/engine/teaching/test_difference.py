"""now − snapshot as a StageData: every panel of every stage is an independent numpy
subtraction of the two sessions' forward passes."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.engine.attention.forward import forward
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import random_parameters
from mha_gui.engine.layer.session import Session, default_tokens
from mha_gui.engine.panels.stage_panels import describe_stage
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.teaching.difference import DifferenceData, shape_problem


def _session(cfg: Config, seed: int, mask=None) -> Session:
    return Session(cfg, default_tokens(cfg.n), random_parameters(cfg, seed), mask=mask)


def _reference(s: Session):
    p = s.params
    t = forward(
        p.X, p.W_Q, p.W_K, p.W_V, p.W_O, b_q=p.b_Q, b_k=p.b_K, b_v=p.b_V, b_o=p.b_O,
        mask=s.mask, causal=s.config.causal, scale=s.config.scale,
        rope=s.config.rope_spec, ablate=s.config.ablate,
    )  # fmt: skip
    return t


@pytest.mark.parametrize("h_kv", [4, 2, 1])
@pytest.mark.parametrize("stage", [s.name for s in STAGES])
def test_every_panel_is_now_minus_then(h_kv, stage):
    cfg = Config(n=5, d_model=6, h=4, h_kv=h_kv, d_k=2, d_v=3, bias=True, rope=True)
    now, then = _session(cfg, 1), _session(cfg, 2)
    view = describe_stage(DifferenceData(now, then), stage)
    a, b = _reference(now), _reference(then)
    group = cfg.h // h_kv
    expected = {
        "X": lambda i: now.params.X - then.params.X,
        "Q": lambda i: a.q[i] - b.q[i],
        "K": lambda i: a.k[i // group] - b.k[i // group],
        "V": lambda i: a.v[i // group] - b.v[i // group],
        "QR": lambda i: a.q_rot[i] - b.q_rot[i],
        "KR": lambda i: a.k_rot[i // group] - b.k_rot[i // group],
        "S": lambda i: a.scores[i] - b.scores[i],
        "A": lambda i: a.weights[i] - b.weights[i],
        "Z": lambda i: a.heads[i] - b.heads[i],
        "H": lambda i: a.concat - b.concat,
        "Y": lambda i: a.output - b.output,
        "C": lambda i: a.contributions[i] - b.contributions[i],
    }
    for p in view.panels:
        np.testing.assert_allclose(p.matrix, expected[p.kind](p.head), rtol=1e-12, atol=1e-12)


def test_scores_blocked_on_either_side_have_no_difference_weights_do():
    cfg = Config(n=4, d_model=4, h=2, d_k=2, d_v=2)
    now = _session(cfg.with_changes(causal=True), 3)
    then = _session(cfg, 3)
    data = DifferenceData(now, then)
    t = data.trace()
    upper = np.triu(np.ones((4, 4), bool), 1)
    assert np.array_equal(t.mask, upper) and t.masks_differ
    assert np.all(np.isneginf(t.scores[:, upper]))
    np.testing.assert_allclose(
        t.weights, _reference(now).weights - _reference(then).weights, atol=1e-15
    )
    assert np.all(np.isfinite(t.weights))


def test_switches_may_differ_dimensions_may_not():
    cfg = Config(n=4, d_model=4, h=2, d_k=2, d_v=2)
    DifferenceData(_session(cfg.with_changes(bias=True, scale=0.3), 1), _session(cfg, 1))
    other = cfg.with_changes(n=5)
    assert shape_problem(cfg, other) == (
        "the snapshot has n=5 (now 4): a difference needs the same shapes "
        "(n, d_model, h, h_kv, d_k, d_v)"
    )
    with pytest.raises(ValueError, match="n=5 \\(now 4\\)"):
        DifferenceData(_session(cfg, 1), _session(other, 1))


def test_a_bias_only_one_side_has_counts_as_zero():
    cfg = Config(n=3, d_model=4, h=2, d_k=2, d_v=2)
    now = _session(cfg.with_changes(bias=True), 4)
    data = DifferenceData(now, _session(cfg, 4))
    np.testing.assert_array_equal(data.matrix("b_O"), now.params.b_O)
    np.testing.assert_array_equal(
        DifferenceData(_session(cfg, 4), now).matrix("b_O"), -now.params.b_O
    )
