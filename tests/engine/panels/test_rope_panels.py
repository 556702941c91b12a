"""With RoPE on, the projections stage shows Q and K before and after rotation."""

import dataclasses
import math

import numpy as np
import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.panels.stage_panels import SessionData, describe_stage, panel_keys, plan_for
from mha_gui.engine.panels.stages import formula_for, shapes_line
from mha_gui.engine.teaching.explain import explain_cell
from mha_gui.export.latex import latex_formula, stage_document


def _rope(session, **changes):
    return dataclasses.replace(session, config=session.config.with_changes(rope=True, **changes))


def test_rotated_panels_only_with_rope():
    toy = load_preset("toy")
    assert [k for k, _ in panel_keys("projections", toy.config)].count("QR") == 0
    keys = panel_keys("projections", _rope(toy).config)
    assert [k for k, h in keys if h == 0] == ["Q", "QR", "K", "KR", "V"]
    for stage in ("input", "scores", "weights", "output"):
        assert plan_for(stage, _rope(toy).config) == plan_for(stage, toy.config)


@pytest.mark.parametrize("preset", ["toy", "gqa"])
def test_rotated_matrices_are_the_trace_q_rot_and_k_rot(preset):
    s = _rope(load_preset(preset), rope_theta=100.0)
    trace = s.run()
    view = describe_stage(SessionData(s, trace), "projections")
    rows = {row.kind: row for row in view.rows}
    for p in rows["QR"].panels:
        np.testing.assert_array_equal(p.matrix, trace.q_rot[p.head])
        assert p.title == f"head {p.head} · Q̃{'₀₁₂₃₄₅₆₇'[p.head]}"
    for p in rows["KR"].panels:
        np.testing.assert_array_equal(p.matrix, trace.k_rot[s.config.kv_group(p.head)])
    assert "θ = 100" in rows["QR"].caption
    if s.config.variant != "MHA":
        assert "K̃_g" in rows["KR"].caption and "share K̃_0" in rows["KR"].caption


def test_formulas_name_the_rotation():
    c = _rope(load_preset("toy")).config
    assert formula_for("projections", c).endswith("Q̃_i = RoPE(Q_i),  K̃_i = RoPE(K_i)")
    assert formula_for("scores", c) == "S_i = Q̃_i K̃_iᵀ / √d_k"
    assert formula_for("weights", c.with_changes(h_kv=1)) == "A_i = softmax(Q̃_i K̃_gᵀ / √d_k)"
    assert shapes_line("scores", c) == "Q̃_i, K̃_i: 4×2 → S_i: 4×4"  # one shape named once
    assert r"\tilde{Q}_i = \operatorname{RoPE}(Q_i)" in latex_formula("projections", c)
    assert r"\tilde{Q}_i \tilde{K}_i^\top" in latex_formula("scores", c)
    assert formula_for("scores", load_preset("toy").config) == "S_i = Q_i K_iᵀ / √d_k"


def test_latex_prints_the_rotated_matrices():
    text = stage_document(_rope(load_preset("toy")), "projections")
    assert r"\tilde{Q}_{0} = " in text and r"\tilde{K}_{1} = " in text


def test_a_rotated_cell_explains_its_pair_and_angle():
    s = _rope(load_preset("random", heads=2, d_model=8))  # d_k = 4: pairs (0,2), (1,3)
    t = s.run()
    q = t.q[1, 3]
    omega = 10000.0 ** (-2 * 1 / 4)
    angle = 3 * omega
    expected = q[3] * math.cos(angle) + q[1] * math.sin(angle)
    assert math.isclose(t.q_rot[1, 3, 3], expected, rel_tol=1e-12)
    text = explain_cell("QR", 1, 3, 3, trace=t, params=s.params, config=s.config, tokens=s.tokens)
    assert text.startswith("Q̃_1[3,3] = Q_1[3,3]·cos α + Q_1[3,1]·sin α")
    assert "α = position · ω_1 = 3 · 0.01 = 0.03 rad" in text
    assert "pair (1, 3)" in text
    first = explain_cell("KR", 0, 2, 0, trace=t, params=s.params, config=s.config)
    assert "K_0[2,0]·cos α − K_0[2,2]·sin α" in first
    # the scores explain the rotated vectors they multiply
    score = explain_cell("S", 0, 2, 1, trace=t, params=s.params, config=s.config)
    assert "q̃_2·k̃_1" in score
    assert f"{float(t.q_rot[0, 2] @ t.k_rot[0, 1]):.3f}"[:4] in score
