"""Everything from the keyboard (WCAG 2.1.1), no keyboard trap (2.1.2): key events only,
never a mouse event; what is checked is what QAccessible and the widgets report."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QTableView, QToolTip

from mha_gui.engine.panels.stages import STAGES
from tests.views.accessibility.helpers import (
    ALT,
    CTRL,
    DESCRIPTION,
    NAME,
    SHIFT,
    VALUE,
    focused_cell,
    press,
    settle,
    shown,
)

K = Qt.Key


def focus(qtbot, widget):
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)


def test_the_toy_from_the_keyboard_alone(window, qtbot):
    """All seven stages, inspect head 1, follow "sat", read A₁[sat, down], edit W^Q."""
    shown(qtbot, window)
    doc, view = window.document, window.attention_view
    bar = window.stage_bar
    # every stage, with the heatmaps one Tab after the query selector at each
    for stage in range(len(STAGES)):
        qtbot.waitUntil(lambda s=stage: doc.view.stage == s)
        settle(qtbot, window)
        press(window, K.Key_Q, ALT)  # the "&Query token" label's mnemonic
        focus(qtbot, bar.query_selector)
        press(window, K.Key_Tab)
        focus(qtbot, view.canvas)
        assert focused_cell(view.canvas) is not None
        if stage < len(STAGES) - 1:
            press(window, K.Key_PageDown, CTRL)  # next stage
    for _ in STAGES:
        press(window, K.Key_PageUp, CTRL)
    qtbot.waitUntil(lambda: doc.view.stage == 0)

    press(window, K.Key_H, ALT)  # "Inspect &head"
    focus(qtbot, bar.head_selector)
    press(window, K.Key_Down)
    qtbot.waitUntil(lambda: doc.view.head == 1)
    press(window, K.Key_Q, ALT)
    focus(qtbot, bar.query_selector)
    sat = doc.tokens.index("sat")
    press(window, K.Key_Down, times=sat - doc.view.query)
    qtbot.waitUntil(lambda: doc.view.query == sat)

    press(window, K.Key_PageDown, CTRL, times=3)  # stage 4, the attention weights
    qtbot.waitUntil(lambda: doc.view.stage == 3)
    settle(qtbot, window)
    press(window, K.Key_Tab)
    focus(qtbot, view.canvas)
    # the cursor enters on the inspected head's panel, on the followed row
    assert focused_cell(view.canvas).text(NAME) == "A₁, query sat, key the"
    press(window, K.Key_End)  # the row's last column: "down"
    here = focused_cell(view.canvas)
    assert here.text(NAME) == "A₁, query sat, key down"
    down = doc.tokens.index("down")
    assert float(here.text(VALUE)) == round(float(doc.trace().weights[1][sat, down]), 2)
    assert here.state().focused
    press(window, K.Key_Return)  # the formula, as the tooltip gives it
    qtbot.waitUntil(QToolTip.isVisible)
    assert f"A_1[{sat},{down}]" in QToolTip.text()
    assert here.text(DESCRIPTION).startswith(f"{here.text(VALUE)}. A_1[{sat},{down}]")

    # F6 to the W^Q editor, an arrow to a cell, type a number
    for _ in range(12):
        if window.docks["W_Q"].isAncestorOf(QApplication.focusWidget()):
            break
        press(window, K.Key_F6)
    table = QApplication.focusWidget()
    assert isinstance(table, QTableView) and table.objectName() == "editor.W_Q"
    head = doc.view.head
    press(window, K.Key_Home, CTRL)
    press(window, K.Key_Right)  # W^Q[0, 1]
    before = float(doc.matrix("W_Q")[head][0, 1])
    new = -0.25 if before != -0.25 else 0.75
    press(window, K.Key_F2)  # edit the cell
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not table)
    press(window, K.Key_A, CTRL)  # its text selected, to be typed over
    for ch in str(new):
        press(window, Qt.Key(ord(ch)) if ch != "-" else K.Key_Minus)
    press(window, K.Key_Return)
    qtbot.waitUntil(lambda: float(doc.matrix("W_Q")[head][0, 1]) == new)
    focus(qtbot, table)
    assert float(table.model().index(0, 1).data()) == new


def test_tab_leaves_a_matrix_editor_and_the_heatmaps(window, qtbot):
    shown(qtbot, window)

    def after_tab(widget, modifiers=Qt.KeyboardModifier.NoModifier):
        widget.setFocus(Qt.FocusReason.TabFocusReason)
        focus(qtbot, widget)
        press(window, K.Key_Tab, modifiers)
        return QApplication.focusWidget()

    editor = window.editors["X"].tables()[0]
    assert after_tab(editor) is not editor
    assert after_tab(editor, SHIFT) is not editor
    canvas = window.attention_view.canvas
    assert after_tab(canvas) is not canvas
    assert after_tab(canvas, SHIFT) is window.stage_bar.query_selector


def test_the_cursor_keys(window, qtbot):
    shown(qtbot, window)
    doc = window.document
    doc.set_stage(2)  # scores: one panel per head, n × n
    settle(qtbot, window)
    canvas = window.attention_view.canvas
    canvas.setFocus(Qt.FocusReason.TabFocusReason)
    focus(qtbot, canvas)
    n, tok = doc.config.n, doc.tokens

    def at():
        return focused_cell(canvas).text(NAME)

    assert at() == f"S₀, query {tok[0]}, key {tok[0]}"
    press(window, K.Key_Right)
    press(window, K.Key_Down)
    assert at() == f"S₀, query {tok[1]}, key {tok[1]}"
    press(window, K.Key_PageDown)
    assert at() == f"S₀, query {tok[n - 1]}, key {tok[1]}"
    press(window, K.Key_PageUp)
    press(window, K.Key_End)
    assert at() == f"S₀, query {tok[0]}, key {tok[n - 1]}"
    press(window, K.Key_Right)  # the edge: the cursor stays
    assert at() == f"S₀, query {tok[0]}, key {tok[n - 1]}"
    press(window, K.Key_Right, CTRL)  # the next panel
    assert at() == f"S₁, query {tok[0]}, key {tok[n - 1]}"
    press(window, K.Key_Home, CTRL)
    assert at() == f"S₁, query {tok[0]}, key {tok[0]}"
    press(window, K.Key_Down, times=2)
    press(window, K.Key_Space)  # a click: inspect head 1, follow this row
    qtbot.waitUntil(lambda: (doc.view.head, doc.view.query) == (1, 2))
    # ← and → stayed the cursor's: the stage did not change
    assert doc.view.stage == 2


def test_ctrl_space_blocks_a_pair_and_the_cell_says_so(window, qtbot):
    shown(qtbot, window)
    doc = window.document
    doc.set_stage(3)
    settle(qtbot, window)
    canvas = window.attention_view.canvas
    canvas.setFocus(Qt.FocusReason.TabFocusReason)
    focus(qtbot, canvas)
    press(window, K.Key_Right)
    press(window, K.Key_Space, CTRL)
    qtbot.waitUntil(lambda: doc.mask is not None and bool(doc.mask[0, 1]))
    settle(qtbot, window)
    assert focused_cell(canvas).text(VALUE) == "blocked"


def test_f6_cycles_the_panes_and_names_them(window, qtbot):
    shown(qtbot, window)
    seen = []
    for _ in range(12):
        press(window, K.Key_F6)
        seen.append(window.statusBar().currentMessage())
    assert "Pane: X editor" in seen
    assert "Pane: W^Q editor" in seen
    assert "Pane: Configuration" in seen
    assert "Pane: Stage bar" in seen
    assert "Pane: Heatmaps" in seen
    assert "Pane: Query strip" in seen
    press(window, K.Key_F6)
    first = window.statusBar().currentMessage()
    press(window, K.Key_F6)
    press(window, K.Key_F6, SHIFT)
    assert window.statusBar().currentMessage() == first
