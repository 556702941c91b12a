"""Where an edit lands: the editors' index of a cell and the head the document reads back
come from one definition of the per-head parameters; the signals a new session emits."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.document import sessions
from mha_gui.document.cells import HEADED, KV, block_index, cell_index, edited_head, w_o_heads
from mha_gui.engine.layer.presets import load_preset

NAMES = ("X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")


@pytest.mark.parametrize("name", NAMES)
def test_a_cells_index_reaches_that_cell_and_names_its_head(name):
    gqa = load_preset("gqa")
    full = sessions.resized(gqa, gqa.config.with_changes(bias=True)).params.as_dict()[name]
    head = 1 if name in HEADED else None
    index = cell_index(name, head, 1, 0)
    assert np.ndim(full[index]) == 0  # one cell, never a row or a slice
    assert edited_head(name, index) == head
    assert set(KV) < set(HEADED)


def test_a_block_is_placed_in_its_heads_slice_or_refused_with_the_sizes():
    w_q = np.zeros((4, 3, 2))
    index, block = block_index("W_Q", w_q, 2, 1, 0, [[1.0, 2.0]])
    w_q[index] = block
    assert w_q[2, 1].tolist() == [1.0, 2.0] and w_q.sum() == 3.0
    with pytest.raises(ValueError, match=r"1×3 block does not fit in W_Q \(3×2\)"):
        block_index("W_Q", w_q, 0, 0, 0, [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="per head"):
        block_index("W_Q", w_q, None, 0, 0, [[1.0]])
    b_o = np.zeros(5)
    index, block = block_index("b_O", b_o, None, 0, 3, [[7.0, 8.0]])
    b_o[index] = block
    assert b_o.tolist() == [0, 0, 0, 7.0, 8.0]


def test_w_o_rows_name_the_heads_whose_block_they_are_in():
    assert w_o_heads(5, 2, 4) == {2}
    assert w_o_heads(slice(1, 4), 2, 4) == {0, 1}
    assert w_o_heads(Ellipsis, 2, 4) == {0, 1, 2, 3}


@pytest.mark.parametrize(
    "changes", [{"n": 6}, {"h": 4, "h_kv": 1}, {"bias": True}, {"d_v": 3}, {"causal": True}]
)
def test_a_shape_change_always_comes_with_a_config_change(changes):
    """What the signals' comments promise: shapeChanged never comes alone, and first."""
    old = load_preset("toy")
    new = sessions.resized(old, old.config.with_changes(**changes))
    for a, b in ((old, new), (new, old)):
        names = [signal for signal, *_ in sessions.changes(a, b)]
        if "shapeChanged" in names:
            assert names[:2] == ["shapeChanged", "configChanged"]
            assert "valuesChanged" not in names
        else:
            assert "configChanged" in names
