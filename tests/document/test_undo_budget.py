"""The undo history keeps its commands' numbers within a byte budget (a command of a large
layer holds whole matrices): the oldest steps go first, the newest always stays, and
what stays undoes and redoes exactly, with the saved state where it was."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.document import Document
from mha_gui.document.commands import UNDO_BUDGET_BYTES, command_bytes


def whole_matrix_edits(doc: Document, count: int) -> list[np.ndarray]:
    """`count` edits of all of W_Q (each step holds two copies of it); W_Q after each."""
    rng = np.random.default_rng(0)
    after = []
    for _ in range(count):
        doc.set_matrix("W_Q", rng.normal(size=doc.matrix("W_Q").shape))
        after.append(np.array(doc.matrix("W_Q")))
    return after


@pytest.fixture
def doc(qapp):
    document = Document()
    yield document
    document.deleteLater()


def test_the_default_budget_is_512_mb(doc):
    assert doc.undo_stack.budget == UNDO_BUDGET_BYTES == 512 * 1024 * 1024


def test_the_oldest_steps_go_beyond_the_budget_and_the_rest_undo_exactly(doc):
    stack = doc.undo_stack
    first = np.array(doc.matrix("W_Q"))
    step = 2 * first.nbytes  # old and new W_Q
    stack.budget = 5 * step
    said = []
    stack.trimmed.connect(said.append)
    after = whole_matrix_edits(doc, 8)
    assert stack.count() == 5 and stack.index() == 5
    assert stack.history_bytes() <= stack.budget
    assert said == [1, 1, 1]  # one step dropped at each of the 6th, 7th and 8th edits
    assert stack.undoText() == "Set W_Q"
    np.testing.assert_array_equal(doc.matrix("W_Q"), after[-1])
    for k in range(5):  # every step kept still undoes to what was there before it
        stack.undo()
        np.testing.assert_array_equal(doc.matrix("W_Q"), after[-2 - k])
    assert not stack.canUndo()  # the state before the three dropped edits is gone
    assert not np.array_equal(doc.matrix("W_Q"), first)
    for k in range(5):
        stack.redo()
        np.testing.assert_array_equal(doc.matrix("W_Q"), after[3 + k])
    np.testing.assert_array_equal(doc.trace().q, doc.session.run().q)


def test_the_newest_step_stays_whatever_it_holds(doc):
    stack = doc.undo_stack
    stack.budget = 10  # less than any whole-matrix edit
    after = whole_matrix_edits(doc, 3)
    assert stack.count() == 1 and stack.canUndo()
    stack.undo()
    np.testing.assert_array_equal(doc.matrix("W_Q"), after[1])


def test_small_edits_are_never_dropped_for_the_large_ones_budget(doc):
    stack = doc.undo_stack
    for k in range(50):
        doc.set_value("X", (0, 0), k + 100.5)
    assert stack.count() == 50  # 50 cells: a few bytes each, far within 512 MB
    assert sum(command_bytes(stack.command(i)) for i in range(50)) == 50 * 16


def test_the_saved_state_stays_where_it_was_or_is_gone(doc):
    stack = doc.undo_stack
    stack.budget = 3 * 2 * doc.matrix("W_Q").nbytes
    whole_matrix_edits(doc, 2)
    stack.setClean()  # saved after the 2nd edit
    whole_matrix_edits(doc, 2)  # the 1st edit is dropped: the saved state is kept
    assert stack.count() == 3 and not stack.isClean()
    stack.undo()
    stack.undo()
    assert stack.isClean()
    stack.redo()
    stack.redo()
    whole_matrix_edits(doc, 2)  # now the saved step itself is dropped
    assert stack.cleanIndex() == -1
    while stack.canUndo():
        stack.undo()
        assert not stack.isClean()


def test_a_macro_is_one_step_counted_and_dropped_whole(doc):
    stack = doc.undo_stack
    step = 2 * doc.matrix("W_Q").nbytes
    stack.budget = 3 * step
    stack.beginMacro("Train head 0")
    whole_matrix_edits(doc, 2)  # inside the macro: nothing is dropped yet
    stack.endMacro()
    assert stack.count() == 1 and command_bytes(stack.command(0)) == 2 * step
    trained = np.array(doc.matrix("W_Q"))
    whole_matrix_edits(doc, 2)
    assert stack.count() == 2  # the macro (two edits' worth) went at once
    stack.undo()
    stack.undo()
    np.testing.assert_array_equal(doc.matrix("W_Q"), trained)
    assert not stack.canUndo()


def test_a_cleared_history_says_it_starts_again(doc):
    said = []
    doc.undo_stack.trimmed.connect(said.append)
    doc.files.open_preset("toy")
    assert said == [0]
