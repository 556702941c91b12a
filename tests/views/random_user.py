"""A seeded random user of the real main window: menus, configuration, editors, the
stage, the docks and their own controls, undo and redo, in any order (issue 21).

No sequence of user actions may crash the window, raise in a slot or leave a painter
active, and whatever was done the trace must be what a fresh `forward` of the
document's numbers gives. One run is one process (a segfault then fails the caller
instead of killing it), driven from inside the real event loop like a user: an action,
then wait until the window is idle (no recompute, no build, no timer of the view's
pending), then the next. Every uncaught exception reaches `sys.excepthook` and every Qt
message the message handler; both are counted as failures (messages: those of a
painter or worse). Modal dialogs would block forever offscreen: they answer at once
(Cancel, or now and then Discard, a file in the run's own folder, a number).

    python -m tests.views.random_user --preset toy --seed 3 --actions 300 [--log FILE]
                                      [--suite-limits]

prints one JSON line: {"preset", "seed", "actions", "seconds", "failures", "notes",
"kinds" (how often each kind of action was done), "seconds_by_kind" (each kind's
time, from its start until the window was idle after it), "peak_rss_mb"};
the exit status is 1 when something failed. tests/views/test_random_user.py runs it in
the suite, benchmarks/soak.py for tens of thousands of actions.
"""

from __future__ import annotations

import argparse
import faulthandler
import functools
import gc
import json
import logging
import os
import random
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Qt messages that fail a run: a painter left active or used wrongly, or worse.
PAINTER_WORDS = ("active painter", "QPainter::")
# Text a user types into a cell: numbers, junk, huge, negative, empty.
TYPED = (
    "0",
    "1",
    "-1",
    "0.5",
    "-0.25",
    "3.75",
    "1e3",
    "-2e-3",
    "+.5",
    " 7 ",
    "2,5",
    "",
    " ",
    "abc",
    "1..2",
    "--1",
    "1e",
    "0x10",
    "½",
    "π",
    "=1+2",
    "1/3",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "1e309",
    "9" * 400,
    "-" + "9" * 60,
    "1e-320",
    "5e-324",
    "-1e-310",
    "2.2e-308",
    "💥",
)
BIG_SETTLE_S = 600.0  # a stuck window (nothing settles this long) is a failure, not a hang
# "A dimension at its maximum" in the suite (--suite-limits): what stays interactive on a
# busy machine. At the true limits one n = 4096 edit of causal-6x16 takes 10–70 s (a
# 4096×4096 weights panel per head, token lines, statistics): the soak uses those.
SUITE_LIMITS = {"n": 96, "d_model": 96, "h": 12, "h_kv": 12, "d_k": 96, "d_v": 96}


