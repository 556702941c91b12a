"""A mask cell and a head switch are their own undo commands: they change only the mask or
the ablated heads, copy no session, and recompute only what they touch — while the
trace stays, after every edit, undo and redo, exactly a fresh forward of the numbers."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.document import EVERYTHING, Document
from mha_gui.document import recompute as recompute_module
from mha_gui.document.commands import SetAblatedCommand, SetMaskCommand
from mha_gui.engine.attention import incremental
from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.engine.layer.session import Session

FIELDS = ("q", "k", "v", "scores", "weights", "heads", "concat", "output")


@pytest.fixture
def doc(qapp):
    d = Document(load_preset("gqa"))
    yield d
    d.deleteLater()


@pytest.fixture
def spy(monkeypatch):
    """Counts full forward passes of the engine and copies of whole sessions."""
    counts = {"full": 0, "copies": 0}
    run_all, copy = incremental.run_all, Session.copy

    def counting_run_all(*args, **kwargs):
        counts["full"] += 1
        return run_all(*args, **kwargs)

    def counting_copy(self, *args, **kwargs):
        counts["copies"] += 1
        return copy(self, *args, **kwargs)

    monkeypatch.setattr(incremental, "run_all", counting_run_all)
    monkeypatch.setattr(Session, "copy", counting_copy)
    return counts


def assert_is_a_fresh_forward(doc):
    """Bit for bit: a toy layer's switch path does the full pass's arithmetic."""
    t, ref = doc.trace(), doc.session.run()
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(t, name), getattr(ref, name), err_msg=name)
    np.testing.assert_array_equal(t.mask, ref.mask)


class Signals:
    def __init__(self, doc):
        self.names: list[str] = []
        self.changes: list = []
        for name in ("valuesChanged", "shapeChanged", "configChanged", "maskChanged"):
            getattr(doc, name).connect(lambda *_a, name=name: self.names.append(name))
        doc.traceChanged.connect(self.changes.append)


def settle(qtbot, doc):
    with qtbot.waitSignal(doc.traceChanged, timeout=5000):
        pass


def test_mask_edits_undo_and_redo_recompute_in_part_and_copy_nothing(doc, qtbot, spy):
    seen = Signals(doc)
    before = doc.recompute_count
    steps = [
        lambda: doc.toggle_blocked(2, 0),
        lambda: doc.toggle_blocked(3, 1),
        doc.undo_stack.undo,
        doc.undo_stack.undo,
        doc.undo_stack.redo,
        doc.undo_stack.redo,
        lambda: doc.toggle_blocked(2, 0),  # unblocked again
    ]
    for k, step in enumerate(steps, start=1):
        step()
        settle(qtbot, doc)
        assert doc.recompute_count == before + k  # one recompute per edit…
        assert_is_a_fresh_forward(doc)
    assert spy == {"full": 0, "copies": 0}  # …none of them a full pass, no session copied
    assert set(seen.names) == {"maskChanged"}
    assert all(c is not EVERYTHING for c in seen.changes)
    assert doc.undo_stack.undoText() == f"Unblock {doc.tokens[2]} → {doc.tokens[0]}"
    assert isinstance(doc.undo_stack.command(doc.undo_stack.index() - 1), SetMaskCommand)
    assert doc.session.mask[3, 1] and not doc.session.mask[2, 0]


def test_head_switches_undo_and_redo_recompute_that_head_and_copy_nothing(doc, qtbot, spy):
    seen = Signals(doc)
    y0 = doc.trace().output.copy()
    before = doc.recompute_count
    steps = [
        lambda: doc.set_ablated(1, True),
        lambda: doc.set_ablated(3, True),
        doc.undo_stack.undo,
        doc.undo_stack.undo,
        doc.undo_stack.redo,
        lambda: doc.set_ablated(1, False),
    ]
    for k, step in enumerate(steps, start=1):
        step()
        settle(qtbot, doc)
        assert doc.recompute_count == before + k
        assert_is_a_fresh_forward(doc)
    assert spy == {"full": 0, "copies": 0}
    assert set(seen.names) == {"configChanged"}
    # only the switched head's Z changed, each time
    assert [set(c) for c in seen.changes] == [{1}, {3}, {3}, {1}, {1}, {1}]
    assert doc.config.ablate == ()
    np.testing.assert_array_equal(doc.trace().output, y0)  # back on: Y bit for bit
    assert isinstance(doc.undo_stack.command(doc.undo_stack.index() - 1), SetAblatedCommand)


def test_an_ablation_given_as_a_config_change_takes_the_same_path(doc, qtbot, spy):
    doc.set_config(ablate=(0, 2), label="Permute heads")
    settle(qtbot, doc)
    assert doc.undo_stack.undoText() == "Permute heads" and doc.config.ablate == (0, 2)
    assert spy == {"full": 0, "copies": 0}
    assert_is_a_fresh_forward(doc)
    doc.set_config(ablate=(), causal=True)  # with another switch: the whole session
    settle(qtbot, doc)
    assert spy["full"] == 1 and doc.config.causal
    assert_is_a_fresh_forward(doc)


def test_switches_mixed_with_edits_in_one_turn_give_one_recompute(doc, qtbot):
    before = doc.recompute_count
    doc.set_value("W_Q", (1, 0, 1), 0.75)
    doc.toggle_blocked(1, 3)
    doc.set_ablated(2, True)
    doc.set_value("W_O", (5, 2), -1.25)
    settle(qtbot, doc)
    assert doc.recompute_count == before + 1
    np.testing.assert_allclose(doc.trace().output, doc.session.run().output, atol=1e-12)
    for _ in range(4):
        doc.undo_stack.undo()
    settle(qtbot, doc)
    t, ref = doc.trace(), doc.session.run()
    for name in FIELDS:
        np.testing.assert_allclose(getattr(t, name), getattr(ref, name), atol=1e-12)
    assert doc.session.mask is None and doc.config.ablate == ()


def test_switches_while_the_worker_recomputes_settle_on_a_fresh_forward(qtbot, monkeypatch):
    """A large layer: the mask and switch arrive while its first recompute runs."""
    monkeypatch.setattr(recompute_module, "ASYNC_CELLS", 0)
    session = random_session(seed=2, tokens=7, d_model=8, heads=4)
    doc = Document(session)
    assert doc.busy
    doc.toggle_blocked(4, 2)
    doc.set_ablated(3, True)
    doc.set_value("X", (0, 0), 0.5)  # the worker reads these arrays: moved to a copy
    qtbot.waitUntil(lambda: not doc.computing, timeout=20_000)
    ref = doc.session.run()
    for name in FIELDS:
        np.testing.assert_allclose(getattr(doc.trace(), name), getattr(ref, name), atol=1e-12)
    assert doc.trace().weights[:, 4, 2].max() == 0 and not doc.trace().heads[3].any()
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    qtbot.waitUntil(lambda: not doc.computing, timeout=20_000)
    np.testing.assert_allclose(doc.trace().output, doc.session.run().output, atol=1e-12)
    doc.deleteLater()


def test_an_edit_while_a_file_is_written_is_in_the_trace(doc, qtbot):
    """The document moves to a copy of its arrays (a writer reads them): the recompute
    follows it there, and does not go on computing the numbers being written."""
    snapshot = doc.shared_snapshot()
    doc.set_value("X", (0, 0), 3.0)
    settle(qtbot, doc)
    np.testing.assert_allclose(doc.trace().output, doc.session.run().output, atol=1e-12)
    assert snapshot.params.X[0, 0] != 3.0
    doc.release(snapshot)


def test_a_mask_command_keeps_its_own_masks(doc, qtbot):
    """The masks a command undoes to are its own copies, whatever happens to the
    document's arrays."""
    doc.toggle_blocked(0, 1)
    command = doc.undo_stack.command(0)
    assert not np.shares_memory(command.new, doc.session.mask)
    doc.undo_stack.undo()
    doc.undo_stack.redo()
    assert not np.shares_memory(command.new, doc.session.mask)
    assert doc.session.mask[0, 1] and doc.session.mask.sum() == 1
