"""The configuration panel: dimension changes keep values and undo in one step; impossible
combinations are refused with a message and change nothing."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.views.editors.config_panel import ConfigPanel


@pytest.fixture
def make(qtbot):
    def build(preset="toy"):
        doc = Document(load_preset(preset))
        panel = ConfigPanel(doc)
        qtbot.addWidget(panel)
        panel.show()
        return doc, panel

    return build


def test_dimension_change_keeps_overlapping_values_and_undoes_in_one_step(make):
    doc, panel = make()
    before = {k: doc.matrix(k).copy() for k in ("X", "W_Q", "W_K", "W_V", "W_O")}
    panel.spins["d_model"].setValue(6)
    assert doc.config.d_model == 6
    assert doc.matrix("X").shape == (4, 6)
    np.testing.assert_array_equal(doc.matrix("X")[:, :4], before["X"])
    np.testing.assert_array_equal(doc.matrix("W_Q")[:, :4, :], before["W_Q"])
    np.testing.assert_array_equal(doc.matrix("W_O")[:, :4], before["W_O"])
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert panel.spins["d_model"].value() == 4
    for k, v in before.items():
        np.testing.assert_array_equal(doc.matrix(k), v)


def test_more_heads_keeps_every_head_and_mha_stays_mha(make):
    doc, panel = make()
    wq = doc.matrix("W_Q").copy()
    panel.spins["h"].setValue(3)
    assert (doc.config.h, doc.config.h_kv) == (3, 3)
    np.testing.assert_array_equal(doc.matrix("W_Q")[:2], wq)
    assert panel.variant_label.text().startswith("MHA")


def test_kv_heads_not_dividing_h_are_refused_with_a_message(make):
    doc, panel = make("gqa")
    assert panel.variant_label.text() == "GQA: 4 query heads share each K/V head"
    messages = []
    panel.message.connect(messages.append)
    config = doc.config
    panel.spins["h_kv"].setValue(3)
    assert doc.config == config
    assert doc.undo_stack.count() == 0
    assert panel.spins["h_kv"].value() == 2  # the widget went back
    assert "must divide" in panel.message_label.text()
    assert messages and "must divide" in messages[-1]
    panel.spins["h"].setValue(7)  # 7 query heads cannot share 2 K/V heads
    assert doc.config == config and panel.spins["h"].value() == 8
    assert "multiple" in panel.message_label.text()
    panel.spins["h_kv"].setValue(1)
    assert doc.config.h_kv == 1 and panel.variant_label.text().startswith("MQA")
    assert panel.message_label.text() == ""


def test_causal_toggle_masks_future_keys_and_undoes(make, qtbot):
    doc, panel = make()
    toggle = panel.findChild(type(panel.causal), "causalToggle")
    assert toggle is panel.causal and not toggle.isChecked()
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton, pos=QPoint(8, toggle.height() // 2))
    assert doc.config.causal
    w = doc.trace().weights
    assert np.all(np.triu(w, k=1) == 0)
    doc.undo_stack.undo()
    assert not doc.config.causal and not toggle.isChecked()


def test_custom_scale_and_back(make):
    doc, panel = make()
    panel.default_scale.setChecked(False)
    panel.scale_edit.setText("0.25")
    panel.scale_edit.editingFinished.emit()
    assert doc.config.scale == 0.25
    panel.scale_edit.setText("-1")
    panel.scale_edit.editingFinished.emit()
    assert doc.config.scale == 0.25 and "positive" in panel.message_label.text()
    panel.default_scale.setChecked(True)
    assert doc.config.scale is None


def test_biases_checkbox_adds_bias_parameters(make):
    doc, panel = make()
    panel.bias.setChecked(True)
    assert doc.config.bias and doc.matrix("b_O").shape == (4,)
    doc.undo_stack.undo()
    assert not panel.bias.isChecked()