def type_into(widget, text: str) -> None:
    """Key presses for `text` (QTest types ASCII only: other characters go as the text
    of a key event, as an input method sends them)."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    for char in text:
        if char.isascii():
            QTest.keyClicks(widget, char)
            continue
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            event = QKeyEvent(kind, 0, Qt.KeyboardModifier.NoModifier, char)
            QApplication.sendEvent(widget, event)


def typed_text(rng: random.Random) -> str:
    if rng.random() < 0.4:
        return f"{rng.uniform(-10, 10):.{rng.randint(0, 4)}f}"
    return rng.choice(TYPED)


class Recorder:
    """Every uncaught exception and every Qt message of the run, with the action it
    came during."""

    def __init__(self):
        self.failures: list[dict] = []  # the first of each kind
        self.counts: dict[str, int] = {}  # how often each kind came
        self.notes: dict[str, int] = {}
        self.action = "start-up"
        self.index = -1

    def install(self) -> None:
        from PySide6.QtCore import QtMsgType, qInstallMessageHandler

        self._fatal = {QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg}

        def hook(kind, value, tb):
            text = "".join(traceback.format_exception(kind, value, tb))
            self.fail("exception", text)

        def messages(mode, _context, message):
            if mode in self._fatal or any(word in message for word in PAINTER_WORDS):
                self.fail("qt", f"{mode.name}: {message}")
            else:
                key = f"{mode.name}: {message}"[:200]
                self.notes[key] = self.notes.get(key, 0) + 1

        def warned(message, category, filename, lineno, *_args):
            # noted, not failed: a NumPy overflow in pyqtgraph on a typed 1e-320, say
            key = f"{category.__name__}: {message} ({Path(filename).name}:{lineno})"[:200]
            self.notes[key] = self.notes.get(key, 0) + 1

        recorder = self

        class DrawingFailures(logging.Handler):
            """A view that could not draw reports it once on the "mha_gui" loggers (and
            shows its placeholder): a failure too, though nothing escaped."""

            def emit(self, record: logging.LogRecord) -> None:
                recorder.fail("drawing", self.format(record))

        self._drawing = DrawingFailures(logging.ERROR)
        self._drawing.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logging.getLogger("mha_gui").addHandler(self._drawing)
        sys.excepthook = hook
        qInstallMessageHandler(messages)
        warnings.showwarning = warned

    def uninstall(self) -> None:
        from PySide6.QtCore import qInstallMessageHandler

        qInstallMessageHandler(None)
        logging.getLogger("mha_gui").removeHandler(self._drawing)
        sys.excepthook = sys.__excepthook__

    def fail(self, kind: str, text: str) -> None:
        """Count a failure; the first of each kind (its last line) is kept and said at
        once on stderr (a crash that follows must not take it along)."""
        last = text.strip().splitlines()[-1] if text.strip() else kind
        key = f"{kind}: {last}"[:300]
        self.counts[key] = self.counts.get(key, 0) + 1
        if self.counts[key] > 1:
            return
        print(f"FAILURE {kind} at action {self.index} ({self.action}):\n{text}", file=sys.stderr)
        sys.stderr.flush()
        self.failures.append(
            {"kind": kind, "index": self.index, "action": self.action, "text": text, "key": key}
        )


class Answers:
    """Stand-ins for every modal dialog, seeded: each answers at once."""

    def __init__(self, rng: random.Random, folder: Path):
        self.rng, self.folder = rng, folder
        self.saved: list[str] = []

    def install(self) -> None:
        from PySide6 import QtWidgets
        from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QMessageBox

        rng = self.rng
        buttons = QMessageBox.StandardButton

        def prompt(*_args, **_kwargs):
            return rng.choice([buttons.Cancel] * 3 + [buttons.Discard, buttons.No, buttons.Save])

        def note(*_args, **_kwargs):
            return buttons.Ok

        for name in ("warning", "question"):
            setattr(QMessageBox, name, staticmethod(prompt))
        for name in ("critical", "information", "about", "aboutQt"):
            setattr(QMessageBox, name, staticmethod(note))

        def open_name(*_args, **_kwargs):
            if self.saved and rng.random() < 0.5:
                return rng.choice(self.saved), ""
            return "", ""

        def save_name(_parent=None, _title="", start="", filters="", *_args, **_kwargs):
            if rng.random() < 0.5:
                return "", ""
            suffix = Path(str(start)).suffix or ".json"
            path = self.folder / f"saved-{len(self.saved)}{suffix}"
            if suffix == ".json":
                self.saved.append(str(path))
            return str(path), ""

        QFileDialog.getOpenFileName = staticmethod(open_name)
        QFileDialog.getSaveFileName = staticmethod(save_name)
        QFileDialog.getExistingDirectory = staticmethod(lambda *a, **k: "")

        def get_text(_parent, _title, _label, _mode=None, text="", *_args, **_kwargs):
            if rng.random() < 0.5:
                return "", False
            return rng.choice([typed_text(rng), f"tok{rng.randint(0, 99)}", "", text]), True

        def get_int(_parent, _title, _label, value=0, low=0, high=99, *_args, **_kwargs):
            if rng.random() < 0.5:
                return 0, False
            return rng.randint(int(low), min(int(high), 10_000)), True

        QInputDialog.getText = staticmethod(get_text)
        QInputDialog.getInt = staticmethod(get_int)
        QInputDialog.getDouble = staticmethod(lambda *a, **k: (0.0, False))
        QInputDialog.getItem = staticmethod(lambda *a, **k: ("", False))

        def rejected(dialog, *_args, **_kwargs):
            dialog.reject()
            return int(QDialog.DialogCode.Rejected)

        for name in dir(QtWidgets):
            cls = getattr(QtWidgets, name)
            if isinstance(cls, type) and issubclass(cls, QDialog):
                cls.exec = rejected


def on_a_cell(act):
    """An action on one cell (`act(self, table, index, where)`) done on a random cell of
    a random shown table (RandomUser._some_cell), or the reason there is none."""

    @functools.wraps(act)
    def on_some_cell(self) -> str:
        cell, why = self._some_cell()
        return why if cell is None else act(self, *cell)

    return on_some_cell


class RandomUser:
    """Picks and performs one user action at a time on `window` (see ACTIONS)."""

    def __init__(
        self, window, rng: random.Random, recorder: Recorder, clipboard_folder, limits=None
    ):
        self.window, self.rng, self.recorder = window, rng, recorder
        self.limits = limits or {}  # the "maximum" of a dimension, where not the spin's own
        self.kinds: dict[str, int] = {}  # how often each kind of action was done
        self.document = window.document
        self.folder = clipboard_folder
        self.actions = [
            (12, self.menu_action),
            (10, self.config_spin),
            (2, self.config_limit),
            (5, self.config_switch),
            (3, self.config_text),
            (16, self.type_in_cell),
            (2, self.paste_in_cell),
            (2, self.nudge_cell),
            (3, self.head_tab),
            (2, self.token_buttons),
            (5, self.stage_slider),
            (4, self.selectors),
            (3, self.stage_buttons),
            (6, self.stage_click),
            (2, self.stage_hover),
            (8, self.undo_redo),
            (6, self.toggle_dock),
            (12, self.dock_control),
            (4, self.learning_dock),
            (3, self.mouse_in_dock),
            (3, self.tool_window),
            (2, self.resize_window),
            (2, self.grab),
        ]
        self.weights = [w for w, _ in self.actions]
        self.kind = "start-up"  # the kind of the action under way (its time is summed)
        self.faults: list = []  # deliberate faults first (the harness's own test)

    def inject(self, names: list[str]) -> None:
        """Begin with deliberate faults, to show the harness catches each kind: an
        exception in a slot, a painter warning, a segmentation fault."""
        from PySide6.QtCore import QTimer
        from PySide6.QtGui import QPainter

        def exception() -> str:
            QTimer.singleShot(0, lambda: 1 / 0)
            return "fault: a slot raises"

        def painter() -> str:
            QPainter().end()  # Qt: "QPainter::end: Painter not active, aborted"
            return "fault: a painter misused"

        def crash() -> str:
            faulthandler._sigsegv()
            return "fault: (never returns)"

        known = {"exception": exception, "painter": painter, "crash": crash}
        self.faults = [known[name] for name in names]

    # ------------------------------------------------------------ choosing ------
    def step(self) -> str:
        if self.faults:
            self.kind = "fault"
            return self.faults.pop(0)()
        dialog = self._modal_dialog()
        if dialog is not None:
            self.kind = "in_dialog"
            return self.in_dialog(dialog)
        (act,) = self.rng.choices([a for _, a in self.actions], self.weights)
        self.kind = act.__name__
        self.kinds[act.__name__] = self.kinds.get(act.__name__, 0) + 1
        return act()

    @staticmethod
    def _top_levels():
        """The application's top-level widgets in a fixed order (Qt keeps them in a set
        ordered by address: a seed must pick the same dialog in every run)."""
        from PySide6.QtWidgets import QApplication

        widgets = QApplication.topLevelWidgets()
        return sorted(widgets, key=lambda w: (w.objectName(), type(w).__name__, w.windowTitle()))

    def _modal_dialog(self):
        from PySide6.QtWidgets import QDialog

        for w in self._top_levels():
            if isinstance(w, QDialog) and w.isVisible() and w.isModal():
                return w
        return None

    # ------------------------------------------------------------ helpers -------
    def _pick(self, items):
        items = list(items)
        return self.rng.choice(items) if items else None

    def _menu_actions(self):
        from PySide6.QtWidgets import QMenu

        found = []

        def walk(menu):
            for action in menu.actions():
                if action.menu() is not None:
                    walk(action.menu())
                elif not action.isSeparator() and action.isEnabled() and action.isVisible():
                    found.append(action)

        for menu in self.window.menuBar().findChildren(QMenu):
            if menu.parent() is self.window.menuBar():
                walk(menu)
        # Quit ends the session: the run's last action (see `finish`)
        return [a for a in found if a.objectName() != "action.quit"]

    def _controls(self, root):
        """The enabled, visible controls a user can operate inside `root`."""
        from PySide6.QtWidgets import (
            QAbstractButton,
            QAbstractSlider,
            QAbstractSpinBox,
            QComboBox,
            QLineEdit,
            QTabBar,
            QWidget,
        )

        kinds = (QAbstractButton, QAbstractSlider, QAbstractSpinBox, QComboBox, QLineEdit, QTabBar)
        out = []
        for w in root.findChildren(QWidget):
            if isinstance(w, kinds) and w.isEnabled() and w.isVisible():
                if isinstance(w, QLineEdit) and isinstance(
                    w.parent(), (QAbstractSpinBox, QComboBox)
                ):
                    continue  # a spin box's or combo box's own line edit: operated as one
                if type(w).__name__ in ("QScrollBar",) or w.objectName().startswith("qt_"):
                    continue
                out.append(w)
        return out

    def operate(self, w) -> str:
        """What a user does with one control: click, pick, type, drag."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import (
            QAbstractButton,
            QAbstractSlider,
            QComboBox,
            QDoubleSpinBox,
            QLineEdit,
            QSpinBox,
            QTabBar,
        )

        rng = self.rng
        name = w.objectName() or type(w).__name__
        if isinstance(w, QAbstractButton):
            w.click()
            return f"click {name} ({w.text()!r})"
        if isinstance(w, QComboBox):
            if w.count() == 0:
                return f"{name}: empty"
            i = rng.randrange(w.count())
            w.setCurrentIndex(i)
            w.activated.emit(i)
            return f"{name} ← item {i}"
        if isinstance(w, QSpinBox | QDoubleSpinBox):
            top = self._maximum(w)
            value = rng.choice([w.minimum(), top, w.value() + 1, w.value() - 1])
            value = min(value, top)
            if rng.random() < 0.5:
                value = rng.uniform(w.minimum(), min(top, w.minimum() + 20))
            if isinstance(w, QSpinBox):
                value = int(value)
            w.setValue(value)
            w.editingFinished.emit()
            return f"{name} ← {value}"
        if isinstance(w, QAbstractSlider):
            value = rng.randint(w.minimum(), w.maximum())
            w.setValue(value)
            return f"{name} ← {value}"
        if isinstance(w, QLineEdit):
            text = typed_text(rng) if rng.random() < 0.7 else f"{rng.randint(0, 9)}"
            w.selectAll()
            type_into(w, text)
            QTest.keyClick(w, Qt.Key.Key_Return)
            w.editingFinished.emit()
            return f"{name} ← {text!r}"
        if isinstance(w, QTabBar):
            if w.count() == 0:
                return f"{name}: no tabs"
            i = rng.randrange(w.count())
            w.setCurrentIndex(i)
            return f"{name} tab {i}"
        return f"{name}: nothing to do"

    def _maximum(self, spin):
        """A spin box's maximum for this run: a configuration dimension's is the run's
        limit (SUITE_LIMITS in the suite), whichever way the user reaches the spin box."""
        for key, dimension in self.window.config_panel.spins.items():
            if dimension is spin:
                return min(spin.maximum(), self.limits.get(key, spin.maximum()))
        return spin.maximum()

    def _dock(self, name: str):
        dock = self.window.docks[name]
        if dock.isHidden():
            dock.toggleViewAction().trigger()
        dock.raise_()
        return dock

    # ------------------------------------------------------------ actions -------
    def menu_action(self) -> str:
        action = self._pick(self._menu_actions())
        if action is None:
            return "menu: nothing enabled"
        action.trigger()
        return f"menu {action.objectName() or action.text()!r}"

    def config_spin(self) -> str:
        self._dock("config")
        panel = self.window.config_panel
        key = self._pick(panel.spins)
        spin = panel.spins[key]
        rng = self.rng
        value = rng.choice([1, rng.randint(1, 8), rng.randint(1, 8), spin.value() + 1])
        value = max(spin.minimum(), min(self._maximum(spin), value))
        if rng.random() < 0.3:  # typed into the box, as a user does
            from PySide6.QtCore import Qt
            from PySide6.QtTest import QTest

            spin.lineEdit().selectAll()
            type_into(spin.lineEdit(), str(value))
            QTest.keyClick(spin, Qt.Key.Key_Return)
        else:
            spin.setValue(value)
        return f"config.{key} ← {value}"

    def config_limit(self):
        """A dimension at its maximum, seen, then undone: the user tries the limit (the
        layer may be refused as too large) and goes back, so a huge layer stays only as
        long as it takes to draw it once."""
        self._dock("config")
        panel = self.window.config_panel
        key = self._pick(panel.spins)
        spin = panel.spins[key]
        stack = self.document.undo_stack
        before = stack.index()
        top = self._maximum(spin)
        spin.setValue(top)
        yield f"config.{key} ← {top} (its maximum{'' if top == spin.maximum() else ' here'})"
        if stack.index() != before:
            stack.undo()
            yield "undo the maximum"

    def config_switch(self) -> str:
        panel = self.window.config_panel
        self._dock("config")
        box = self._pick(
            b for b in (panel.causal, panel.bias, panel.rope, panel.default_scale) if b.isEnabled()
        )
        if box is None:
            return "config: no switch enabled"
        box.click()
        return f"click {box.objectName()} → {box.isChecked()}"

    def config_text(self) -> str:
        panel = self.window.config_panel
        self._dock("config")
        edit = self._pick(e for e in (panel.rope_theta, panel.scale_edit) if e.isEnabled())
        if edit is None:
            return "config: no text field enabled"
        return self.operate(edit)

    def _some_cell(self):
        """A random cell of a random shown table of a random editor (its dock raised):
        (table, index, where), or None (and why) when there is none."""
        from PySide6.QtWidgets import QTableView

        name = self._pick(self.window.editors)
        self._dock(name)
        tables = [t for t in self.window.editors[name].findChildren(QTableView) if t.isVisible()]
        table = self._pick(tables)
        model = None if table is None else table.model()
        if model is None or model.rowCount() == 0 or model.columnCount() == 0:
            return None, f"{name}: no cell shown"
        index = model.index(
            self.rng.randrange(model.rowCount()), self.rng.randrange(model.columnCount())
        )
        return (table, index, f"{table.objectName()}[{index.row()},{index.column()}]"), ""

    @on_a_cell
    def type_in_cell(self, table, index, where: str) -> str:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import QApplication, QLineEdit

        text = typed_text(self.rng)
        if self.rng.random() < 0.5:
            table.model().setData(index, text)  # what a committed editor does
            return f"set {where} ← {text!r}"
        table.setCurrentIndex(index)
        table.edit(index)
        editor = QApplication.focusWidget()
        editors = [e for e in table.findChildren(QLineEdit) if e.isVisible()]
        if not isinstance(editor, QLineEdit) and editors:
            editor = editors[0]
        if not isinstance(editor, QLineEdit):
            return f"type {where}: no editor opened"
        editor.selectAll()
        type_into(editor, text)  # the validator refuses what is not a number
        QTest.keyClick(
            editor, self.rng.choice([Qt.Key.Key_Return, Qt.Key.Key_Tab, Qt.Key.Key_Escape])
        )
        return f"type {where} ← {text!r}"

    @on_a_cell
    def paste_in_cell(self, table, index, where: str) -> str:
        rows = [
            "\t".join(typed_text(self.rng) for _ in range(self.rng.randint(1, 3)))
            for _ in range(self.rng.randint(1, 3))
        ]
        text = "\n".join(rows)
        table.setCurrentIndex(index)
        table.paste_text(text)
        return f"paste {where} ← {text!r}"

    @on_a_cell
    def nudge_cell(self, table, index, where: str) -> str:
        notches = self.rng.choice([-3, -1, 1, 2, 10])
        if self.rng.random() < 0.5:
            table.nudge(index.row(), index.column(), notches)
            return f"nudge {where} {notches}"
        table.begin_scrub(index.row(), index.column(), 0.0)
        for y in (notches * 3.0, notches * 7.0):
            table.move_scrub(y, fine=self.rng.random() < 0.5)
        table.end_scrub()
        return f"scrub {where} by {notches}"

    def head_tab(self) -> str:
        name = self._pick(n for n in self.window.editors if n != "X")
        self._dock(name)
        tabs = self.window.editors[name].tabs
        if tabs is None or tabs.count() == 0 or not tabs.isVisible():
            return f"{name}: no head tabs"
        return self.operate(tabs)

    def token_buttons(self) -> str:
        editor = self.window.editors["X"]
        self._dock("X")
        button = self._pick(
            b for b in (editor.add_token_button, editor.remove_token_button) if b.isEnabled()
        )
        if button is None:
            return "X: no token button enabled"
        return self.operate(button)

    def stage_slider(self) -> str:
        return self.operate(self.window.stage_bar.stage_slider)

    def selectors(self) -> str:
        bar = self.window.stage_bar
        return self.operate(self._pick([bar.head_selector, bar.query_selector]))

    def stage_buttons(self) -> str:
        bar = self.window.stage_bar
        return self.operate(self._pick([bar.prev_button, bar.next_button, bar.play_button]))

    def _panel_point(self):
        """A random cell of a random panel of the stage on screen: (view, panel, point)."""
        from PySide6.QtCore import QPointF

        view = self.window.attention_view
        panels = list(view.panels.values())
        if not panels or view.building:
            return None
        panel = self.rng.choice(panels)
        vb = panel.plot.getViewBox()
        row, col = self.rng.randrange(panel.rows), self.rng.randrange(panel.cols)
        scene_point = vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))
        return view, panel, view.canvas.mapFromScene(scene_point), (row, col)

    def stage_click(self) -> str:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        picked = self._panel_point()
        if picked is None:
            return "stage: nothing to click"
        view, panel, point, cell = picked
        button, mods, how = self.rng.choice(
            [
                (Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, "click"),
                (Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, "ctrl+click"),
                (Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier, "right-click"),
            ]
        )
        QTest.mouseClick(view.canvas.viewport(), button, mods, point)
        return f"{how} {panel.kind}{panel.head}{list(cell)}"

    def stage_hover(self) -> str:
        from PySide6.QtTest import QTest

        picked = self._panel_point()
        if picked is None:
            return "stage: nothing to hover"
        view, panel, point, cell = picked
        QTest.mouseMove(view.canvas.viewport(), point)
        return f"hover {panel.kind}{panel.head}{list(cell)}"

    def undo_redo(self) -> str:
        stack = self.document.undo_stack
        times = self.rng.choice([1, 1, 1, 2, 5])
        undo = self.rng.random() < 0.6
        for _ in range(times):
            if undo:
                stack.undo()
            else:
                stack.redo()
        return f"{'undo' if undo else 'redo'} ×{times}"

    def toggle_dock(self) -> str:
        name = self._pick(self.window.docks)
        self.window.docks[name].toggleViewAction().trigger()
        return f"dock.{name} shown={self.window.docks[name].isVisible()}"

    def dock_control(self) -> str:
        shown = [n for n, d in self.window.docks.items() if d.isVisible()]
        if not shown or self.rng.random() < 0.3:
            name = self._pick(self.window.docks)
            self._dock(name)
        else:
            name = self._pick(shown)
        control = self._pick(self._controls(self.window.docks[name]))
        if control is None:
            return f"dock.{name}: no control"
        return f"dock.{name}: " + self.operate(control)

    def learning_dock(self) -> str:
        """The lessons, training and exercise docks' own controls (play a lesson, train,
        check an answer), raised first: the controls a class uses most."""
        name = self._pick(n for n in ("lesson", "train", "exercise") if n in self.window.docks)
        if name is None:
            return "no lesson or training dock"
        control = self._pick(self._controls(self._dock(name)))
        if control is None:
            return f"dock.{name}: no control"
        return f"dock.{name}: " + self.operate(control)

    def mouse_in_dock(self) -> str:
        """Click or hover somewhere in a shown dock's drawing (bars, maps, cells)."""
        from PySide6.QtCore import QPoint, Qt
        from PySide6.QtTest import QTest

        from mha_gui.views.widgets.drawing_widget import DrawingWidget

        drawings = [w for w in self.window.findChildren(DrawingWidget) if w.isVisible()]
        target = self._pick(drawings)
        if target is None or target.width() < 2 or target.height() < 2:
            return "no drawing shown"
        point = QPoint(self.rng.randrange(target.width()), self.rng.randrange(target.height()))
        if self.rng.random() < 0.5:
            QTest.mouseMove(target, point)
            return f"hover {target.objectName()} at {point.x()},{point.y()}"
        QTest.mouseClick(target, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
        return f"click {target.objectName()} at {point.x()},{point.y()}"

    def tool_window(self) -> str:
        """Work in a window of its own (an identity demonstration, the formulas): operate
        one of its controls, or close it."""
        from PySide6.QtWidgets import QDialog

        shown = [
            w
            for w in self._top_levels()
            if isinstance(w, QDialog) and w.isVisible() and not w.isModal()
        ]
        dialog = self._pick(shown)
        if dialog is None:
            return "no tool window open"
        name = dialog.objectName() or type(dialog).__name__
        controls = self._controls(dialog)
        if not controls or self.rng.random() < 0.2:
            dialog.close()
            return f"{name}: close"
        return f"{name}: " + self.operate(self.rng.choice(controls))

    def resize_window(self) -> str:
        w, h = self.rng.choice([(640, 480), (800, 600), (1024, 700), (1280, 720), (1600, 900)])
        self.window.resize(w, h)
        return f"resize {w}×{h}"

    def grab(self) -> str:
        self.window.grab()
        return "grab the window"

    def in_popup(self, menu) -> str:
        """A context menu waits for a choice (its own event loop runs): pick one of its
        enabled entries with the keyboard, or close it."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        entries = [
            a
            for a in menu.actions()
            if a.isEnabled() and a.isVisible() and not a.isSeparator() and a.menu() is None
        ]
        if not entries or self.rng.random() < 0.2:
            QTest.keyClick(menu, Qt.Key.Key_Escape)
            return "context menu: closed"
        action = self.rng.choice(entries)
        menu.setActiveAction(action)
        QTest.keyClick(menu, Qt.Key.Key_Return)
        return f"context menu: {action.objectName() or action.text()!r}"

    def in_dialog(self, dialog) -> str:
        """A (window-)modal dialog is up: operate one of its controls, or close it."""
        name = dialog.objectName() or type(dialog).__name__
        controls = self._controls(dialog)
        if not controls or self.rng.random() < 0.3:
            dialog.reject()
            return f"{name}: close"
        return f"{name}: " + self.operate(self.rng.choice(controls))


def trace_differences(document) -> list[str]:
    """Where the document's trace differs from a fresh forward of its numbers."""
    import numpy as np

    got, fresh = document.trace(), document.session.run()
    names = ("q", "k", "v", "scores", "weights", "heads", "concat", "output", "mask")
    out = []
    for name in names:
        a, b = getattr(got, name), getattr(fresh, name)
        if a.shape != b.shape:
            out.append(f"{name}: shape {a.shape} != {b.shape}")
        elif not np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True):
            worst = np.nanmax(np.abs(np.where(np.isfinite(a) & np.isfinite(b), a - b, 0)))
            out.append(f"{name}: differs (largest finite difference {worst:.3g})")
    return out


