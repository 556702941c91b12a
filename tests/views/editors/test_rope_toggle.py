"""The RoPE check box and θ field of the configuration panel, and what they change."""

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit


def _box(window) -> QCheckBox:
    return window.findChild(QCheckBox, "ropeToggle")


def _projections(window, qtbot):
    window.document.set_stage(1)
    view = window.attention_view
    qtbot.waitUntil(lambda: view.document.view.stage == 1 and ("Q", 0) in view.panels)
    return view


def test_rope_toggle_adds_the_rotated_panels_as_one_undo_step(window, qtbot):
    doc = window.document
    view = _projections(window, qtbot)
    assert ("QR", 0) not in view.panels
    steps = doc.undo_stack.count()
    qtbot.mouseClick(_box(window), Qt.MouseButton.LeftButton)
    assert doc.config.rope and doc.undo_stack.count() == steps + 1
    assert doc.undo_stack.undoText() == "RoPE on"
    qtbot.waitUntil(lambda: ("QR", 1) in view.panels and ("KR", 1) in view.panels)
    trace = doc.trace()
    assert np.array_equal(view.panels[("QR", 1)].matrix, trace.q_rot[1])
    assert np.array_equal(view.panels[("KR", 0)].matrix, trace.k_rot[0])
    # five panels per head: Q, Q̃, K, K̃, V side by side under the head's title
    assert sorted(k for k, h in view.panels if h == 0) == sorted(["Q", "QR", "K", "KR", "V"])
    assert "RoPE" in window.stage_bar.formula_label.text()
    tip = view.cell_tooltip("QR", 1, 2, 0)
    assert "cos α" in tip and "rad" in tip

    doc.undo_stack.undo()
    assert not doc.config.rope and not _box(window).isChecked()
    qtbot.waitUntil(lambda: ("QR", 0) not in view.panels and ("Q", 0) in view.panels)
    doc.undo_stack.redo()
    assert _box(window).isChecked()


def test_odd_d_k_is_refused_and_the_box_snaps_back(window, qtbot):
    doc = window.document
    doc.set_config(d_k=3)
    steps = doc.undo_stack.count()
    _box(window).click()
    assert not doc.config.rope and not _box(window).isChecked()
    assert doc.undo_stack.count() == steps
    said = window.statusBar().currentMessage()
    assert "d_k must be even" in said, said
    assert "d_k must be even" in window.findChild(QLabel, "configMessage").text()


def test_theta_field(window, qtbot):
    doc = window.document
    field = window.findChild(QLineEdit, "ropeTheta")
    assert not field.isEnabled() and field.text() == "10000"
    _box(window).click()
    assert field.isEnabled()
    steps = doc.undo_stack.count()
    field.setText("500")
    field.editingFinished.emit()
    assert doc.config.rope_theta == 500.0 and doc.undo_stack.count() == steps + 1
    field.setText("0.5")
    field.editingFinished.emit()
    assert doc.config.rope_theta == 500.0 and field.text() == "500"
    assert "greater than 1" in window.statusBar().currentMessage()
    doc.undo_stack.undo()
    assert field.text() == "10000"
