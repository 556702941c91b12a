"""Exercises (issue 10): reproducible hidden cells, checking at the precision shown, hints
that give the formula with its numbers but not the answer, the score, refusals."""

import numpy as np
import pytest

from mha_gui.engine import Config, Session, load_preset, random_parameters
from mha_gui.engine.layer.numbers import NumberFormat, num
from mha_gui.engine.layer.session import default_tokens
from mha_gui.engine.panels.stages import STAGE_NAMES, as_stage
from mha_gui.engine.teaching.exercises import (
    check_answer,
    make_exercise,
    misleading,
    shown_tolerance,
    stage_cells,
)


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_same_seed_same_cells_other_seed_other_cells(stage):
    s = load_preset("toy")
    t = s.run()
    first = make_exercise(s, stage, 4, seed=11, trace=t).cells
    assert first == make_exercise(s, stage, 4, seed=11, trace=t).cells
    others = {
        tuple(c.key for c in make_exercise(s, stage, 4, seed=k, trace=t).cells)
        for k in range(12, 20)
    }
    assert len(others - {tuple(c.key for c in first)}) >= 7
    keys = [c.key for c in first]
    assert len(set(keys)) == 4


def test_cells_hold_the_true_values_and_skip_blocked_and_shared_ones():
    s = load_preset("causal-6x16")
    t = s.run()
    cells, _ = stage_cells(s, "weights", t)
    n, h = s.config.n, s.config.h
    assert len(cells) == h * n * (n + 1) // 2  # the lower triangle only
    for c in cells:
        assert c.value == t.weights[c.head, c.row, c.col] and c.col <= c.row
    gqa = load_preset("gqa")  # 8 query heads, 2 K/V heads: K_g and V_g counted once
    c = gqa.config
    cells, _ = stage_cells(gqa, "projections")
    assert len(cells) == c.n * (c.h * c.d_k + c.h_kv * (c.d_k + c.d_v))


def test_answers_are_checked_at_the_precision_shown():
    s = load_preset("toy")
    ex = make_exercise(s, "weights", blanks=3, seed=2)
    assert ex.tolerance == pytest.approx(0.005)  # weights print with 2 decimals
    cell = ex.cells[0]
    shown = round(cell.value, 2)
    assert ex.submit(0, f"{shown}").correct
    assert ex.submit(0, str(cell.value)).correct
    assert not ex.submit(0, f"{shown + 0.01:.2f}").correct
    assert ex.submit(1, f"{ex.cells[1].value:.2f}".replace(".", ",")).correct  # 0,42
    with pytest.raises(ValueError, match="not a number"):
        ex.submit(2, "abc")
    assert 2 not in ex.answers  # refused text changes nothing
    assert ex.score.text == "1 of 3" and ex.score.answered == 2  # cell 0's last try was wrong
    answer = ex.reveal(2)
    assert answer == f"{ex.cells[2].name} = {ex.fmt.plain(ex.cells[2].value)}"  # by tokens
    assert ex.submit(2, str(ex.cells[2].value)).correct
    assert ex.score.correct == 1  # a revealed cell never counts as right
    ex.reset()
    assert ex.score.text == "0 of 3" and not ex.revealed


def test_teacher_tolerance_and_tiny_values():
    s = load_preset("toy")
    ex = make_exercise(s, "scores", blanks=2, seed=0, tolerance=0.1)
    assert ex.submit(0, ex.cells[0].value + 0.09).correct
    assert not ex.submit(0, ex.cells[0].value + 0.11).correct
    with pytest.raises(ValueError, match="tolerance"):
        make_exercise(s, "scores", blanks=2, seed=0, tolerance=-1)
    # values printed ×10^-5 with 2 decimals: half a unit is 5e-8
    assert shown_tolerance(NumberFormat(-5, 2, 2)) == pytest.approx(5e-8)
    assert check_answer("−1.5", -1.5, 0.0)


def test_hints_give_the_formula_with_numbers_but_not_the_answer():
    s = load_preset("toy")
    for stage in STAGE_NAMES:
        ex = make_exercise(s, stage, blanks=3, seed=5)
        for i, cell in enumerate(ex.cells):
            hint = ex.hint(i)
            assert hint.startswith(ex.hints[i].split("\n")[0])
            assert f"{cell.label} = " in hint and "= ?" in hint, hint
            first_line = hint.split("\n")[1]
            assert not first_line.split("   (")[0].endswith(num(cell.value)), hint
    weights = make_exercise(s, "weights", blanks=1, seed=1)
    assert "softmax" in weights.hint(0) and "e^" in weights.hint(0)


def test_is_hidden_matches_the_cells():
    s = load_preset("toy")
    ex = make_exercise(s, "projections", blanks=5, seed=3)
    for i, cell in enumerate(ex.cells):
        assert ex.index(cell.kind, cell.head, cell.row, cell.col) == i
        assert ex.is_hidden(*cell.key[:1], cell.head, cell.row, cell.col)
    assert sum(ex.is_hidden("Q", 0, r, c) for r in range(4) for c in range(2)) == sum(
        1 for c in ex.cells if c.kind == "Q" and c.head == 0
    )