class Run:
    """One seeded run inside the event loop: act, wait until idle, act again."""

    def __init__(self, app, window, user: RandomUser, recorder: Recorder, actions: int, log):
        from PySide6.QtCore import QTimer

        self.app, self.window, self.user, self.recorder = app, window, user, recorder
        self.total, self.done, self.log = actions, 0, log
        self.quiet = 0
        self.acting = False  # an action is under way (a context menu may wait in it)
        self.follow_up = None  # the rest of a compound action
        self.menu_turns = None  # how long the user looks at an open context menu
        self.since = self.began = time.monotonic()
        # seconds per kind of action, each from its start until the window was idle after
        # it (where a run's time goes)
        self.seconds: dict[str, float] = {}
        self._timing: tuple[str, float] | None = None  # (kind, start) of the one under way
        self.timer = QTimer()
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.tick)

    def idle(self) -> bool:
        doc, view = self.window.document, self.window.attention_view
        strip = self.window.query_strip
        return not (doc.busy or doc.computing or not strip.settled) and view.settled

    def start(self) -> None:
        self.timer.start(0)

    def tick(self) -> None:
        try:
            self._tick()
        except Exception:  # the driver's own bug: say so and stop, rather than hang
            self.recorder.fail("driver", traceback.format_exc())
            self.app.quit()

    def _tick(self) -> None:
        if self.acting:
            self.nested()
            return
        # a few turns in a row with nothing pending: every coalesced timer has run
        self.quiet = self.quiet + 1 if self.idle() else 0
        if self.quiet < 3:
            if time.monotonic() - self.since > BIG_SETTLE_S:
                self.recorder.fail("stuck", f"not idle after {BIG_SETTLE_S:.0f} s")
                self.app.quit()
                return
            self.timer.start(0 if self.quiet else 2)
            return
        self._timed()
        if self.done >= self.total:
            self.finish()
            return
        self.quiet = 0
        self.recorder.index = self.done
        self.recorder.action = "(choosing)"
        self.acting = True
        started = time.monotonic()
        self.timer.start(0)  # runs in the loop of a context menu the action opens
        try:
            text = self._act()
        except Exception:
            self.follow_up = None
            text = "raised"
            self.recorder.fail("raised", traceback.format_exc())
        finally:
            self.acting = False
        self.recorder.action = text
        self._timing = (self.user.kind, started)
        if self.log is not None:
            at = time.monotonic() - self.began
            self.log.write(f"{self.done}: {text}  [{at:.2f} s, peak {peak_rss_mb():.0f} MB]\n")
            self.log.flush()
        self.done += 1
        self.since = time.monotonic()
        self.timer.start(0)

    def _timed(self) -> None:
        """The action under way has settled: add its seconds to its kind's."""
        if self._timing is not None:
            kind, started = self._timing
            self.seconds[kind] = self.seconds.get(kind, 0.0) + time.monotonic() - started
            self._timing = None

    def _act(self) -> str:
        """The next step of a compound action (a generator: each step is done once the
        window is idle after the last), or a new action."""
        if self.follow_up is not None:
            text = next(self.follow_up, None)
            if text is not None:
                return f"  … {text}"
            self.follow_up = None
        result = self.user.step()
        if isinstance(result, str):
            return result
        self.follow_up = result
        return next(result)

    def nested(self) -> None:
        """An action waits in a context menu's own event loop: the user answers it, at
        once or after some turns of that loop (timers, a recompute ending, meanwhile)."""
        from PySide6.QtWidgets import QApplication

        menu = QApplication.activePopupWidget()
        if menu is not None and menu.isVisible():
            if self.menu_turns is None:
                self.menu_turns = self.user.rng.choice([0, 0, 3, 30])
            if self.menu_turns > 0:
                self.menu_turns -= 1
                self.timer.start(20)
                return
            self.menu_turns = None
            text = self.user.in_popup(menu)
            if self.log is not None:
                self.log.write(f"{self.done}:   {text}\n")
                self.log.flush()
        self.timer.start(2)

    def finish(self) -> None:
        self.recorder.index, self.recorder.action = self.done, "final check"
        for difference in trace_differences(self.window.document):
            self.recorder.fail("trace", difference)
        self.recorder.action = "quit"
        self.window.document.undo_stack.setClean()
        self.window.close()
        if self.window.isVisible():
            self.recorder.fail("quit", "the window did not close on Quit")
        self.app.quit()


