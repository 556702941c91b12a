"""StageBar: slider, buttons, keys and Play move the stage; selectors follow the document."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from mha_gui.document import Document
from mha_gui.engine.panels.notation import rich_text
from mha_gui.engine.panels.stages import STAGES, formula_for, shapes_line
from mha_gui.views.stage.stage_bar import StageBar

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def window(qtbot):
    """A window holding the bar and a line edit (to take focus away from the slider)."""
    doc = Document()
    top = QWidget()
    bar = StageBar(doc)
    edit = QLineEdit("abc")
    lay = QVBoxLayout(top)
    lay.addWidget(bar)
    lay.addWidget(edit)
    qtbot.addWidget(top)
    top.resize(1280, 200)
    top.show()
    qtbot.waitExposed(top)
    top.activateWindow()
    qtbot.waitUntil(top.isActiveWindow, timeout=2000)
    yield bar, edit, top
    bar.set_playing(False)
    top.close()


def test_object_names_and_range(window):
    bar, _, top = window
    slider = top.findChild(type(bar.stage_slider), "stageSlider")
    assert slider is bar.stage_slider
    assert (slider.minimum(), slider.maximum()) == (0, 6)
    assert top.findChild(type(bar.head_selector), "headSelector") is bar.head_selector
    assert top.findChild(type(bar.query_selector), "querySelector") is bar.query_selector


def test_slider_and_document_are_bound_both_ways(window):
    bar, _, _ = window
    doc = bar.document
    bar.stage_slider.setValue(4)
    assert doc.view.stage == 4
    doc.set_stage(2)
    assert bar.stage_slider.value() == 2


def test_next_previous_buttons(qtbot, window):
    bar, _, _ = window
    doc = bar.document
    qtbot.mouseClick(bar.next_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.next_button, Qt.MouseButton.LeftButton)
    assert doc.view.stage == 2
    qtbot.mouseClick(bar.prev_button, Qt.MouseButton.LeftButton)
    assert doc.view.stage == 1
    doc.set_stage(0)
    assert not bar.prev_button.isEnabled() and bar.next_button.isEnabled()
    doc.set_stage(6)
    assert bar.prev_button.isEnabled() and not bar.next_button.isEnabled()


def test_arrow_keys_step_when_the_slider_is_not_focused(qtbot, window):
    bar, edit, top = window
    doc = bar.document
    bar.play_button.setFocus()
    QTest.keyClick(bar.play_button, Qt.Key.Key_Right)
    QTest.keyClick(bar.play_button, Qt.Key.Key_Right)
    assert doc.view.stage == 2
    QTest.keyClick(bar.play_button, Qt.Key.Key_Left)
    assert doc.view.stage == 1


def test_arrow_keys_leave_a_text_editor_alone(qtbot, window):
    bar, edit, _ = window
    doc = bar.document
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus, timeout=2000)
    edit.setCursorPosition(3)
    QTest.keyClick(edit, Qt.Key.Key_Left)
    assert doc.view.stage == 0
    assert edit.cursorPosition() == 2


def test_formula_and_shapes_follow_stage_and_config(window):
    bar, _, _ = window
    doc = bar.document
    for stage in STAGES:
        doc.set_stage(stage.index)
        assert bar.formula_label.text() == rich_text(formula_for(stage, doc.config))
        assert bar.shapes_label.text() == shapes_line(stage, doc.config)
        assert stage.title in bar.title_label.text()
    doc.set_stage(3)
    # typeset: real subscripts, not "A_i" (the one stage description, engine/panels/notation.py)
    assert bar.formula_label.text() == (
        "A<sub>i</sub> = softmax(Q<sub>i</sub> K<sub>i</sub>ᵀ / √d<sub>k</sub>)"
    )
    assert bar.shapes_label.text() == "S_i: 4×4 → A_i: 4×4"
    assert bar.formula_label.font().pointSizeF() > bar.font().pointSizeF() * 1.3
    doc.set_causal(True)
    assert "mask(" in bar.formula_label.text()


def test_head_selector_follows_heads_both_ways(window):
    bar, _, _ = window
    doc = bar.document
    combo = bar.head_selector
    assert [combo.itemText(i) for i in range(combo.count())] == ["head 0", "head 1"]
    combo.setCurrentIndex(1)
    assert doc.view.head == 1
    doc.set_head(0)
    assert combo.currentIndex() == 0
    doc.open_preset("gqa")
    assert combo.count() == 8 and combo.itemText(7) == "head 7"


def test_query_selector_lists_tokens(window):
    bar, _, _ = window
    doc = bar.document
    combo = bar.query_selector
    assert [combo.itemText(i) for i in range(combo.count())] == ["the", "cat", "sat", "down"]
    combo.setCurrentIndex(2)
    assert doc.view.query == 2
    doc.set_token(2, "ran")
    assert combo.itemText(2) == "ran" and combo.currentIndex() == 2
    doc.set_query(3)
    assert combo.currentIndex() == 3


def test_play_steps_to_the_end_and_stops(qtbot, window):
    bar, _, _ = window
    doc = bar.document
    assert bar.play_timer.interval() == 1200
    bar.play_timer.setInterval(5)
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    assert bar.playing
    qtbot.waitUntil(lambda: doc.view.stage == 6 and not bar.playing, timeout=3000)
    assert not bar.play_button.isChecked() and "Play" in bar.play_button.text()
    # playing again from the last stage starts over
    bar.set_playing(True)
    assert doc.view.stage == 0
    bar.set_playing(False)


def test_query_selector_holds_a_long_sentence_with_tooltips_and_a_bounded_width(window):
    from mha_gui.engine.layer.presets import random_session

    bar, _, _ = window
    doc = bar.document
    combo = bar.query_selector
    session = random_session(seed=2, tokens=300, d_model=4, heads=1)
    session.tokens[7] = "a-long-token-label-that-goes-on-and-on"
    doc.open_session(session)
    assert combo.count() == 300 and combo.itemText(299) == session.tokens[299]
    assert combo.itemData(5, Qt.ItemDataRole.ToolTipRole) == "token 5"
    short = combo.sizeHint().width()
    doc.set_query(7)
    assert combo.currentText() == session.tokens[7]
    doc.open_session(random_session(seed=2, tokens=300, d_model=4, heads=1))
    assert combo.sizeHint().width() < short  # as wide as the longest label, capped
    assert combo.sizeHint().width() >= combo.fontMetrics().horizontalAdvance("t299")