@pytest.mark.parametrize(
    "blanks, seed, message",
    [
        (0, 1, "blanks must be a whole number ≥ 1"),
        (-2, 1, "blanks"),
        (33, 1, "33 blanks asked but stage 'scores' has only 32 cells"),
        (2, -1, "seed"),
        (True, 1, "blanks"),
    ],
)
def test_refusals(blanks, seed, message):
    with pytest.raises(ValueError, match=message):
        make_exercise(load_preset("toy"), "scores", blanks=blanks, seed=seed)


def test_unknown_stage_and_rope_layers():
    with pytest.raises(ValueError, match="unknown stage"):
        make_exercise(load_preset("toy"), "softmax", blanks=1, seed=0)
    c = Config(n=3, d_model=4, h=1, d_k=2, d_v=2, rope=True)
    s = Session(c, default_tokens(3), random_parameters(c, seed=2))
    ex = make_exercise(s, "scores", blanks=9, seed=0)
    np.testing.assert_allclose(
        sorted(x.value for x in ex.cells), np.sort(s.run().scores.ravel()), atol=0
    )


def test_panel_blanks_and_shared_kv_panels():
    gqa = load_preset("gqa")  # 8 query heads share 2 K/V heads (4 each)
    ex = make_exercise(gqa, "projections", blanks=30, seed=4)
    k_cells = [c for c in ex.cells if c.kind == "K"]
    assert k_cells
    for head in range(gqa.config.h):  # every K panel of a group shows the group's blanks
        sym = f"K_{gqa.config.kv_group(head)}"
        expected = {(c.row, c.col) for c in k_cells if c.symbol == sym}
        assert set(ex.panel_blanks("K", head)) == expected
        for r, c in expected:
            assert ex.is_hidden("K", head, r, c)
    assert {c.symbol for c in k_cells} == {"K_0", "K_1"}
    q_blanks = ex.panel_blanks("Q", 0)
    assert q_blanks == {(c.row, c.col): i for i, c in enumerate(ex.cells) if c.key[:2] == ("Q", 0)}


def test_rotated_keys_are_shared_by_a_group_like_k_and_v():
    gqa = load_preset("gqa")
    roped = Session(gqa.config.with_changes(rope=True), gqa.tokens, gqa.params)
    ex = make_exercise(roped, "projections", blanks=60, seed=1)
    kr_cells = [c for c in ex.cells if c.kind == "KR"]
    assert kr_cells
    for head in range(roped.config.h):  # every K̃ panel of a group shows the group's blanks
        group = roped.config.kv_group(head)
        expected = {(c.row, c.col) for c in kr_cells if roped.config.kv_group(c.head) == group}
        assert set(ex.panel_blanks("KR", head)) == expected


def test_cells_are_named_by_their_tokens():
    """The panel and the key say A₁[down, the], not A_1[3,0]; feature columns keep their
    numbers, and a repeated token is told apart by its position."""
    s = load_preset("toy")
    ex = make_exercise(s, "weights", blanks=4, seed=2)
    for cell in ex.cells:
        assert cell.name == f"A{'₀₁'[cell.head]}[{s.tokens[cell.row]}, {s.tokens[cell.col]}]"
        assert "<sub>" in cell.name_html
    z = make_exercise(s, "mixing", blanks=2, seed=0).cells[0]
    assert z.name.endswith(f"[{s.tokens[z.row]}, {z.col}]")
    twice = Session(s.config, ["the", "cat", "the", "dog"], s.params)
    names = {c.name for c in stage_cells(twice, "weights")[0]}
    assert "A₀[the@0, the@2]" in names and "A₀[cat, dog]" in names


@pytest.mark.parametrize("preset", ["toy", "causal-6x16", "gqa", "positional"])
@pytest.mark.parametrize("stage", ["weights", "output"])
def test_no_blank_has_a_shortcut_that_contradicts_its_key(preset, stage):
    """1 − the row's other shown weights (or Y = Σ_i C_i on shown numbers) never gives a
    lone blank a number its key marks wrong — over many seeds and counts; without the
    rule most seeds would give one away (checked too, so the test can fail)."""
    s = load_preset(preset)
    t = s.run()
    cells, fmt = stage_cells(s, stage, t)
    stage_obj = as_stage(stage)
    unguarded = 0
    for blanks in (1, 2, 3, 4, 6):
        for seed in range(40):
            raw = np.random.default_rng(seed).choice(len(cells), size=blanks, replace=False)
            unguarded += bool(misleading(cells, {int(i) for i in raw}, stage_obj, fmt))
            ex = make_exercise(s, stage, blanks, seed, trace=t)
            assert len(ex.cells) == blanks
            picked = {cells.index(c) for c in ex.cells}
            assert not misleading(cells, picked, stage_obj, fmt), (blanks, seed)
            for i in picked:  # check the identity by hand for lone weights
                c = cells[i]
                if stage != "weights":
                    continue
                row = [j for j, d in enumerate(cells) if (d.head, d.row) == (c.head, c.row)]
                if len(row) > 1 and not any(j in picked for j in row if j != i):
                    shown = [fmt.plain(cells[j].value) for j in row if j != i]
                    rest = sum(0.0 if t == "≈0" else float(t) for t in shown)
                    assert abs(1 - rest - c.value) <= shown_tolerance(fmt) + 1e-12
    assert unguarded > 0
