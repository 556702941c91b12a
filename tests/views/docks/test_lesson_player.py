"""The lesson player in the window: every built-in lesson plays from start to end, each
step shows what it declares, every task fails before and passes after Show me, Next
waits for a task, progress is kept per lesson (in the test's own QSettings), and the
player is reachable from Help ▸ Lessons… and with the keyboard."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QWidget

from mha_gui.engine.lessons import KNOWN_DOCKS, load_lesson
from mha_gui.engine.lessons.check import query_position
from mha_gui.engine.lessons.library import builtin_name
from mha_gui.views.docks.lesson.lesson_panel import LessonPanel, lesson_panel
from mha_gui.views.docks.lesson.overlay import panel_key
from mha_gui.views.settings.display_settings import qsettings
from tests.engine.lessons.test_lessons import builtin_params


@pytest.fixture
def shown(window, qtbot):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    return window


def panel_of(window) -> LessonPanel:
    panel = lesson_panel(window)
    assert panel is not None
    return panel


def assert_step_shows(window, panel, qtbot):
    """What the step declares is what the window shows."""
    step, doc = panel.step, window.document
    show = step.show
    if show.stage is not None:
        assert doc.view.stage == show.stage
    if show.head is not None:
        assert doc.view.head == show.head
    if show.query is not None:
        assert doc.view.query == query_position(show.query, doc.tokens)
    for name in show.docks:
        assert window.docks[name].isVisible(), name
    assert panel.counter.text() == f"{step.number} / {len(panel.lesson.steps)}"
    assert panel.step_title.text() == step.title
    targets = panel.overlay.targets
    point = step.point
    if point.control:
        qtbot.waitUntil(lambda: "control" in panel.overlay.targets)
        assert targets["control"].objectName() == point.control
    if point.panel:
        assert panel_key(point.panel, doc.config) in window.attention_view.panels
        assert "panel" in targets
    on_stage = [
        c for c in point.cells if panel_key(c.symbol, doc.config) in window.attention_view.panels
    ]
    if on_stage:
        assert targets["cells"] == on_stage
    if point.callout:
        assert targets["callout"] == point.callout


@pytest.mark.parametrize("path", builtin_params())
def test_every_builtin_lesson_plays_from_start_to_end(shown, qtbot, path, dialogs):
    window = shown
    panel = panel_of(window)
    lesson = load_lesson(builtin_name(path))
    assert panel.start(lesson, step=0)
    assert window.docks["lesson"].isVisible()
    for k, step in enumerate(lesson.steps):
        assert panel.index == k
        assert_step_shows(window, panel, qtbot)
        task = step.do
        if task is not None:
            assert not panel.next_button.isEnabled()  # Next waits for the task
            if task.tree is not None:
                assert panel.passes() is False, step.title
                assert panel.check() is False
                assert panel.result.property("verdict") == "False"
                undo_before = window.document.undo_stack.count()
                panel.show_me()
                assert panel.passes() is True, step.title
                assert panel.result.property("verdict") == "True"
                assert step.number in panel.passed
                if (
                    task.show_me.config
                    or task.show_me.values
                    or task.show_me.block
                    or task.show_me.ablate
                ):
                    assert window.document.undo_stack.count() == undo_before + 1  # one step
            else:
                panel.answer.setText("123456")
                assert panel.check() is False
                panel.show_me()  # writes the answer in the box, which is then right
                assert panel.check() is True
                assert step.number not in panel.passed  # a shown answer does not count
            assert panel.next_button.isEnabled()
        if k + 1 < len(lesson.steps):
            undo = window.document.undo_stack.count()
            source = lesson.steps[k + 1].show.source
            qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
            assert panel.index == k + 1
            if source is None:  # nothing a step shows is an undo step
                assert window.document.undo_stack.count() == undo
    assert panel.next_button.text() == "&Finish"
    window.document.undo_stack.setClean()


def test_the_window_docks_are_the_ones_lessons_may_name(window):
    assert set(window.docks) == set(KNOWN_DOCKS)


def test_skip_opens_next_and_back_restart_move(shown, qtbot):
    panel = panel_of(shown)
    lesson = load_lesson("walkthrough")
    panel.start(lesson, step=2)  # "Scores": a typed answer
    assert panel.step.do is not None and not panel.next_button.isEnabled()
    qtbot.mouseClick(panel.skip_button, Qt.MouseButton.LeftButton)
    assert panel.next_button.isEnabled()
    assert panel.next() and panel.index == 3
    assert panel.back() and panel.index == 2
    assert panel.restart() and panel.index == 0
    assert not panel.back_button.isEnabled()


def test_hint_and_a_wrong_answer_turn_red_a_right_one_green(shown):
    panel = panel_of(shown)
    panel.start(load_lesson("walkthrough"), step=2)  # S_0[cat, cat] = 6/√2 = 4.24
    panel.hint()
    assert "√2" in panel.result.text()
    panel.answer.setText("4")
    assert panel.check() is False and panel.result.property("verdict") == "False"
    panel.answer.setText("4,24")
    assert panel.check() is True and panel.result.property("verdict") == "True"
    assert 3 in panel.passed and panel.next_button.isEnabled()
    panel.answer.setText("four")
    assert panel.check() is False  # not a number: said, not raised


def test_show_me_on_a_layer_without_the_steps_tokens_says_so(shown, dialogs):
    """The student opens another layer mid-step (<s> one two …, no "cat"): Show me
    says why it cannot show the answer instead of raising, and writes nothing."""
    panel = panel_of(shown)
    panel.start(load_lesson("walkthrough"), step=2)  # the answer S_0[cat, cat]
    shown.findChild(QAction, "action.new.positional").trigger()
    assert "cat" not in shown.document.tokens
    panel.answer.setText("")
    panel.show_me()
    assert panel.answer.text() == ""
    assert "no token 'cat'" in panel.result.text() and "opens it again" in panel.result.text()
    assert panel.result.property("verdict") == "False"
    assert 3 not in panel.revealed


def test_student_edits_are_undoable_and_show_me_is_one_undo_step(shown):
    window = shown
    panel = panel_of(window)
    panel.start(load_lesson("walkthrough"), step=9)  # "Switch a head off"
    stack = window.document.undo_stack
    count = stack.count()
    panel.show_me()
    assert stack.count() == count + 1 and stack.undoText().startswith("Show me")
    assert window.document.config.ablate == (1,)
    stack.undo()
    assert window.document.config.ablate == ()
    assert panel.passes() is False
    window.document.undo_stack.setClean()


def test_progress_is_kept_per_lesson_and_can_be_reset(shown, _temporary_settings):
    window = shown
    panel = panel_of(window)
    lesson = load_lesson("walkthrough")
    panel.start(lesson, step=4)
    panel.show_me()  # passes step 5
    assert qsettings().fileName().startswith(str(_temporary_settings))  # never the real home
    again = LessonPanel(window.document)
    again.setParent(window)
    again.lesson = lesson
    assert again._load_progress() == 4 and again.passed == {5}
    panel.reset_progress()
    assert panel.index == 0 and panel.passed == set()
    assert qsettings().value("lessons/walkthrough/passed") in (None, [])
    window.document.undo_stack.setClean()


def test_changing_what_is_open_asks_to_save_and_cancel_keeps_the_step(shown, dialogs):
    window = shown
    panel = panel_of(window)
    panel.start(load_lesson("masks"), step=4)
    window.document.set_value("X", (0, 0), 5.0)  # the student's own edit
    panel.skip()  # the task of step 5 waits otherwise
    dialogs.answer = QMessageBox.StandardButton.Cancel
    assert not panel.next()  # step 6 opens the positional preset
    assert panel.index == 4 and "warning" in dialogs.kinds()
    assert window.document.matrix("X")[0, 0] == 5.0
    dialogs.answer = QMessageBox.StandardButton.Discard
    assert panel.next() and panel.index == 5
    assert window.document.tokens[0] == "<s>"


def test_going_back_within_one_source_keeps_the_students_edits(shown):
    window = shown
    panel = panel_of(window)
    panel.start(load_lesson("walkthrough"), step=8)  # steps 8 and 9 have no task
    window.document.set_value("X", (1, 1), 7.0)
    assert panel.back() and panel.next()
    assert window.document.matrix("X")[1, 1] == 7.0
    window.document.undo_stack.setClean()


def test_help_lessons_opens_the_chooser_and_starts_a_lesson(shown, qtbot):
    window = shown
    action = window.findChild(QAction, "action.lessons")
    assert action is not None and action.text() == "&Lessons…"
    action.trigger()
    chooser = window.findChild(QWidget, "lessonChooser")
    assert chooser is not None and chooser.isVisible()
    assert chooser.list.count() >= 6
    chooser.list.setCurrentRow(1)
    assert chooser.start()
    assert panel_of(window).lesson.name == "scaling"
    assert not chooser.isVisible()


def test_open_lesson_file_refuses_a_bad_file_with_its_problems(shown, dialogs, tmp_path):
    window = shown
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'title = "x"\nsummary = "y"\n[[step]]\ntitle = "a"\ntext = "b"\n[step.show]\npreset = "toy"\nhead = 9\n'
    )
    from mha_gui.views.docks.lesson.chooser import show_chooser

    chooser = show_chooser(window)
    dialogs.open_path = str(bad)
    assert not chooser.open_file()
    assert dialogs.kinds()[-1] == "critical"
    assert "step 1 (“a”): field 'show.head'" in dialogs.calls[-1][1]
    assert panel_of(window).lesson is None
    chooser.close()


def test_every_control_is_reachable_with_tab_and_has_an_accessible_name(shown):
    panel = panel_of(shown)
    panel.start(load_lesson("walkthrough"), step=2)
    panel.skip()  # Next is focusable once it is enabled
    controls = [
        panel.text,
        panel.answer,
        panel.check_button,
        panel.hint_button,
        panel.show_me_button,
        panel.skip_button,
        panel.back_button,
        panel.next_button,
        panel.steps,
        panel.restart_button,
        panel.reset_button,
        panel.choose_button,
    ]
    for w in controls:
        assert w.accessibleName(), w.objectName()
        assert w.focusPolicy() & Qt.FocusPolicy.TabFocus, w.objectName()
    names = {w.objectName() for w in controls}
    assert {"lesson.next", "lesson.back"} <= names
    # Tab visits the player's controls in reading order
    panel.text.setFocus()
    seen = []
    for _ in range(len(controls) + 4):
        w = panel.focusWidget() if panel.isAncestorOf(panel.focusWidget() or panel) else None
        if w is not None:
            seen.append(w.objectName())
        panel.focusNextChild()
    for name in ("lesson.answer", "lesson.check", "lesson.next", "lesson.steps"):
        assert name in seen, seen
