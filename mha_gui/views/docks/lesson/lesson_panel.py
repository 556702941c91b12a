"""The lesson player (dock `lessonPanel`; Help ▸ Lessons… chooses a lesson).

It shows the lesson's title, the step's title and text, "3 / 9", Back / Next
(`lesson.back`, `lesson.next`), Restart and the list of steps. Going to a step applies
what the step shows through the window's usual paths — a preset, a session file or a
model's layer is opened with the save prompt (Cancel keeps the student where they are),
the stage, head and query through the document's view methods, docks through their dock
widgets — none of which is an undo step. Then it points (overlay.py).

A step with a task shows it with Check, Hint and Show me: Check evaluates the condition
on the window's numbers (engine/lessons/conditions.py) or grades the typed value with the
exercise checker's tolerance; right turns green and opens Next, which otherwise waits
until the student presses Skip. Show me applies what the task names as ordinary edits
(one undo step, labelled "Show me: …") or reveals the answer. The student's own edits are
ordinary undoable edits. Where the student is and which tasks they passed is kept per
lesson in QSettings ("Reset progress" forgets it).

This module is the panel (its widgets, going from step to step, what it says); its
parts are objects it makes: `StepOpener` (step_opener.py: what a step opens and shows),
`TaskChecker` (task_checker.py: Check, the answer, Show me's edits), progress.py (the
saved progress) and the pointer overlay (overlay.py).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from mha_gui.engine.lessons import KNOWN_DOCKS, Lesson, LessonError, check_lesson, load_lesson
from mha_gui.engine.lessons.lesson import Step
from mha_gui.engine.lessons.markup import to_html, to_plain
from mha_gui.theme import ERROR_RED
from mha_gui.views.docks.lesson.controls import button, label
from mha_gui.views.docks.lesson.overlay import PointerOverlay
from mha_gui.views.docks.lesson.progress import forget_progress, load_progress, save_progress
from mha_gui.views.docks.lesson.step_opener import StepOpener, dock_of
from mha_gui.views.docks.lesson.task_checker import TaskChecker
from mha_gui.views.window.registry import ActionSpec, ViewSpec, register_action, register_view

RIGHT = "#1b7f2a"
_PENDING: list[Lesson] = []  # `mha-gui --lesson`: started once the window's panel exists


def start_when_shown(lesson: Lesson) -> None:
    """Start `lesson` in the next lesson panel that is built (the window of --lesson)."""
    _PENDING[:] = [lesson]


class LessonPanel(QWidget):
    """Plays one lesson in the window that holds it."""

    def __init__(self, document, settings=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.lesson: Lesson | None = None
        self.index = 0
        self.passed: set[int] = set()  # step numbers whose task was checked right
        self.skipped: set[int] = set()
        self.revealed: set[int] = set()
        self.overlay: PointerOverlay | None = None
        self.opener = StepOpener(document, self, self._message)
        self.tasks = TaskChecker(document)

        self.lesson_title = label("lesson.title", "Lesson", bold=True, size=1.15)
        self.counter = label("lesson.counter", "")
        self.step_title = label("lesson.stepTitle", "", bold=True)
        self.text = QLabel(objectName="lesson.text", wordWrap=True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.text.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # read by Tab and screen readers
        self.text.setAccessibleName("Step text")
        scroll = QScrollArea(widgetResizable=True, objectName="lesson.textScroll")
        scroll.setWidget(self.text)
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)

        self.task = label("lesson.task", "", bold=True)
        self.answer = QLineEdit(objectName="lesson.answer")
        self.answer.setPlaceholderText("your value")
        self.answer.setAccessibleName("Your answer")
        self.answer.returnPressed.connect(self.check)
        self.check_button = button("lesson.check", "&Check", "Check what you did", self.check)
        self.hint_button = button("lesson.hint", "&Hint", "A hint for this task", self.hint)
        self.show_me_button = button(
            "lesson.showMe", "Show &me", "Do the task for me (an undoable edit)", self.show_me
        )
        self.skip_button = button(
            "lesson.skip", "S&kip", "Go on without doing this task", self.skip
        )
        self.result = label("lesson.result", "")
        self.task_box = QWidget(objectName="lesson.taskBox")
        tb = QVBoxLayout(self.task_box)
        tb.setContentsMargins(0, 4, 0, 4)
        tb.addWidget(self.task)
        tb.addWidget(self.answer)
        row = QHBoxLayout()
        for b in (self.check_button, self.hint_button, self.show_me_button, self.skip_button):
            row.addWidget(b)
        tb.addLayout(row)
        tb.addWidget(self.result)

        self.back_button = button("lesson.back", "← &Back", "The previous step", self.back)
        self.next_button = button("lesson.next", "&Next →", "The next step", self.next)
        self.restart_button = button(
            "lesson.restart", "&Restart", "Start the lesson again from step 1", self.restart
        )
        nav = QHBoxLayout()
        nav.addWidget(self.back_button)
        nav.addWidget(self.counter, 1, Qt.AlignmentFlag.AlignCenter)
        nav.addWidget(self.next_button)

        self.steps = QListWidget(objectName="lesson.steps")
        self.steps.setAccessibleName("Steps of the lesson")
        self.steps.itemActivated.connect(self._step_chosen)
        self.choose_button = button(
            "lesson.choose", "&Lessons…", "Choose a built-in lesson or open a file", self.choose
        )
        self.reset_button = button(
            "lesson.resetProgress",
            "Reset &progress",
            "Forget where you are and what you passed",
            self.reset_progress,
        )
        tools = QHBoxLayout()
        tools.addWidget(self.restart_button)
        tools.addWidget(self.reset_button)
        tools.addWidget(self.choose_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.lesson_title)
        layout.addWidget(self.step_title)
        layout.addWidget(scroll, 3)
        layout.addWidget(self.task_box)
        layout.addLayout(nav)
        layout.addWidget(self.steps, 1)
        layout.addLayout(tools)

        self.document.viewChanged.connect(self._schedule_point)
        for signal in (
            document.configChanged,  # also after every change of shape
            document.tokensChanged,
            document.traceChanged,
        ):
            signal.connect(self._schedule_point)
        self._show_nothing()
        if _PENDING:
            lesson = _PENDING.pop()
            QTimer.singleShot(0, self, lambda: self.start(lesson))

    # ------------------------------------------------------------------ window -----
    def _overlay(self) -> PointerOverlay | None:
        window = self.window()
        if window is None or window is self:
            return None
        if self.overlay is None or self.overlay.parent() is not window:
            self.overlay = PointerOverlay(window)
        return self.overlay

    def _message(self, text: str) -> None:
        window = self.window()
        if hasattr(window, "show_message"):
            window.show_message(text)

    # ------------------------------------------------------------------ lesson -----
    def start(self, lesson: Lesson, step: int | None = None) -> bool:
        """Play `lesson` from `step` (0-based; default: where the student left it).
        A lesson whose steps name what does not exist is refused with every problem."""
        try:
            check_lesson(lesson, docks=self._docks(), opened=dict(self.opener.models))
        except LessonError as exc:
            QMessageBox.critical(
                self, "Cannot play lesson", "\n".join(str(p) for p in exc.problems[:12])
            )
            return False
        self.lesson = lesson
        self.opener.restart(models={})
        saved = self._load_progress()
        dock = dock_of(self)
        if dock is not None:
            dock.show()
            dock.raise_()
        self.lesson_title.setText(lesson.title)
        self.lesson_title.setToolTip(lesson.summary)
        self.steps.clear()
        for s in lesson.steps:
            item = QListWidgetItem(f"{s.number}. {s.title}")
            item.setData(Qt.ItemDataRole.UserRole, s.number - 1)
            self.steps.addItem(item)
        return self.go(saved if step is None else step)

    def start_named(self, name_or_path) -> bool:
        """A built-in lesson by name or a lesson file; a bad file is said in a dialog."""
        try:
            lesson = load_lesson(name_or_path)
        except (LessonError, OSError) as exc:
            QMessageBox.critical(self, "Cannot open lesson", str(exc))
            return False
        return self.start(lesson)

    def _docks(self) -> tuple[str, ...]:
        window = self.window()
        docks = getattr(window, "docks", None)
        return tuple(docks) if docks else KNOWN_DOCKS

    @property
    def step(self) -> Step | None:
        return None if self.lesson is None else self.lesson.steps[self.index]

    def go(self, index: int) -> bool:
        """Go to step `index` and apply what it shows; False (the student stays) when a
        save prompt was cancelled or what it opens cannot be opened."""
        if self.lesson is None:
            return False
        index = max(0, min(int(index), len(self.lesson.steps) - 1))
        if not self.opener.open_for(self.lesson, index):
            return False
        self.index = index
        step = self.lesson.steps[index]
        self.opener.show(step)
        self._show_step(step)
        self._save_progress()
        return True

    def next(self) -> bool:
        if self.lesson is None or not self.next_button.isEnabled():
            return False
        if self.index == len(self.lesson.steps) - 1:
            self._message(f"Lesson finished: {self.lesson.title}")
            self.result.setText("Lesson finished. Restart goes back to step 1.")
            return False
        return self.go(self.index + 1)

    def back(self) -> bool:
        return self.lesson is not None and self.index > 0 and self.go(self.index - 1)

    def restart(self) -> bool:
        if self.lesson is None:
            return False
        self.opener.restart()  # step 1's numbers again, as the lesson starts them
        return self.go(0)

    def _step_chosen(self, item: QListWidgetItem) -> None:
        self.go(int(item.data(Qt.ItemDataRole.UserRole)))

    def _show_step(self, step: Step) -> None:
        total = len(self.lesson.steps)
        self.counter.setText(f"{step.number} / {total}")
        self.counter.setAccessibleName(f"Step {step.number} of {total}")
        self.step_title.setText(step.title)
        self.text.setText(to_html(step.text))
        self.text.setAccessibleDescription(to_plain(step.text))
        self.steps.setCurrentRow(self.index)
        for i in range(self.steps.count()):
            number = i + 1
            mark = " ✓" if number in self.passed else ""
            self.steps.item(i).setText(f"{number}. {self.lesson.steps[i].title}{mark}")
        task = step.do
        self.task_box.setVisible(task is not None)
        self.result.clear()
        self.result.setStyleSheet("")
        if task is not None:
            self.task.setText(task.task)
            self.answer.setVisible(task.answer is not None)
            self.answer.clear()
            self.answer.setStyleSheet("")
            if step.number in self.passed:
                self._verdict(True, "Done: you passed this task before.")
        self.back_button.setEnabled(self.index > 0)
        self._update_next()
        overlay = self._overlay()
        if overlay is not None:
            overlay.show_point(step.point, self.document)

    def _update_next(self) -> None:
        step = self.step
        waiting = (
            step is not None
            and step.do is not None
            and not ({step.number} & (self.passed | self.skipped | self.revealed))
        )
        last = self.lesson is not None and self.index == len(self.lesson.steps) - 1
        self.next_button.setEnabled(self.lesson is not None and not waiting)
        self.next_button.setText("&Finish" if last else "&Next →")
        self.next_button.setToolTip(
            "Check your answer first, or press Skip" if waiting else "The next step"
        )
        self.skip_button.setEnabled(waiting)

    def _schedule_point(self, *_args) -> None:
        if self.overlay is not None and self.lesson is not None:
            self.overlay.schedule()

    def _show_nothing(self) -> None:
        self.lesson_title.setText("No lesson")
        self.step_title.setText("")
        self.text.setText(
            to_html(
                "Lessons walk you through the computation step by step and check what you "
                "do.\n\nPress **Lessons…** (or Help ▸ Lessons…) to choose one."
            )
        )
        self.task_box.setVisible(False)
        self.counter.setText("")
        for b in (self.back_button, self.next_button, self.restart_button, self.reset_button):
            b.setEnabled(False)

    # ------------------------------------------------------------------- tasks -----
    def passes(self) -> bool | None:
        """Whether the task's condition holds on the window's numbers now; None for an
        answer task (graded from what was typed) or no task."""
        step = self.step
        return None if step is None else self.tasks.passes(step)

    def check(self) -> bool:
        """Check the task; right turns green and opens Next. Changes no number."""
        step = self.step
        if step is None or step.do is None:
            return False
        try:
            right, message = self.tasks.check(step, self.answer.text())
        except ValueError as exc:
            self._verdict(False, str(exc))
            return False
        if right and step.number not in self.revealed:
            self.passed.add(step.number)
            self._save_progress()
            self._show_step_marks()
        self._verdict(right, message)
        self._update_next()
        return right

    def hint(self) -> str:
        step = self.step
        if step is None or step.do is None:
            return ""
        self._verdict(None, "Hint: " + step.do.hint)
        return step.do.hint

    def show_me(self) -> None:
        """Do the task for the student: its Show me as ordinary edits (one undo step),
        or the answer written in the box (it no longer counts as passed)."""
        step = self.step
        if step is None or step.do is None:
            return
        if step.do.answer is not None:
            try:  # the cell asked about may be gone (other tokens since the step opened)
                answer = self.tasks.answer(step)
            except ValueError as exc:
                self._verdict(False, f"The answer cannot be shown: {exc}")
                return
            self.answer.setText(answer)
            self.revealed.add(step.number)
            self._verdict(None, "The answer is shown above (it does not count as done).")
            self._update_next()
            return
        try:
            self.tasks.show_me(step)
        except ValueError as exc:
            self._verdict(False, f"Show me could not be applied: {exc}")
            return
        self.check()  # document.trace() recomputes the pending edits first

    def skip(self) -> None:
        step = self.step
        if step is not None and step.do is not None:
            self.skipped.add(step.number)
            self._verdict(None, "Skipped: Next is open. You can come back to it.")
            self._update_next()

    def _verdict(self, right: bool | None, text: str) -> None:
        self.result.setText(text)
        colour = "" if right is None else (RIGHT if right else ERROR_RED)
        self.result.setStyleSheet(f"color: {colour}; font-weight: bold;" if colour else "")
        self.result.setProperty("verdict", "" if right is None else str(right))
        if self.answer.isVisible():
            self.answer.setStyleSheet(f"border: 2px solid {colour};" if colour else "")

    def _show_step_marks(self) -> None:
        for i in range(self.steps.count()):
            mark = " ✓" if i + 1 in self.passed else ""
            self.steps.item(i).setText(f"{i + 1}. {self.lesson.steps[i].title}{mark}")

    # ---------------------------------------------------------------- progress -----
    def _load_progress(self) -> int:
        step, self.passed = load_progress(self.lesson)
        self.skipped, self.revealed = set(), set()
        for b in (self.restart_button, self.reset_button):
            b.setEnabled(True)
        return step

    def _save_progress(self) -> None:
        if self.lesson is not None:
            save_progress(self.lesson, self.index, self.passed)

    def reset_progress(self) -> None:
        """Forget the lesson's saved step and passed tasks, and start at step 1."""
        if self.lesson is None:
            return
        forget_progress(self.lesson)
        self.passed.clear()
        self.skipped.clear()
        self.revealed.clear()
        self.restart()
        self._message(f"Progress of “{self.lesson.title}” reset")

    def choose(self):
        from mha_gui.views.docks.lesson.chooser import show_chooser

        return show_chooser(self.window())


def lesson_panel(window) -> LessonPanel | None:
    return window.findChild(LessonPanel, "lessonPanel")


def _choose(window) -> None:
    from mha_gui.views.docks.lesson.chooser import show_chooser

    show_chooser(window)


register_view(ViewSpec("lesson", LessonPanel, "lessonPanel", "Lesson", area="right"))
register_action(
    ActionSpec(
        menu="Help",
        text="&Lessons…",
        object_name="action.lessons",
        trigger=_choose,
        tip="Guided lessons that walk through the computation and check what you do",
    )
)

__all__ = ["LessonPanel", "lesson_panel", "start_when_shown"]