def peak_rss_mb() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: kB


def run(
    preset: str,
    seed: int,
    actions: int,
    log_path: str | None = None,
    inject=(),
    limits: dict | None = None,
) -> dict:
    from PySide6.QtCore import QEvent, QSettings
    from PySide6.QtWidgets import QApplication

    folder = Path(tempfile.mkdtemp(prefix="mha-random-user-"))
    os.environ["HF_HOME"] = str(folder / "hf")  # the model dialog finds no real cache
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder / "settings"))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))
    app = QApplication.instance() or QApplication(["random-user"])
    app.setStyle("Fusion")
    recorder = Recorder()
    recorder.install()
    rng = random.Random(seed)
    Answers(rng, folder).install()

    from mha_gui.app import create_main_window

    window = create_main_window(preset)
    window.resize(1280, 720)
    window.show()
    user = RandomUser(window, rng, recorder, folder, limits)
    user.inject(list(inject))
    log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
    start = time.monotonic()
    loop = Run(app, window, user, recorder, actions, log)
    loop.start()
    app.exec()
    seconds = time.monotonic() - start
    # the window is deleted here, while failures are still counted (as the app's own
    # window goes when run_app returns), then the hooks are put back before Python ends
    recorder.index, recorder.action = loop.done, "deleting the window"
    window.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    kinds = dict(user.kinds)
    del window, user, loop.window, loop.user
    gc.collect()
    app.processEvents()
    recorder.uninstall()
    if log is not None:
        log.close()
    return {
        "preset": preset,
        "seed": seed,
        "actions": loop.done,
        "seconds": round(seconds, 2),
        "failures": recorder.failures,
        "counts": recorder.counts,
        "notes": recorder.notes,
        "kinds": kinds,
        "seconds_by_kind": {k: round(v, 2) for k, v in sorted(loop.seconds.items())},
        "peak_rss_mb": peak_rss_mb(),
    }


