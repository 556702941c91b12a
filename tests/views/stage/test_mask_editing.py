"""Mask editing in the window: Ctrl+click (or the panel menu) blocks a (query, key) pair,
Edit ▸ Clear mask opens them all, the config panel counts them; each is one undo step."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor

from mha_gui import theme
from mha_gui.views.window import export_actions

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def settle(qtbot):
    """Let deferred rebuilds, the coalesced recompute and layout passes run."""
    for _ in range(3):
        qtbot.wait(5)


@pytest.fixture
def shown(window, qtbot):
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    window.document.set_stage(2)  # scores
    settle(qtbot)
    return window


def viewport_pos(view, panel, row, col, fx=0.5, fy=0.5) -> QPoint:
    """Viewport coordinates of a point of cell (row, col) of a panel."""
    vb = panel.plot.getViewBox()
    return view.canvas.mapFromScene(vb.mapViewToScene(QPointF(col + fx, row + fy)))


def cell_pixels(view, panel, row, col) -> list:
    """Every pixel inside one cell (shrunk a little to stay off its borders), in order."""
    settle_image = view.canvas.grab().toImage()
    a = viewport_pos(view, panel, row, col, 0.1, 0.1)
    b = viewport_pos(view, panel, row, col, 0.9, 0.9)
    return [
        settle_image.pixel(x, y)
        for y in range(min(a.y(), b.y()), max(a.y(), b.y()))
        for x in range(min(a.x(), b.x()), max(a.x(), b.x()))
    ]


def ctrl_click(qtbot, view, panel, row, col, button=Qt.MouseButton.LeftButton):
    qtbot.mouseClick(
        view.canvas.viewport(),
        button,
        Qt.KeyboardModifier.ControlModifier,
        viewport_pos(view, panel, row, col),
    )


def test_ctrl_click_blocks_a_pair_and_undo_restores_pixels(qtbot, shown):
    doc, view = shown.document, shown.attention_view
    panel = view.panels[("S", 1)]
    # toy: query "cat" (1) → key "sat" (2) is open, its score is not zero
    assert not doc.trace().mask[1, 2]
    before_cell = cell_pixels(view, panel, 1, 2)
    before = view.canvas.grab().toImage()
    blocked_rgb = QColor(theme.LIGHT.blocked).rgb()
    assert blocked_rgb not in before_cell
    with qtbot.waitSignal(doc.traceChanged):
        ctrl_click(qtbot, view, panel, 1, 2)
    settle(qtbot)
    t = doc.trace()
    assert t.mask[1, 2] and doc.session.mask is not None and doc.session.mask.sum() == 1
    assert np.isneginf(t.scores[:, 1, 2]).all()  # every head shares the mask
    np.testing.assert_allclose(t.weights.sum(axis=-1), 1.0)
    assert (t.weights[:, 1, 2] == 0).all()
    after_cell = cell_pixels(view, panel, 1, 2)
    assert after_cell != before_cell and blocked_rgb in after_cell
    assert QColor(theme.LIGHT.hatch).rgb() in after_cell
    # the same pair is blocked in another head's panel too
    assert blocked_rgb in cell_pixels(view, view.panels[("S", 0)], 1, 2)
    # a Ctrl+click is not a selection
    assert (doc.view.head, doc.view.query) == (0, 0)
    assert doc.undo_stack.undoText() == "Block cat → sat"
    assert "Blocked" in shown.statusBar().currentMessage()
    with qtbot.waitSignal(doc.traceChanged):
        doc.undo_stack.undo()
    settle(qtbot)
    assert doc.session.mask is None
    assert view.canvas.grab().toImage() == before
    # Ctrl+click again on a blocked pair opens it
    with qtbot.waitSignal(doc.traceChanged):
        ctrl_click(qtbot, view, panel, 1, 2)
    with qtbot.waitSignal(doc.traceChanged):
        ctrl_click(qtbot, view, panel, 1, 2)
    settle(qtbot)
    assert doc.session.mask is None
    assert doc.undo_stack.undoText() == "Unblock cat → sat"
    assert view.canvas.grab().toImage() == before


def test_plain_click_still_selects_head_and_query(qtbot, shown):
    doc, view = shown.document, shown.attention_view
    panel = view.panels[("S", 1)]
    qtbot.mouseClick(
        view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=viewport_pos(view, panel, 3, 0)
    )
    assert (doc.view.head, doc.view.query) == (1, 3)
    assert doc.session.mask is None and doc.undo_stack.count() == 0


def test_ctrl_click_at_weights_stage(qtbot, shown):
    doc, view = shown.document, shown.attention_view
    doc.set_stage(3)
    settle(qtbot)
    panel = view.panels[("A", 0)]
    with qtbot.waitSignal(doc.traceChanged):
        ctrl_click(qtbot, view, panel, 2, 0)
    t = doc.trace()
    assert t.mask[2, 0] and (t.weights[:, 2, 0] == 0).all()
    np.testing.assert_allclose(t.weights[:, 2].sum(axis=-1), 1.0)
    settle(qtbot)
    assert QColor(theme.LIGHT.blocked).rgb() in cell_pixels(view, panel, 2, 0)


def test_causal_pair_cannot_be_opened(qtbot, shown):
    doc, view = shown.document, shown.attention_view
    doc.set_causal(True)
    settle(qtbot)
    panel = view.panels[("S", 0)]
    depth = doc.undo_stack.count()
    before = view.canvas.grab().toImage()
    ctrl_click(qtbot, view, panel, 0, 3)
    settle(qtbot)
    assert doc.undo_stack.count() == depth and doc.session.mask is None
    assert "blocked by the causal mask — turn off 'causal mask' to open it" in (
        shown.statusBar().currentMessage()
    )
    assert view.canvas.grab().toImage() == before
    # the pairs the causal mask leaves open can still be blocked
    with qtbot.waitSignal(doc.traceChanged):
        ctrl_click(qtbot, view, panel, 3, 1)
    assert doc.trace().mask[3, 1] and doc.session.mask.sum() == 1


def test_tooltips_say_which_mask_blocks(qtbot, shown):
    doc, view = shown.document, shown.attention_view
    doc.set_causal(True)
    doc.toggle_blocked(2, 0)
    settle(qtbot)
    text = view.panels[("S", 0)].tooltip(2, 0)
    assert text.startswith("S_0[2,0] = −∞")
    assert 'blocked by the mask (Ctrl+click to open): key "the" for query "sat"' in text
    assert "Ctrl+click to open" in view.cell_tooltip("A", 1, 2, 0)
    causal = view.cell_tooltip("S", 0, 0, 3)
    assert "causal mask" in causal and "turn off 'causal mask' to open it" in causal
    assert "Ctrl+click" not in causal
    assert "blocked" not in view.cell_tooltip("S", 0, 2, 1)


def test_panel_menu_entry_toggles_the_pair(qtbot, shown, monkeypatch):
    doc, view = shown.document, shown.attention_view
    actions = shown.export_actions
    monkeypatch.setattr(export_actions, "exec_menu", lambda menu, pos: None)
    # the right-click records the cell it was on (the menu itself is not opened here)
    view.panels[("S", 1)].context_menu(QPoint(0, 0), (1, 3))
    assert view.menu_pair == (1, 3)
    menu = actions.panel_menu("scores", 1, view.menu_pair)
    entry = menu.findChild(type(menu.actions()[0]), "action.toggleBlocked")
    assert entry is not None and entry.text().startswith("Block this key for this query")
    with qtbot.waitSignal(doc.traceChanged):
        entry.trigger()
    assert doc.session.mask[1, 3] and doc.undo_stack.undoText() == "Block cat → down"
    menu.deleteLater()
    menu = actions.panel_menu("weights", 1, (1, 3))
    entry = [a for a in menu.actions() if a.objectName() == "action.toggleBlocked"][0]
    assert entry.text().startswith("Unblock this key for this query")
    menu.deleteLater()
    # only n×n panels offer it
    for stage, pair in (("projections", None), ("mixing", (1, 1)), ("scores", None)):
        menu = actions.panel_menu(stage, 0, pair)
        assert "action.toggleBlocked" not in [a.objectName() for a in menu.actions()]
        menu.deleteLater()
    doc.set_stage(4)
    settle(qtbot)
    view.panels[("Z", 0)].context_menu(QPoint(0, 0), (1, 1))
    assert view.menu_pair is None


def test_real_right_click_opens_menu_with_the_entry(qtbot, shown, monkeypatch):
    view = shown.attention_view
    seen = {}

    def fake_exec(menu, pos):
        seen["names"] = [a.objectName() for a in menu.actions()]
        seen["text"] = [a.text() for a in menu.actions() if a.objectName()][0]

    monkeypatch.setattr(export_actions, "exec_menu", fake_exec)
    qtbot.mouseClick(
        view.canvas.viewport(),
        Qt.MouseButton.RightButton,
        pos=viewport_pos(view, view.panels[("S", 0)], 2, 1),
    )
    assert "action.toggleBlocked" in seen["names"]
    assert "“sat” → “cat”" in seen["text"]


def test_clear_mask_is_one_undo_step_and_indicator_follows(qtbot, shown):
    doc, panel = shown.document, shown.config_panel
    clear = shown.clear_mask_action
    assert not clear.isEnabled()
    assert panel.mask_label.text() == "no extra mask" and not panel.mask_clear.isVisible()
    before = shown.attention_view.canvas.grab().toImage()
    for pair in ((1, 2), (3, 0)):
        with qtbot.waitSignal(doc.traceChanged):
            shown.attention_view.toggle_blocked(*pair)
    assert clear.isEnabled()
    assert panel.mask_label.text() == "extra mask: 2 blocked pairs"
    assert panel.mask_clear.isVisible()
    depth = doc.undo_stack.count()
    with qtbot.waitSignal(doc.traceChanged):
        clear.trigger()
    assert doc.session.mask is None and doc.undo_stack.count() == depth + 1
    assert doc.undo_stack.undoText() == "Clear mask"
    assert not clear.isEnabled() and panel.mask_label.text() == "no extra mask"
    settle(qtbot)
    assert shown.attention_view.canvas.grab().toImage() == before
    with qtbot.waitSignal(doc.traceChanged):
        doc.undo_stack.undo()
    assert doc.session.mask.sum() == 2 and clear.isEnabled()
    with qtbot.waitSignal(doc.traceChanged):
        doc.undo_stack.undo()
    assert panel.mask_label.text() == "extra mask: 1 blocked pair"
    # the config panel's clear link does the same
    with qtbot.waitSignal(doc.traceChanged):
        panel.mask_clear.linkActivated.emit("clear")
    assert doc.session.mask is None and doc.undo_stack.undoText() == "Clear mask"
    assert panel.mask_label.text() == "no extra mask"


def test_indicator_follows_token_count_and_open(qtbot, shown):
    doc, panel = shown.document, shown.config_panel
    doc.toggle_blocked(3, 1)
    doc.toggle_blocked(0, 2)
    settle(qtbot)
    assert panel.mask_label.text() == "extra mask: 2 blocked pairs"
    doc.set_config(n=3)  # the pair of token 3 goes with it
    settle(qtbot)
    assert panel.mask_label.text() == "extra mask: 1 blocked pair"
    doc.open_preset("toy")
    settle(qtbot)
    assert panel.mask_label.text() == "no extra mask"
    assert not shown.clear_mask_action.isEnabled()
