"""The Qt-side document: undoable edits, signals only on real change, one recompute per turn."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from mha_gui.document import Document
from mha_gui.engine import load_preset


@pytest.fixture
def doc(qapp):
    d = Document()
    yield d
    d.deleteLater()


class Recorder:
    def __init__(self, doc):
        self.events = []
        for name in (
            "valuesChanged",
            "shapeChanged",
            "configChanged",
            "tokensChanged",
            "viewChanged",
            "traceChanged",
        ):
            getattr(doc, name).connect(lambda *a, name=name: self.events.append((name, *a)))

    def names(self):
        return [e[0] for e in self.events]


def test_many_edits_in_one_turn_give_one_recompute_and_one_trace_signal(doc, qtbot):
    rec = Recorder(doc)
    before = doc.recompute_count
    for i in range(50):
        assert doc.set_value("W_Q", (0, i % 4, i % 2), str(i / 10))
    with qtbot.waitSignal(doc.traceChanged, timeout=1000):
        pass
    assert rec.names().count("traceChanged") == 1
    assert doc.recompute_count == before + 1
    ref = doc.session.run()
    np.testing.assert_allclose(doc.trace().weights, ref.weights)


def test_setting_the_same_value_emits_nothing_and_pushes_nothing(doc, qapp):
    rec = Recorder(doc)
    current = float(doc.matrix("X")[0, 0])
    assert doc.set_value("X", (0, 0), current)
    doc.set_head(doc.view.head)
    doc.set_config(n=doc.config.n)
    qapp.processEvents()
    assert rec.events == [] and doc.undo_stack.count() == 0 and not doc.is_modified


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-inf", "", "2e6", "1e400"])
def test_bad_values_are_refused_and_change_nothing(doc, qapp, text):
    before = {k: v.copy() for k, v in doc.session.params.as_dict().items()}
    rec = Recorder(doc)
    assert doc.set_value("W_K", (1, 0, 0), text) is False
    assert doc.check_value(text)
    qapp.processEvents()
    assert rec.events == [] and doc.undo_stack.count() == 0
    for k, v in before.items():
        assert np.array_equal(doc.matrix(k), v)


def test_undo_redo_restore_exact_arrays_and_trace(doc, qapp):
    x0 = doc.matrix("X").copy()
    y0 = doc.trace().output.copy()
    doc.set_value("X", (2, 1), "0.3")
    doc.set_block("W_O", None, 1, 1, np.array([[9.0, 8.0], [7.0, 6.0]]))
    qapp.processEvents()
    y1 = doc.trace().output.copy()
    assert not np.array_equal(y0, y1)
    assert doc.undo_stack.undoText() == "Paste into W_O"
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    qapp.processEvents()
    assert np.array_equal(doc.matrix("X"), x0) and np.array_equal(doc.trace().output, y0)
    assert not doc.is_modified
    doc.undo_stack.redo()
    doc.undo_stack.redo()
    assert np.array_equal(doc.trace().output, y1)


def test_a_scrub_is_one_undo_step(doc):
    start = float(doc.matrix("W_V")[0, 1, 1])
    for i in range(30):
        doc.set_value("W_V", (0, 1, 1), start + i * 0.1, merge_key=("drag", 1))
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert float(doc.matrix("W_V")[0, 1, 1]) == start


def test_paste_that_does_not_fit_is_refused(doc):
    with pytest.raises(ValueError, match="does not fit"):
        doc.set_block("X", None, 3, 3, np.ones((2, 2)))
    with pytest.raises(ValueError):
        doc.set_block("X", None, 0, 0, np.array([[np.nan]]))
    assert doc.undo_stack.count() == 0


def test_dimension_change_keeps_values_and_is_one_undo_step(doc, qapp):
    old = {k: v.copy() for k, v in doc.session.params.as_dict().items()}
    rec = Recorder(doc)
    doc.set_config(n=6, h=4, d_v=3)
    qapp.processEvents()
    assert "shapeChanged" in rec.names() and doc.undo_stack.count() == 1
    assert np.array_equal(doc.matrix("X")[:4], old["X"])
    assert np.array_equal(doc.matrix("W_Q")[:2], old["W_Q"])
    wo = doc.matrix("W_O").reshape(4, 3, 4)
    assert np.array_equal(wo[:2, :2], old["W_O"].reshape(2, 2, 4))  # head blocks stay put
    assert doc.tokens[:4] == ["the", "cat", "sat", "down"] and len(doc.tokens) == 6
    assert doc.trace().weights.shape == (4, 6, 6)
    doc.undo_stack.undo()
    qapp.processEvents()
    for k, v in old.items():
        assert np.array_equal(doc.matrix(k), v)
    assert doc.trace().weights.shape == (2, 4, 4)


def test_impossible_dimensions_are_refused_without_change(doc):
    with pytest.raises(ValueError, match="must divide"):
        doc.set_config(h_kv=3)
    assert doc.undo_stack.count() == 0 and doc.config.h_kv == 2


def test_causal_toggle_changes_weights_and_undoes(doc, qapp):
    doc.set_causal(True)
    qapp.processEvents()
    w = doc.trace().weights
    assert np.all(np.triu(w, 1) == 0)
    doc.undo_stack.undo()
    assert doc.trace().weights[0, 0, 1] > 0


def test_view_state_is_clamped_and_not_undoable(doc):
    rec = Recorder(doc)
    doc.set_stage(99)
    doc.set_head(-3)
    doc.set_query(2)
    assert (doc.view.stage, doc.view.head, doc.view.query) == (6, 0, 2)
    assert rec.names().count("viewChanged") == 2 and doc.undo_stack.count() == 0


def test_save_and_open_round_trip_mark_clean(doc, tmp_path):
    doc.set_value("X", (0, 0), "0.7")
    assert doc.is_modified
    path = doc.save(tmp_path / "s.json")
    assert not doc.is_modified and doc.display_name == "s.json"
    other = Document(load_preset("gqa"))
    other.open_file(path)
    assert float(other.matrix("X")[0, 0]) == 0.7 and not other.is_modified
    assert other.undo_stack.count() == 0
    other.deleteLater()


def test_config_change_keeps_a_sessions_extra_mask(qapp):
    s = load_preset("toy")
    s.mask = np.zeros((4, 4), bool)
    s.mask[0, 3] = True
    d = Document(s)
    d.set_causal(True)
    assert d.session.mask is not None and d.session.mask[0, 3]
    d.set_config(n=5)
    assert d.session.mask.shape == (5, 5) and d.session.mask[0, 3] and not d.session.mask[4].any()
    assert d.trace().weights[0, 0, 3] == 0
    d.deleteLater()


def test_toggling_mask_cells_blocks_them_and_undoes(doc, qapp):
    doc.toggle_blocked(1, 2)
    assert doc.undo_stack.undoText() == "Block cat → sat"
    t = doc.trace()
    assert np.all(t.weights[:, 1, 2] == 0) and np.all(np.isneginf(t.scores[:, 1, 2]))
    np.testing.assert_allclose(t.weights.sum(-1), 1.0)
    doc.toggle_blocked(1, 2)  # unblocking the only blocked pair leaves no mask at all
    assert doc.session.mask is None and doc.undo_stack.undoText() == "Unblock cat → sat"
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.session.mask is None and doc.trace().weights[0, 1, 2] > 0
    with pytest.raises(ValueError):
        doc.toggle_blocked(4, 0)
    with pytest.raises(ValueError):
        doc.set_mask(np.ones((3, 3), bool))


def test_mask_and_causal_combine_and_survive_save(doc, tmp_path):
    doc.toggle_blocked(3, 0)
    doc.set_causal(True)
    w = doc.trace().weights
    assert np.all(np.triu(w, 1) == 0) and np.all(w[:, 3, 0] == 0)
    path = doc.save(tmp_path / "m.json")
    other = Document(load_preset("toy"))
    other.open_file(path)
    assert other.session.mask[3, 0] and other.config.causal
    other.deleteLater()


def test_an_owned_session_is_taken_without_a_copy_and_a_bad_one_changes_nothing():
    from mha_gui.engine.layer.presets import random_session

    doc = Document()
    before = doc.snapshot()
    session = random_session(seed=4, tokens=6, d_model=4, heads=2)
    doc.open_session(session, owned=True)
    assert np.shares_memory(doc.matrix("X"), session.params.X)
    np.testing.assert_allclose(doc.trace().output, session.run().output)
    doc.open_session(before)
    doc.set_value("X", (0, 1), 0.5)  # an edit to undo: the refusal keeps the history
    bad = random_session(seed=4, tokens=6, d_model=4, heads=2)
    bad.params.X[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"X\[0, 0\] is nan"):
        doc.open_session(bad, owned=True)
    assert doc.undo_stack.canUndo() and doc.matrix("X")[0, 1] == 0.5
    doc.undo_stack.undo()
    np.testing.assert_array_equal(doc.matrix("X"), before.params.X)


def test_a_shared_snapshot_keeps_its_numbers_while_the_document_is_edited():
    doc = Document()
    snapshot = doc.shared_snapshot()
    x = snapshot.params.X
    assert np.shares_memory(doc.matrix("X"), x)  # no copy until an edit
    before = x.copy()
    doc.set_value("X", (0, 0), 7.0)
    np.testing.assert_array_equal(snapshot.params.X, before)  # the writer's view holds
    assert doc.matrix("X")[0, 0] == 7.0 and not np.shares_memory(doc.matrix("X"), x)
    doc.set_token(1, "dog")
    assert snapshot.tokens[1] != "dog" and not snapshot.same_contents(doc.snapshot())
    doc.release(snapshot)
    moved = doc.matrix("X")
    doc.set_value("X", (0, 1), 3.0)  # nobody reads these arrays now: edited in place
    assert np.shares_memory(doc.matrix("X"), moved)
