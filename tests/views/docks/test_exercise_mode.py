"""Exercise mode: View ▸ Exercise hides the exercise's cells in the attention view as
empty boxes, the panel grades what a student types, and leaving restores the view."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QDockWidget, QLabel, QLineEdit, QPushButton

from mha_gui import theme
from mha_gui.engine.layer.numbers import num
from mha_gui.engine.teaching.exercises import make_exercise

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def enter(window, qtbot, stage="weights", blanks=4, seed=3, tolerance=""):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    action = window.findChild(QAction, "action.exercise")
    assert action is not None and action.isCheckable()
    action.trigger()
    qtbot.wait(50)  # the dock opens (a user cannot click Start in the same instant)
    panel = window.findChild(QDockWidget, "dock.exercise").widget()
    assert panel.objectName() == "exercisePanel" and panel.isVisible()
    panel.stage.setCurrentIndex(panel.stage.findData(stage))
    panel.blanks.setValue(blanks)
    panel.seed.setValue(seed)
    panel.tolerance.setText(tolerance)
    qtbot.mouseClick(panel.start, Qt.MouseButton.LeftButton)
    qtbot.wait(50)
    return action, panel


def edit(panel, i) -> QLineEdit:
    return panel.findChild(QLineEdit, f"exercise.answer.{i}")


def press(qtbot, panel, name):
    qtbot.mouseClick(panel.findChild(QPushButton, name), Qt.MouseButton.LeftButton)


def result(panel, i) -> str:
    """What the result line says (its label shows it typeset; the words are these)."""
    return panel.findChild(QLabel, f"exercise.result.{i}").accessibleName()


def pixel(view, panel, r, c) -> QColor:
    """The colour on screen at the middle of cell (r, c) of a heatmap panel."""
    vb = panel.plot.getViewBox()
    pos = view.canvas.mapFromScene(vb.mapViewToScene(QPointF(c + 0.3, r + 0.25)))
    return view.canvas.grab().toImage().pixelColor(pos)


def test_start_hides_exactly_the_exercise_cells_as_empty_boxes(window, qtbot):
    doc = window.document
    expected = make_exercise(doc.snapshot(), "weights", 4, 3)
    action, panel = enter(window, qtbot)
    assert action.isChecked()
    assert doc.view.stage == 3  # the exercise's stage is shown
    view = window.attention_view
    hidden = {}
    for (kind, head), p in view.panels.items():
        for r, c in p.hidden:
            hidden[(kind, head, r, c)] = p
    assert set(hidden) == {cell.key for cell in expected.cells}
    for (_kind, _head, r, c), p in hidden.items():
        label = p.labels[r][c]
        assert not label.isVisible() or label.textItem.toPlainText() == ""
        assert "hidden" in p.tooltip(r, c)
        # the pixel is the neutral fill, not the colour of the value
        colour = pixel(view, p, r, c)
        assert colour.name() == theme.palette("light").panel
    # a shown cell still prints its number
    p = next(iter(hidden.values()))
    r, c = next((r, c) for r in range(p.rows) for c in range(p.cols) if (r, c) not in p.hidden)
    assert p.labels[r][c].textItem.toPlainText() == p.fmt.cell(float(p.matrix[r, c]))
    # the panel lists the blanks, numbered as the boxes, named by their tokens, typeset
    tokens = window.document.tokens
    for i, cell in enumerate(expected.cells):
        label = panel.findChild(QLabel, f"exercise.label.{i}")
        assert label.accessibleName() == f"{i + 1}. {cell.name} ="
        assert f"[{tokens[cell.row]}, " in cell.name and "<sub>" in label.text()
    assert panel.score.text() == "Score: 0 of 4"
    # the query strip prints the followed row's numbers: hidden during the exercise
    assert not window.query_strip.isVisible()


def test_right_and_wrong_answers_hint_answer_and_score(window, qtbot):
    doc = window.document
    expected = make_exercise(doc.snapshot(), "weights", 4, 3)
    _action, panel = enter(window, qtbot)
    undo_count = doc.undo_stack.count()
    before = doc.matrix("W_Q").copy()

    right = expected.fmt.plain(expected.cells[0].value)
    qtbot.keyClicks(edit(panel, 0), right)
    qtbot.keyClick(edit(panel, 0), Qt.Key.Key_Return)
    assert "right" in result(panel, 0)
    assert RIGHT_STYLE in panel.findChild(QLabel, "exercise.result.0").styleSheet()
    assert panel.score.text() == "Score: 1 of 4"

    edit(panel, 1).setText(num(expected.cells[1].value + 0.3))
    press(qtbot, panel, "exercise.check.1")
    assert "not" in result(panel, 1) and "try again" in result(panel, 1)
    assert WRONG_STYLE in panel.findChild(QLabel, "exercise.result.1").styleSheet()
    assert panel.score.text() == "Score: 1 of 4"

    edit(panel, 2).setText("abc")  # not a number: a message, nothing counted
    press(qtbot, panel, "exercise.check.2")
    assert result(panel, 2) and panel.score.text() == "Score: 1 of 4"

    press(qtbot, panel, "exercise.hint.1")
    assert result(panel, 1) == f"Hint: {expected.hints[1]}" and "?" in result(panel, 1)
    press(qtbot, panel, "exercise.reveal.3")
    assert expected.fmt.plain(expected.cells[3].value) in result(panel, 3)
    # a revealed answer typed in does not count
    edit(panel, 3).setText(expected.fmt.plain(expected.cells[3].value))
    press(qtbot, panel, "exercise.check.3")
    assert panel.score.text() == "Score: 1 of 4"

    # grading is no edit: no undo step, no number changed
    assert doc.undo_stack.count() == undo_count
    assert np.array_equal(doc.matrix("W_Q"), before)

    press(qtbot, panel, "exercise.reset")
    assert panel.score.text() == "Score: 0 of 4" and edit(panel, 0).text() == ""


RIGHT_STYLE, WRONG_STYLE = "#1b7f2a", "#c62828"


def test_tolerance_and_bad_input(window, qtbot):
    _action, panel = enter(window, qtbot, stage="scores", blanks=2, seed=1, tolerance="0.5")
    cell = panel.exercise.cells[0]
    edit(panel, 0).setText(num(cell.value + 0.4))
    press(qtbot, panel, "exercise.check.0")
    assert "right" in result(panel, 0)

    panel.leave()
    panel.blanks.setValue(999)  # more than the stage has
    press(qtbot, panel, "exercise.start")
    assert panel.exercise is None and "has only" in panel.message.text()
    assert all(not p.hidden for p in window.attention_view.panels.values())
    panel.blanks.setValue(2)
    panel.tolerance.setText("-1")
    press(qtbot, panel, "exercise.start")
    assert panel.exercise is None and "tolerance" in panel.message.text()


@pytest.mark.parametrize("stage", ["input", "projections", "mixing", "concat", "output"])
def test_every_stage(window, qtbot, stage):
    _action, panel = enter(window, qtbot, stage=stage, blanks=3, seed=5)
    assert panel.exercise is not None and len(panel.exercise.cells) == 3
    hidden = sum(len(p.hidden) for p in window.attention_view.panels.values())
    assert hidden >= 3  # K/V of a shared group show in every head of the group


def test_leaving_restores_and_an_edit_ends_the_exercise(window, qtbot):
    action, panel = enter(window, qtbot)
    view = window.attention_view
    action.trigger()  # uncheck View ▸ Exercise
    assert not action.isChecked() and panel.exercise is None
    assert all(not p.hidden for p in view.panels.values())
    assert not window.findChild(QDockWidget, "dock.exercise").isVisible()
    assert window.query_strip.isVisible()

    action, panel = enter(window, qtbot)
    press(qtbot, panel, "exercise.stop")
    assert panel.exercise is None and not action.isChecked()
    assert all(not p.hidden for p in view.panels.values())

    action, panel = enter(window, qtbot)
    w_q = window.document.matrix("W_Q").copy()
    w_q[0, 0, 0] += 1.0
    window.document.set_matrix("W_Q", w_q)  # the answers would be stale
    qtbot.wait(20)
    assert "stale" in window.statusBar().currentMessage()
    assert panel.exercise is None and not action.isChecked()
    assert "stale" in panel.message.text()
    assert all(not p.hidden for p in view.panels.values())
    window.document.undo_stack.setClean()


def test_a_shared_key_head_hides_in_every_head_of_its_group(qtbot):
    from mha_gui.app import create_main_window

    w = create_main_window("gqa")
    qtbot.addWidget(w)
    _action, panel = enter(w, qtbot, stage="projections", blanks=6, seed=2)
    ex = panel.exercise
    view = w.attention_view
    for (kind, head), p in view.panels.items():
        h = None if head < 0 else head
        assert p.hidden == set(ex.panel_blanks(kind, h))
    assert any(c.kind in ("K", "V") for c in ex.cells)
    w.document.undo_stack.setClean()
