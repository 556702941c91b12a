"""Keyboard and accessibility helpers of these tests: keys go to the focused widget
(as a keyboard sends them), answers come from what QAccessible reports."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

NAME, VALUE, DESCRIPTION = (
    QAccessible.Text.Name,
    QAccessible.Text.Value,
    QAccessible.Text.Description,
)
CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def press(window, key, modifiers=Qt.KeyboardModifier.NoModifier, times: int = 1) -> None:
    for _ in range(times):
        QTest.keyClick(QApplication.focusWidget() or window, key, modifiers)


def shown(qtbot, window):
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    settle(qtbot, window)
    return window


def settle(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.attention_view.settled and not window.document.busy)


def tables(canvas) -> list:
    iface = QAccessible.queryAccessibleInterface(canvas)
    return [iface.child(i) for i in range(iface.childCount())]


def table(canvas, name: str):
    for t in tables(canvas):
        if t.text(NAME) == name:
            return t
    raise AssertionError(f"no table {name!r} in {[t.text(NAME) for t in tables(canvas)]}")


def cell(table_iface, row: int, col: int, cols: int):
    return table_iface.child(row * cols + col)


def focused_cell(canvas):
    return QAccessible.queryAccessibleInterface(canvas).focusChild()
