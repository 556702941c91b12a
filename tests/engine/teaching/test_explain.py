"""The hover texts quote the trace's own numbers (NumPy only, no Qt)."""

import dataclasses
import math

import numpy as np
import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.teaching.explain import KINDS, explain_cell, num


def _explain(session, trace, kind, head, row, col):
    return explain_cell(
        kind,
        head,
        row,
        col,
        trace=trace,
        params=session.params,
        config=session.config,
        tokens=session.tokens,
    )


@pytest.fixture(scope="module")
def toy():
    s = load_preset("toy")
    return s, s.run()


@pytest.fixture(scope="module")
def causal():
    s = load_preset("causal-6x16")
    return s, s.run()


def test_weight_cell_shows_softmax_numbers(toy):
    s, t = toy
    text = _explain(s, t, "A", 1, 2, 0)
    assert text.startswith("A_1[2,0] = softmax(S_1[2,:])[0] = e^")
    row = t.scores[1, 2]
    assert f"e^{num(row[0])}" in text
    assert num(math.exp(row[0])) in text
    assert num(np.exp(row).sum()) in text
    assert text.split("   ")[0].endswith(f"= {num(t.weights[1, 2, 0])}")
    assert '"sat"' in text and '"the"' in text


def test_score_cell_shows_dot_product_and_scale(toy):
    s, t = toy
    text = _explain(s, t, "S", 0, 1, 2)
    dot = t.q[0, 1] @ t.k[0, 2]
    assert text.startswith("S_0[1,2] = q_1·k_2 / √2")
    assert f"{num(dot)} / {num(math.sqrt(2))} = {num(t.scores[0, 1, 2])}" in text
    assert 'query "cat" → key "sat"' in text


def test_blocked_cells_say_why(causal):
    s, t = causal
    assert t.mask[1, 3]
    s_text = _explain(s, t, "S", 2, 1, 3)
    a_text = _explain(s, t, "A", 2, 1, 3)
    assert "−∞" in s_text and "causal" in s_text
    assert "= 0" in a_text and "causal" in a_text


def test_projection_and_mixing_and_output(toy):
    s, t = toy
    q = _explain(s, t, "Q", 1, 2, 1)
    assert q.startswith("Q_1[2,1] = x_2·W_1^Q[:,1] = ")
    assert f"= {num(t.q[1, 2, 1])}   (query" in q
    z = _explain(s, t, "Z", 0, 3, 1)
    assert f"= {num(t.heads[0, 3, 1])}   (query" in z
    assert "A_0[3,j]·V_0[j,1]" in z
    y = _explain(s, t, "Y", None, 2, 1)
    parts = " + ".join(num(t.contributions[i, 2, 1]) for i in range(2))
    assert f"= {parts} = {num(t.output[2, 1])}" in y
    h = _explain(s, t, "H", None, 2, 3)
    assert h.startswith(f"H[2,3] = Z_1[2,1] = {num(t.concat[2, 3])}")
    c = _explain(s, t, "C", 1, 2, 1)
    assert f"= {num(t.contributions[1, 2, 1])}" in c


def test_grouped_heads_name_their_kv_group():
    s = load_preset("gqa")
    t = s.run()
    text = _explain(s, t, "K", 5, 0, 0)
    assert text.startswith("K_1[0,0]") and "W_1^K" in text
    assert f"= {num(t.k[1, 0, 0])}" in text


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_every_preset_cell_explains(kind, causal):
    s, t = causal
    if kind in ("QR", "KR"):  # the rotated projections exist with RoPE on
        s = dataclasses.replace(s, config=s.config.with_changes(rope=True))
        t = s.run()
    head = None if kind in ("X", "H", "Y") else 3
    text = _explain(s, t, kind, head, 5, 3)
    assert "= " in text and "nan" not in text.lower()


def test_tiny_numbers_keep_significant_digits():
    assert num(0.00042) == "0.00042"
    assert num(0.5) == "0.5"
    assert num(-2.0) == "-2"