def run_in_subprocess(
    preset: str,
    seed: int,
    actions: int,
    log_path: str,
    timeout: float = 3600.0,
    inject="",
    suite_limits: bool = False,
) -> dict:
    """One run in a child process (a crash then fails the run, not the caller): its
    result, or for a child that died a result whose failure says how, with the last
    actions it logged and what faulthandler wrote."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root))
    command = [sys.executable, "-m", "tests.views.random_user", "--preset", preset]
    command += ["--seed", str(seed), "--actions", str(actions), "--log", log_path]
    command += ["--inject", inject] if inject else []
    command += ["--suite-limits"] if suite_limits else []
    start = time.monotonic()
    # stderr goes straight to a file beside the action log: failures are said there as
    # they happen (a long soak can be read while it runs, or after it was stopped)
    err_path = Path(log_path + ".stderr")
    with open(err_path, "w", encoding="utf-8") as err_file:
        try:
            done = subprocess.run(
                command,
                cwd=root,
                env=env,
                stdout=subprocess.PIPE,
                stderr=err_file,
                text=True,
                timeout=timeout,
            )
            code, out = done.returncode, done.stdout
        except subprocess.TimeoutExpired as exc:
            code, out = "timeout", exc.stdout or ""
            out = out.decode() if isinstance(out, bytes) else out
    err = err_path.read_text(encoding="utf-8", errors="replace")
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if lines and code in (0, 1):
        return json.loads(lines[-1])
    if lines:  # the run ended, then the process crashed on its way out
        result = json.loads(lines[-1])
        text = f"the process ended with {code} after the run, on its way out:\n"
        result["failures"].append(
            {
                "kind": "crash",
                "index": result["actions"],
                "action": "exit",
                "text": text + err[-3000:],
            }
        )
        result.setdefault("counts", {})["crash"] = 1
        return result
    logged = (
        Path(log_path).read_text(encoding="utf-8").splitlines() if Path(log_path).exists() else []
    )
    text = (
        f"the window's process ended with {code} after {len(logged)} actions; the last:\n"
        + "\n".join(logged[-15:])
        + "\n--- its stderr (faulthandler) ---\n"
        + "\n".join(err.splitlines()[-60:])
    )
    return {
        "preset": preset,
        "seed": seed,
        "actions": len(logged),
        "seconds": round(time.monotonic() - start, 2),
        "failures": [{"kind": "crash", "index": len(logged), "action": "", "text": text}],
        "counts": {"crash": 1},
        "notes": {},
    }


def describe(result: dict) -> str:
    """Every failure of a run, the first of each kind in full."""
    out = [f"{result['preset']} seed {result['seed']}: {result['actions']} actions"]
    for failure in result["failures"]:
        count = result.get("counts", {}).get(failure.get("key", failure["kind"]), 1)
        out.append(
            f"--- {failure['kind']} ×{count}, first at action {failure['index']} "
            f"({failure['action']}):\n{failure['text']}"
        )
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="toy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--actions", type=int, default=300)
    parser.add_argument("--log", help="append each action to this file as it is done")
    parser.add_argument(
        "--inject", default="", help="faults to begin with: exception,painter,crash (a self-test)"
    )
    parser.add_argument(
        "--suite-limits",
        action="store_true",
        help="a dimension's 'maximum' is SUITE_LIMITS' (what stays interactive), not its own",
    )
    args = parser.parse_args(argv)
    faulthandler.enable(all_threads=True)
    if hasattr(faulthandler, "register"):  # `kill -USR1 PID`: where a stuck run is
        import signal

        faulthandler.register(signal.SIGUSR1, all_threads=True)
    faults = [name for name in args.inject.split(",") if name]
    limits = SUITE_LIMITS if args.suite_limits else None
    result = run(args.preset, args.seed, args.actions, args.log, faults, limits)
    print(json.dumps(result), flush=True)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
