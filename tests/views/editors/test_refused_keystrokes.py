"""Typing letters into a cell: the keystrokes the validator refuses are explained in the
status bar (seen live: typing `abc` did nothing and said nothing)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QTableView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_typing_letters_in_a_cell_says_why_nothing_appears(qtbot, window):
    window.show()
    qtbot.waitExposed(window)
    table = window.findChild(QTableView, "editor.X")
    before = window.document.matrix("X").copy()
    index = table.model().index(1, 1)
    table.setCurrentIndex(index)
    table.edit(index)
    editor = table.viewport().findChild(QLineEdit)
    assert editor is not None
    QTest.keyClicks(editor, "abc")
    message = window.statusBar().currentMessage()
    assert "number" in message, message
    assert "X[1, 1]" in message or "X" in message
    table.closePersistentEditor(index)
    assert (window.document.matrix("X") == before).all()
