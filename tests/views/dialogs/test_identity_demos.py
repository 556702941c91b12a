"""Tools ▸ Identities: each window shows both sides and the largest difference; Permute
heads is applied to the document as one undo step."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.views.dialogs.identity_demos import IdentityDialog
from mha_gui.views.window import registry

NAMES = ("packed", "split", "permute", "scale", "shift")


def trigger(window, name) -> IdentityDialog:
    actions = {a.object_name: a for a in registry.actions()}
    spec = actions[f"action.identity.{name}"]
    assert spec.menu == "Tools"
    spec.trigger(window)
    dialog = window.findChild(IdentityDialog, f"identityDialog.{name}")
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    return dialog


@pytest.mark.parametrize("preset", ["toy", "gqa", "mqa"])
def test_every_identity_shows_both_sides_and_a_tiny_difference(window, qtbot, preset):
    window.document.open_preset(preset)
    for name in NAMES:
        dialog = trigger(window, name)
        qtbot.wait(5)
        dialog.figure.grab()
        text = dialog.result.text()
        assert "Largest difference:" in text
        assert "exactly equal" in text or "float64 rounding" in text, text
        assert dialog.identity.relative <= 1e-12
        scene = dialog.figure.drawing.layout.scene
        assert len(scene.rows) >= 2  # both sides
        dialog.close()


def test_triggering_twice_raises_the_same_window(window):
    assert trigger(window, "split") is trigger(window, "split")


def test_packed_follows_an_edit(window, qtbot):
    dialog = trigger(window, "packed")
    doc = window.document
    doc.set_value("W_Q", (1, 0, 0), 3.25)
    qtbot.waitUntil(lambda: np.isclose(dialog.identity.rows[1].parts[1].matrix,
                                       doc.trace().q[1]).all())  # fmt: skip
    dialog.which.setCurrentText("V")
    assert dialog.identity.statement.startswith("X W^V_packed")
    assert len(dialog.identity.rows[1].parts) == doc.config.h_kv


def test_permute_applies_as_one_undo_step_and_keeps_y(window, qtbot):
    window.document.open_preset("gqa")  # h=8, h_kv=2
    doc = window.document
    dialog = trigger(window, "permute")
    w_q = doc.matrix("W_Q").copy()
    w_k = doc.matrix("W_K").copy()
    y = doc.trace().output.copy()
    count = doc.undo_stack.count()
    diff = dialog.apply()  # default: heads reversed, groups reversed with them
    assert doc.undo_stack.count() == count + 1
    assert doc.undo_stack.undoText().startswith("Permute heads (7 6 5 4 3 2 1 0)")
    assert np.array_equal(doc.matrix("W_Q")[0], w_q[7])
    assert np.array_equal(doc.matrix("W_K")[0], w_k[1])
    after = doc.trace().output
    assert diff == float(np.abs(after - y).max()) <= 1e-12 * np.abs(y).max()
    assert "Applied" in dialog.applied.text() and dialog.applied.isVisible()
    doc.undo_stack.undo()
    assert np.array_equal(doc.matrix("W_Q"), w_q) and np.array_equal(doc.matrix("W_K"), w_k)
    assert np.array_equal(doc.trace().output, y)


def test_permute_refuses_a_permutation_that_splits_a_group(window, qtbot):
    window.document.open_preset("gqa")
    doc = window.document
    dialog = trigger(window, "permute")
    count = doc.undo_stack.count()
    w_q = doc.matrix("W_Q").copy()
    dialog.perm.setText("1 4 2 3 0 5 6 7")
    assert "share K/V head" in dialog.result.text()
    assert dialog.figure.make_drawing().title == "Cannot show this identity"
    assert dialog.apply() is None
    assert "Not applied" in dialog.applied.text() and "share K/V head" in dialog.applied.text()
    dialog.perm.setText("0 1 2 3 4 5 6 7")
    assert dialog.apply() is None and "nothing to apply" in dialog.applied.text()
    dialog.perm.setText("zero one")
    assert dialog.apply() is None and "not a list of head numbers" in dialog.applied.text()
    assert doc.undo_stack.count() == count and np.array_equal(doc.matrix("W_Q"), w_q)


def test_permute_carries_the_switched_off_heads(window):
    doc = window.document
    doc.open_preset("toy")
    doc.set_ablated(0, True)
    y = doc.trace().output.copy()
    dialog = trigger(window, "permute")
    dialog.apply()
    assert doc.config.ablate == (1,)
    np.testing.assert_allclose(doc.trace().output, y, rtol=1e-12, atol=1e-12)
    doc.undo_stack.undo()
    assert doc.config.ablate == (0,)


def test_scale_is_demonstrated_on_a_copy(window):
    doc = window.document
    before = doc.matrix("W_Q").copy()
    count = doc.undo_stack.count()
    dialog = trigger(window, "scale")
    assert doc.config.scale is None and np.array_equal(doc.matrix("W_Q"), before)
    assert doc.undo_stack.count() == count
    assert "copy" in dialog.identity.rows[1].caption


def test_shift_uses_the_chosen_row_and_constant(window):
    s = load_preset("causal-6x16")
    window.document.open_session(s)
    dialog = trigger(window, "shift")
    dialog.head.setValue(1)
    dialog.query.setValue(2)
    dialog.constant.setValue(-12.5)
    row, shifted = (p.matrix[0] for p in dialog.identity.rows[0].parts)
    t = s.run()
    np.testing.assert_array_equal(row, t.scores[1, 2])
    np.testing.assert_allclose(shifted[:3], t.scores[1, 2, :3] - 12.5)
    assert np.all(np.isneginf(shifted[3:]))  # causal: later keys stay blocked
    assert "Blocked keys stay" in dialog.notes.text()


def test_save_figure(window, dialogs, tmp_path):
    dialog = trigger(window, "split")
    for suffix in (".png", ".svg"):
        dialogs.save_path = str(tmp_path / f"split{suffix}")
        assert dialog.save_figure() == dialogs.save_path
        assert (tmp_path / f"split{suffix}").stat().st_size > 1000
