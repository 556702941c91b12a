"""Small things a teacher trips on (issue 11): stage keys inside an editor, a stale
refusal in the status bar, the configuration panel at 175 %, faint check boxes in the
dark theme, evenly thinned token labels in the query strip."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionButton, QTableView

from mha_gui import theme
from mha_gui.app import create_main_window
from mha_gui.views.stage.heatmap_panel import tick_step

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _shown(qtbot, preset="toy", zoom=1.0, theme_name=None):
    w = create_main_window(preset)
    qtbot.addWidget(w)
    if theme_name:
        w.set_theme(theme_name, save=False)
    w.set_zoom(zoom, save=False)
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    QApplication.processEvents()
    return w


def test_stage_keys_work_with_the_focus_inside_a_matrix_editor(qtbot):
    w = _shown(qtbot)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=2000)
    w.docks["W_Q"].raise_()
    table = w.findChild(QTableView, "editor.W_Q")
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=2000)
    table.setCurrentIndex(table.model().index(0, 0))
    doc = w.document
    QTest.keyClick(table, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(table, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert doc.view.stage == 2
    QTest.keyClick(table, Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier)
    assert doc.view.stage == 1
    # the plain arrows still move the table's cursor, not the stage
    QTest.keyClick(table, Qt.Key.Key_Right)
    assert doc.view.stage == 1 and table.currentIndex().column() == 1
    # and the buttons say which keys
    assert "Ctrl+PgDown" in w.stage_bar.next_button.toolTip()
    assert "Ctrl+PgUp" in w.stage_bar.prev_button.toolTip()
    doc.undo_stack.setClean()


def test_a_refusal_is_cleared_by_the_next_successful_edit(window):
    model = window.findChild(QTableView, "editor.X").model()
    assert not model.setData(model.index(0, 0), "abc")
    assert "not a number" in window.statusBar().currentMessage()
    assert model.setData(model.index(0, 1), "0.25")
    assert window.statusBar().currentMessage() == ""
    window.document.undo_stack.setClean()


def test_the_configuration_panel_is_whole_at_175_percent(qtbot):
    w = _shown(qtbot, zoom=1.75)
    panel = w.config_panel
    viewport = panel.parentWidget()
    assert panel.width() <= viewport.width()
    label = panel.variant_label
    assert label.text().startswith("MHA: every head has its own K")
    assert label.geometry().right() <= viewport.width()
    assert label.height() >= label.heightForWidth(label.width())
    # every word of the sentence is within the label's width
    fm = label.fontMetrics()
    assert max(fm.horizontalAdvance(word) for word in label.text().split()) <= label.width()


def _indicator_border_contrast(box, background) -> float:
    """Contrast of the darkest-or-lightest pixel of the drawn indicator's border against
    the panel colour (the most visible edge pixel)."""
    option = QStyleOptionButton()
    option.initFrom(box)
    option.state |= QStyle.StateFlag.State_Off
    rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    image = box.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    edge = []
    for x in range(rect.left(), rect.right() + 1):
        for y in (rect.top(), rect.bottom()):
            edge.append(image.pixelColor(QPoint(x, y)))
    for y in range(rect.top(), rect.bottom() + 1):
        for x in (rect.left(), rect.right()):
            edge.append(image.pixelColor(QPoint(x, y)))
    return max(theme.contrast_ratio((c.red(), c.green(), c.blue()), background) for c in edge)


@pytest.mark.parametrize("name", ["dark", "light"])
def test_unchecked_boxes_are_outlined_clearly(qtbot, name):
    w = _shown(qtbot, theme_name=name)
    box = w.config_panel.bias
    assert not box.isChecked()
    panel = theme.palette(name).panel
    rgb = tuple(int(panel[i : i + 2], 16) for i in (1, 3, 5))
    assert _indicator_border_contrast(box, rgb) >= 3.0


def _drawn_ticks(axis) -> list[tuple[float, str]]:
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        texts = axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()
    return [(rect.center().x(), text) for rect, _flags, text in texts]


@pytest.mark.parametrize("preset", ["toy", "causal-6x16", "gqa", "bert-base"])
def test_query_strip_labels_are_thinned_in_even_round_steps_at_130_percent(qtbot, preset):
    w = _shown(qtbot, preset=preset, zoom=1.3)
    tokens = w.document.tokens
    for name, panel in w.query_strip.panels.items():
        axis = panel.plot.getAxis("bottom")
        drawn = _drawn_ticks(axis)
        assert drawn, name
        if name in ("s", "a", "heads"):
            index = {label: i for i, label in reversed(list(enumerate(tokens)))}
            positions = [index[text] for _x, text in drawn if text in index]
        else:  # q and z: dimension numbers
            positions = [int(text) for _x, text in drawn]
        assert len(positions) == len(drawn), name  # every tick chosen is drawn
        assert positions[0] == 0, name
        steps = set(np.diff(positions).tolist())
        assert len(steps) <= 1, (name, positions)  # evenly spaced
        step = steps.pop() if steps else 1
        assert step in (1, 2, 4, 5) or str(step).rstrip("0") in ("1", "2", "25", "5"), step
        xs = [x for x, _ in drawn]
        assert xs == sorted(xs)


def test_tick_steps_are_round_numbers():
    assert [tick_step(n, 16) for n in (4, 16, 17, 40, 128, 2048)] == [1, 1, 2, 4, 10, 200]
    assert tick_step(64, 3) == 25 and tick_step(128, 3) == 50
