"""The status bar says when the undo history dropped its oldest steps (it keeps a byte
budget: document/commands.py), and stops saying it when a new history starts."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def type_dimension(window, key: str, value: int) -> None:
    spin = window.config_panel.spins[key]
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), str(value))
    QTest.keyClick(spin, Qt.Key.Key_Return)


def test_a_trimmed_history_is_said_in_the_status_bar(qtbot, window):
    window.show()
    stack, label = (
        window.document.undo_stack,
        window.findChild(type(window.summary_label), "undoTrimmed"),
    )
    assert label is not None and label.isHidden()
    type_dimension(window, "n", 5)
    one_step = stack.history_bytes()  # two whole sessions of the toy layer
    stack.budget = 2 * one_step + one_step // 2
    type_dimension(window, "n", 6)
    qtbot.waitUntil(lambda: window.document.config.n == 6)
    assert label.isHidden()  # two steps fit
    type_dimension(window, "n", 7)
    qtbot.waitUntil(lambda: label.isVisible())
    assert label.text() == "undo history trimmed"
    assert "MB" in label.toolTip() and "1 just now" in label.toolTip()
    assert stack.count() == 2
    undo = window.findChild(QAction, "action.undo")
    undo.trigger()
    undo.trigger()
    assert window.document.config.n == 5 and not undo.isEnabled()
    window.document.open_preset("toy")  # a new history
    qtbot.waitUntil(lambda: label.isHidden())
