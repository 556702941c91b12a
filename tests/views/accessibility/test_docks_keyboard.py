"""The docked figures from the keyboard: arrows walk a figure's items, the accessible
name says which, Space does what a click does (token lines, contributions, neuron view)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from mha_gui.views.accessibility.audit import accessible_name, unnamed
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from tests.views.accessibility.helpers import press, settle, shown

K = Qt.Key


def walk_to(window, qtbot, widget, prefix: str, limit: int = 80) -> str:
    """Arrow keys until the figure's current item's name starts with `prefix`."""
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)
    press(window, K.Key_Home)
    for _ in range(limit):
        name = accessible_name(widget)
        if name.split(": ", 1)[-1].startswith(prefix):
            return name
        press(window, K.Key_Right)
    raise AssertionError(f"no item {prefix!r}; last: {accessible_name(widget)!r}")


def test_token_lines_follow_a_query_from_the_keyboard(window, qtbot):
    shown(qtbot, window)
    window.docks["lines"].show()
    lines = window.views["lines"]
    qtbot.waitUntil(lines.isVisible)
    settle(qtbot, window)
    name = walk_to(window, qtbot, lines, "query 2")
    assert name.startswith("Token lines: ")
    press(window, K.Key_Space)
    qtbot.waitUntil(lambda: window.document.view.query == 2)
    assert unnamed(window) == []


def test_contributions_pick_a_token_and_a_head_from_the_keyboard(window, qtbot):
    shown(qtbot, window)
    window.docks["contributions"].show()
    canvas = window.views["contributions"].findChild(DrawingWidget, "contributionCanvas")
    qtbot.waitUntil(canvas.isVisible)
    walk_to(window, qtbot, canvas, "cell token 3, head 1")
    press(window, K.Key_Return)
    qtbot.waitUntil(lambda: (window.document.view.query, window.document.view.head) == (3, 1))


def test_the_neuron_view_takes_a_key_apart_from_the_keyboard(window, qtbot):
    shown(qtbot, window)
    window.docks["neuron"].show()
    neuron = window.views["neuron"]
    qtbot.waitUntil(neuron.isVisible)
    walk_to(window, qtbot, neuron, "key 1")
    press(window, K.Key_Space)
    qtbot.waitUntil(lambda: neuron.key == 1)
