"""The handout's worked example follows one query token through a stage: each line is a
cell of that token's row, of the right matrix, and states the value a plain loop over
the textbook equations gives (tests/engine/reference.py), on random shapes."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine.layer.numbers import num
from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.engine.panels.stages import STAGES, stage_by_name
from mha_gui.engine.teaching.worked_example import MAX_CELLS, worked_example
from tests.engine.reference import reference_forward

CELL = re.compile(r"^(?P<sym>[A-Z]+)(?:_(?P<head>\d+))?\[(?P<row>\d+),(?P<col>\d+)\]")


NAMES = {"Q": "q", "K": "k", "V": "v", "S": "scores", "A": "weights", "Z": "heads"}
NAMES |= {"C": "contributions", "H": "concat", "Y": "output"}


def _value(ref, kind: str, head, row: int, col: int) -> float:
    whole = ref[NAMES[kind]]
    return (whole if head is None else whole[head])[row][col]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 12),
    heads=st.integers(1, 4),
    width=st.integers(1, 5),
    data=st.data(),
)
def test_every_line_is_a_cell_of_the_followed_row_with_the_reference_value(
    seed, n, heads, width, data
):
    session = random_session(seed, n, heads * width, heads)
    head = data.draw(st.integers(0, heads - 1))
    query = data.draw(st.integers(0, n - 1))
    off = tuple(sorted(data.draw(st.sets(st.integers(0, heads - 1), max_size=heads - 1))))
    session = dataclasses.replace(session, config=dataclasses.replace(session.config, ablate=off))
    p = session.params
    ref = reference_forward(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, p.b_Q, p.b_K, p.b_V, p.b_O, ablate=off)
    for stage in STAGES[1:]:
        example = worked_example(session, stage, head, query)
        assert f'"{session.tokens[query]}"' in example.heading
        explained = [line for line in example.lines if not line.startswith("…")]
        assert 1 <= len(explained) <= MAX_CELLS
        for line in explained:
            m = CELL.match(line)
            assert m, line
            kind, row, col = m["sym"], int(m["row"]), int(m["col"])
            assert row == query
            expected = {
                "scores": {"S"},
                "weights": {"A"},
                "mixing": {"Z"},
                "concat": {"H"},
                "output": {"C", "Y"},
            }.get(stage.name, {"Q", "K", "V"})
            assert kind in expected
            h = int(m["head"]) if m["head"] is not None else None
            if stage.name in ("projections", "scores", "weights"):
                assert h == head  # one head's row; n = 1 or MHA: K_g is K_head
            value = _value(ref, kind, h, row, col)
            main = line.split("\n")[0].split("   (")[0]
            if np.isfinite(value):
                assert main.endswith(f"= {num(value)}"), (line, value)
        first = CELL.match(explained[0])
        if stage.name in ("mixing", "output"):  # the inspected head comes first
            assert int(first["head"]) == head
        if stage.name == "concat":
            assert int(first["col"]) == head * session.config.d_v


def test_a_switched_off_heads_output_is_said_to_be_zero():
    """Z_1 of a switched-off head is 0, not Σ_j A·V written out equal to 0."""
    toy = load_preset("toy")
    off = dataclasses.replace(toy, config=dataclasses.replace(toy.config, ablate=(1,)))
    line = worked_example(off, stage_by_name("mixing"), 1, 1).lines[0]
    assert line.startswith("Z_1[1,0] = 0   (head 1 is switched off: Z_1 = 0"), line
    assert "Σ_j" not in line


def test_a_long_row_is_cut_with_a_note_and_the_input_names_the_token():
    session = random_session(3, 20, 16, 2)
    weights = worked_example(session, stage_by_name("weights"), 1, 7)
    assert len(weights.lines) == MAX_CELLS + 1
    assert weights.lines[-1] == "… and 12 more cells of this row, made the same way"
    toy = load_preset("toy")
    first = worked_example(toy, STAGES[0], 0, 1)
    assert first.lines[0].startswith('x_1 = X[1,:] = [0, 2, 0, 1]   (token "cat"')
