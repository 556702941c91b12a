"""FlowLayout.removeWidget takes the widget's item out and deletes it, the others stay
whole (PySide's own removeWidget marked the item deleted before Qt asked the layout for
it: an exception in heightForWidth, then a segmentation fault, as a random user undid and
redid a change of heads — toy, seed 1). Replaces a guard that dropped such items."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QWidget

from mha_gui.views.docks.contributions.contribution_view import ContributionView
from mha_gui.views.widgets.flow_layout import FlowLayout


def widgets_in(flow: FlowLayout) -> list[str]:
    return [flow.itemAt(i).widget().objectName() for i in range(flow.count())]


def test_remove_widget_deletes_its_item_and_keeps_the_others(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    labels = [QLabel(f"label {i}", host) for i in range(4)]
    for i, label in enumerate(labels):
        label.setObjectName(f"l{i}")
        flow.addWidget(label)
    host.show()
    qtbot.waitExposed(host)
    item = flow.itemAt(2)
    flow.removeWidget(labels[2])
    assert not shiboken6.isValid(item)  # deleted, as Qt's removeWidget does
    assert widgets_in(flow) == ["l0", "l1", "l3"]
    assert all(shiboken6.isValid(flow.itemAt(i)) for i in range(flow.count()))
    assert flow.heightForWidth(120) > 0
    host.resize(300, 100)
    flow.activate()
    assert labels[3].geometry().width() > 0


def type_heads(window, value: int) -> None:
    spin = window.config_panel.spins["h"]
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), str(value))
    QTest.keyClick(spin, Qt.Key.Key_Return)


def test_head_switches_follow_heads_typed_undone_and_redone(qtbot, window):
    window.show()
    dock = window.docks["contributions"]
    if dock.isHidden():
        dock.toggleViewAction().trigger()
    flow = window.findChild(ContributionView).flow
    undo = window.findChild(QAction, "action.undo")
    redo = window.findChild(QAction, "action.redo")
    for h in (4, 1, 3):
        type_heads(window, h)
        qtbot.waitUntil(lambda h=h: window.document.config.h == h)
    for action in (undo, undo, redo, undo, redo, redo):
        action.trigger()
        h = window.document.config.h
        assert widgets_in(flow) == [f"ablate.{i}" for i in range(h)]
        assert flow.heightForWidth(200) > 0
    assert window.document.config.h == 3
