"""Exercise mode (issue 10): hide some cells of a stage, let a student type them, grade.

View ▸ Exercise (`action.exercise`, checkable) opens the dock `exercisePanel`. The
teacher picks a stage (the current one by default), how many cells to hide, a seed and
an optional tolerance, and presses Start: engine/teaching/exercises.py picks the cells (same seed,
same cells), the attention view draws them as empty boxes (AttentionView.set_cell_filter)
and the panel lists them, one line per blank — type a value and press Enter or Check
(right: green, wrong: red, with the message), Hint (the formula with the numbers, result
"?"), Answer (shown; it no longer counts as right). A score "3 of 4" and Reset.

Checking answers changes no number and is not an undo step. The exercise's values are
those of the numbers when Start was pressed: an edit of a number, the mask, the tokens or
the dimensions while in the mode would make them stale, so it ends the exercise (the
normal view comes back) with a message saying why — Start makes a new one from the new
numbers. Leaving the mode (unchecking View ▸ Exercise, or Stop) restores the normal view.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from mha_gui.engine.layer.values import parse_value
from mha_gui.engine.panels.notation import rich_text
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.teaching.exercises import Exercise, make_exercise
from mha_gui.theme import ERROR_RED
from mha_gui.views.widgets.retire import retire
from mha_gui.views.window.registry import ActionSpec, ViewSpec, register_action, register_view

RIGHT, WRONG = "#1b7f2a", ERROR_RED  # readable on light and dark backgrounds
DEFAULT_BLANKS = 4


class ExercisePanel(QWidget):
    """The exercise's settings, its blanks and the score (dock `exercisePanel`)."""

    def __init__(self, document, settings=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.exercise: Exercise | None = None
        self.rows: list[dict] = []
        self._strip_was = False  # the query strip showed before the exercise hid it

        self.stage = QComboBox(objectName="exercise.stage")
        for s in STAGES:
            self.stage.addItem(s.heading, s.name)
        self.blanks = QSpinBox(objectName="exercise.blanks", minimum=1, maximum=999)
        self.blanks.setValue(DEFAULT_BLANKS)
        self.seed = QSpinBox(objectName="exercise.seed", minimum=0, maximum=999_999)
        self.tolerance = QLineEdit(objectName="exercise.tolerance")
        self.tolerance.setPlaceholderText("as shown")
        self.tolerance.setToolTip(
            "How far an answer may be from the true value; empty: it must match the value "
            "at the precision the stage shows"
        )
        form = QFormLayout()
        form.addRow("Stage", self.stage)
        form.addRow("Cells to hide", self.blanks)
        form.addRow("Seed", self.seed)
        form.addRow("Tolerance", self.tolerance)

        self.start = QPushButton("Start", objectName="exercise.start")
        self.start.setToolTip("Hide the cells and list them below (the same seed hides the same)")
        self.stop = QPushButton("Stop", objectName="exercise.stop")
        self.stop.setToolTip("Leave the exercise: every cell shows again")
        self.reset = QPushButton("Reset", objectName="exercise.reset")
        self.reset.setToolTip("Clear the answers and the score (the same cells stay hidden)")
        self.start.clicked.connect(self.start_exercise)
        self.stop.clicked.connect(self.leave)
        self.reset.clicked.connect(self.reset_answers)
        buttons = QHBoxLayout()
        for b in (self.start, self.stop, self.reset):
            buttons.addWidget(b)

        self.score = QLabel("", objectName="exercise.score")
        bold = self.score.font()
        bold.setBold(True)
        self.score.setFont(bold)
        self.message = QLabel("", objectName="exercise.message", wordWrap=True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.list_widget = QWidget(objectName="exercise.blanksList")
        self.grid = QGridLayout(self.list_widget)
        self.grid.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.grid.setColumnStretch(1, 1)
        scroll = QScrollArea(widgetResizable=True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.list_widget)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.score)
        layout.addWidget(self.message)
        layout.addWidget(scroll, 1)

        # configChanged covers a shape change (the document always sends it after
        # shapeChanged): each change ends the exercise once, with one message
        for signal in (
            document.valuesChanged,
            document.configChanged,
            document.tokensChanged,
            document.maskChanged,
        ):
            signal.connect(self._numbers_changed)
        self._show_state()

    # ------------------------------------------------------------------ mode -------
    @property
    def active(self) -> bool:
        return self.exercise is not None

    def enter(self) -> None:
        """Entering the mode: the stage shown is the one offered."""
        if not self.active:
            self.stage.setCurrentIndex(self.document.view.stage)
            self.message.setText("Pick a stage and how many cells to hide, then press Start.")

    def start_exercise(self) -> bool:
        """Make the exercise from the current numbers and hide its cells; on bad input a
        message and nothing changes."""
        doc = self.document
        if doc.busy:
            self._say("The numbers are being computed: press Start again in a moment.")
            return False
        try:
            tolerance = self._tolerance()
            exercise = make_exercise(
                doc.snapshot(),
                self.stage.currentData(),
                self.blanks.value(),
                self.seed.value(),
                tolerance=tolerance,
                trace=doc.trace(),
            )
        except ValueError as exc:
            self._say(str(exc)[0].upper() + str(exc)[1:] + ".", error=True)
            return False
        self.exercise = exercise
        self._build_rows()
        view = self._attention_view()
        if view is not None:
            view.set_cell_filter(self._hidden)
        doc.set_stage(exercise.stage.index)
        self._show_strip(False)  # after the stage switch: this resizes the view
        self._set_action(True)
        self._show_state()
        self._say(
            f"{len(exercise.cells)} cells of {exercise.stage.heading} "
            f"are hidden: type each value and press Enter. Answers within "
            f"{exercise.tolerance:g} count as right."
        )
        return True

    def leave(self, message: str = "") -> None:
        """End the exercise (if any): every cell shows again."""
        was = self.active
        self.exercise = None
        view = self._attention_view()
        if view is not None:
            view.set_cell_filter(None)
        self._show_strip(True)
        self._clear_rows()
        self._set_action(False)
        self._show_state()
        if message:
            self._say(message, error=True)
            self._status(message)
        elif was:
            self._say("Exercise ended: every cell shows again.")

    def reset_answers(self) -> None:
        if self.exercise is None:
            return
        self.exercise.reset()
        for row in self.rows:
            row["edit"].clear()
            row["edit"].setEnabled(True)
            row["result"].clear()
            row["result"].setStyleSheet("")
        self._show_state()
        self._say("Answers cleared: the same cells are still hidden.")

    def _numbers_changed(self, *_args) -> None:
        if self.active:
            self.leave(
                "The numbers changed, so the exercise's answers would be stale: it ended. "
                "Press Start for a new one from the new numbers."
            )

    # ----------------------------------------------------------------- blanks -------
    def _hidden(self, kind: str, head: int | None) -> dict[tuple[int, int], int]:
        # {(row, col): index in the list}: the view numbers each blank as listed here
        if self.exercise is None:
            return {}
        return self.exercise.panel_blanks(kind, head)

    def _build_rows(self) -> None:
        self._clear_rows()
        for i, cell in enumerate(self.exercise.cells):
            # numbered as the heatmap's boxes are, named by tokens: "1. A₀[cat, down] ="
            label = QLabel(f"{i + 1}. {cell.name_html} =", objectName=f"exercise.label.{i}")
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setAccessibleName(f"{i + 1}. {cell.name} =")
            edit = QLineEdit(objectName=f"exercise.answer.{i}")
            edit.setPlaceholderText("your value")
            edit.setMinimumWidth(70)
            check = QPushButton("Check", objectName=f"exercise.check.{i}")
            hint = QPushButton("Hint", objectName=f"exercise.hint.{i}")
            answer = QPushButton("Answer", objectName=f"exercise.reveal.{i}")
            result = QLabel("", objectName=f"exercise.result.{i}", wordWrap=True)
            result.setTextFormat(Qt.TextFormat.RichText)
            result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            edit.returnPressed.connect(lambda i=i: self.check(i))
            check.clicked.connect(lambda _=False, i=i: self.check(i))
            hint.clicked.connect(lambda _=False, i=i: self.hint(i))
            answer.clicked.connect(lambda _=False, i=i: self.reveal(i))
            r = 3 * i
            line = QHBoxLayout()
            for b in (check, hint, answer):
                line.addWidget(b)
            line.addStretch(1)
            box = QWidget()
            box.setLayout(line)
            line.setContentsMargins(0, 0, 0, 0)
            self.grid.addWidget(label, r, 0)
            self.grid.addWidget(edit, r, 1)
            self.grid.addWidget(box, r + 1, 0, 1, 2)
            self.grid.addWidget(result, r + 2, 0, 1, 2)
            self.rows.append(
                {"edit": edit, "result": result, "widgets": [label, edit, box, result]}
            )

    def _clear_rows(self) -> None:
        """The blanks' lines go at once: no Check button outlives its blank."""
        for row in self.rows:
            for w in row["widgets"]:
                self.grid.removeWidget(w)
                retire(w)
        self.rows = []

    def check(self, i: int) -> bool | None:
        """Grade blank `i` from its line edit; None (nothing changes) for text that is not
        a number. Changes no number of the document and is not an undo step."""
        if self.exercise is None:
            return None
        row = self.rows[i]
        try:
            verdict = self.exercise.submit(i, row["edit"].text())
        except ValueError as exc:
            self._result(i, f"{exc}", None)
            return None
        if i in self.exercise.revealed:
            self._result(i, verdict.message + " (answer shown: not counted)", verdict.correct)
        else:
            self._result(i, verdict.message, verdict.correct)
        self._show_state()
        return verdict.correct

    def hint(self, i: int) -> str:
        text = self.exercise.hint(i)
        self._result(i, f"Hint: {text}", None)
        return text

    def reveal(self, i: int) -> str:
        text = self.exercise.reveal(i)
        self._result(i, f"Answer: {text}", False)
        self._show_state()
        return text

    def _result(self, i: int, text: str, correct: bool | None) -> None:
        label = self.rows[i]["result"]
        # the working typeset (e^{S₁[0,j]}, Σ_j) as in the Formulas dialog; the plain text
        # is what a screen reader says
        label.setText(rich_text(text).replace("\n", "<br>"))
        label.setAccessibleName(text)
        if correct is None:
            label.setStyleSheet("")
        else:
            label.setStyleSheet(f"color: {RIGHT if correct else WRONG}; font-weight: bold;")
        self.rows[i]["edit"].setProperty("verdict", "" if correct is None else str(correct))
        edit_style = "" if correct is None else f"border: 2px solid {RIGHT if correct else WRONG};"
        self.rows[i]["edit"].setStyleSheet(edit_style)

    # ----------------------------------------------------------------- helpers ------
    def _tolerance(self) -> float | None:
        text = self.tolerance.text().strip()
        if not text:
            return None
        value = parse_value(text)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"the tolerance must be a finite number ≥ 0, got {text!r}")
        return value

    def _show_state(self) -> None:
        on = self.active
        self.stop.setEnabled(on)
        self.reset.setEnabled(on)
        self.start.setText("New exercise" if on else "Start")
        self.score.setText(f"Score: {self.exercise.score.text}" if on else "")

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {WRONG};" if error else "")

    def _status(self, text: str) -> None:
        """The status bar too; after the edit's undo step is pushed (pushing clears it)."""
        window = self.window()
        if hasattr(window, "show_message"):
            QTimer.singleShot(0, window, lambda: window.show_message(text))

    def _attention_view(self):
        return self.window().findChild(QWidget, "attentionView")

    def _show_strip(self, on: bool) -> None:
        """The query strip prints the followed query's row of every stage: it would give
        the blanks away, so it is hidden during an exercise."""
        strip = self.window().findChild(QWidget, "queryStrip")
        if strip is not None and not on:
            self._strip_was = strip.isVisible() or self._strip_was
            strip.setVisible(False)
        elif strip is not None and self._strip_was:
            self._strip_was = False
            strip.setVisible(True)

    def _set_action(self, on: bool) -> None:
        action = self.window().findChild(QAction, "action.exercise")
        if action is not None and action.isChecked() != on:
            action.setChecked(on)


def _panel(window) -> ExercisePanel | None:
    return window.findChild(ExercisePanel, "exercisePanel")


def _toggle(window) -> None:
    """View ▸ Exercise: checked opens the panel (Start hides the cells); unchecked leaves
    the mode and restores the normal view."""
    action = window.findChild(QAction, "action.exercise")
    panel = _panel(window)
    if panel is None or action is None:
        return
    dock = panel.parent()
    while dock is not None and not isinstance(dock, QDockWidget):
        dock = dock.parent()
    if action.isChecked():
        panel.enter()
        if dock is not None:
            dock.show()
            dock.raise_()
    else:
        panel.leave()
        if dock is not None:
            dock.hide()


register_view(ViewSpec("exercise", ExercisePanel, "exercisePanel", "Exercise"))
register_action(
    ActionSpec(
        menu="View",
        text="&Exercise",
        object_name="action.exercise",
        trigger=_toggle,
        tip="Hide some cells of a stage and let a student fill them in; the app grades them",
        checkable=True,
    )
)

__all__ = ["ExercisePanel"]
