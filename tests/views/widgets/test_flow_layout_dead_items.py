"""A FlowLayout whose widget item Qt deleted behind its back neither raises nor hands Qt
the dangling pointer (a random user's undo/redo crashed the window so: toy, seed 1)."""

from __future__ import annotations

import shiboken6
from PySide6.QtWidgets import QLabel, QWidget

from mha_gui.views.widgets.flow_layout import FlowLayout


def test_an_item_deleted_by_qt_leaves_the_layout(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    first, second = QLabel("first", host), QLabel("second", host)
    flow.addWidget(first)
    flow.addWidget(second)
    host.show()
    qtbot.waitUntil(host.isVisible)
    shiboken6.delete(flow.itemAt(0))  # as Qt does, without takeAt
    assert flow.count() == 1
    assert flow.itemAt(0).widget() is second
    assert flow.heightForWidth(200) > 0
    host.resize(300, 100)
    flow.activate()  # lays out without touching the deleted item
    assert second.geometry().width() > 0
