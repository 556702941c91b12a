"""The whole window driven as a user would: type in an editor, watch the heads change.

Typing goes through the real table, its delegate and a QLineEdit; what is checked is
what the user sees — the pixels of the attention view — before and after.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QDockWidget, QLineEdit, QTableView

from mha_gui.views.stage.attention_view import AttentionView


def settle(window, qtbot):
    """The coalescing zero-timers, the recompute and what the view builds, then the
    layout passes they post (a few turns of the event loop: no timer is waited for)."""
    view = window.findChild(AttentionView, "attentionView")
    qtbot.waitUntil(lambda: not window.document.busy and view.settled)
    for _ in range(4):
        QApplication.processEvents()


def heads_image(window):
    view = window.findChild(AttentionView, "attentionView")
    return view.grab().toImage()


def type_into(window, qtbot, name, row, col, text) -> str:
    """Type `text` into a cell as a user does; returns what the cell editor showed."""
    window.findChild(QDockWidget, f"dock.{name}").raise_()
    table = window.findChild(QTableView, f"editor.{name}")
    index = table.model().index(row, col)
    table.setCurrentIndex(index)
    table.edit(index)
    line = table.viewport().findChild(QLineEdit)
    assert line is not None, "the cell editor did not open"
    line.selectAll()
    qtbot.keyClicks(line, text)
    shown = line.text()
    qtbot.keyClick(line, Qt.Key.Key_Return)
    settle(window, qtbot)
    return shown


@pytest.fixture
def shown(window, qtbot):
    window.resize(1280, 720)
    window.document.set_stage(3)  # weights: every head visible
    window.show()
    qtbot.waitExposed(window)
    settle(window, qtbot)
    return window


def test_typing_a_weight_changes_the_heads_and_undo_restores_the_exact_pixels(shown, qtbot):
    before = heads_image(shown)
    type_into(shown, qtbot, "W_Q", 0, 0, "3")  # head 0, W_0^Q[0, 0]: 1 → 3
    assert shown.document.matrix("W_Q")[0, 0, 0] == 3
    after = heads_image(shown)
    assert after != before
    shown.findChild(QAction, "action.undo").trigger()
    settle(shown, qtbot)
    assert heads_image(shown) == before
    shown.findChild(QAction, "action.redo").trigger()
    settle(shown, qtbot)
    assert heads_image(shown) == after


@pytest.mark.parametrize("text", ["abc", "nan", "inf"])
def test_letters_never_reach_a_cell_and_change_no_pixel(shown, qtbot, text):
    before = heads_image(shown)
    typed = type_into(shown, qtbot, "X", 1, 1, text)
    assert not any(ch.isalpha() for ch in typed)  # the C-locale validator drops them
    assert heads_image(shown) == before
    assert shown.document.undo_stack.count() == 0


def test_out_of_range_value_is_refused_with_a_reason_and_changes_no_pixel(shown, qtbot):
    before = heads_image(shown)
    type_into(shown, qtbot, "X", 1, 1, "2e6")
    assert heads_image(shown) == before
    assert shown.document.undo_stack.count() == 0
    assert "beyond" in shown.statusBar().currentMessage()
