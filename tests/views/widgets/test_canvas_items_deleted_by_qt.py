"""A canvas's items are deleted by Qt after its view, never by Python's collector, even
once the mouse has been over them (pyqtgraph asks parentItem() of every item under the
mouse, and PySide then hands the top one, the canvas's central item, to Python). A random
user's zoom after hovering the query strip crashed the window so, or raised from a
half-collected title ('LabelItem' object has no attribute '_sizeHint')."""

from __future__ import annotations

import gc

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest

from mha_gui.views.widgets.canvas import held_canvases, new_canvas

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def watch_deletion(canvas, said: list[str]) -> None:
    """Note in `said` when the canvas and its central item are destroyed (no reference
    to either is kept: that would keep the central item alive and hide the fault)."""
    canvas.destroyed.connect(lambda *_: said.append("canvas"))
    canvas.ci.destroyed.connect(lambda *_: said.append("central item"))


def mouse_over_panels(view) -> None:
    """Hover, then click, the first cell of each of the view's panels."""
    for panel in list(view.panels.values()):
        box = panel.plot.getViewBox()
        point = view.canvas.mapFromScene(box.mapViewToScene(QPointF(0.5, 0.5)))
        QTest.mouseMove(view.canvas.viewport(), point)
        QTest.mouseClick(view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=point)


def settled(window) -> bool:
    doc = window.document
    return not (doc.busy or doc.computing) and window.query_strip.settled


@pytest.mark.parametrize("how", ["zoom", "dimension"])
def test_hovered_canvases_are_deleted_by_qt_when_rebuilt(qtbot, window, how):
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: settled(window) and window.attention_view.settled)
    strip, stage = window.query_strip, window.attention_view
    said = {"strip": [], "stage": []}
    watch_deletion(strip.canvas, said["strip"])
    watch_deletion(stage.canvas, said["stage"])
    mouse_over_panels(strip)
    mouse_over_panels(stage)
    if how == "zoom":
        window.findChild(QAction, "action.zoomIn").trigger()  # the strip is rebuilt
        views = ["strip"]
    else:
        spin = window.config_panel.spins["d_k"]
        spin.lineEdit().selectAll()
        QTest.keyClicks(spin.lineEdit(), str(spin.value() + 1))
        QTest.keyClick(spin, Qt.Key.Key_Return)  # both are rebuilt
        views = ["strip", "stage"]
    for name in views:
        qtbot.waitUntil(lambda name=name: len(said[name]) == 2)
        gc.collect()
        assert said[name] == ["canvas", "central item"], name  # the scene deleted it


def test_a_canvas_holds_its_central_item_until_its_scene_is_gone(qtbot):
    before = held_canvases()
    canvas = new_canvas()
    canvas.ci.addLabel("x")
    canvas.ci.parentItem()  # as pyqtgraph does under the mouse: Python owns it now
    said = []
    watch_deletion(canvas, said)
    canvas.deleteLater()
    del canvas
    gc.collect()
    assert said == []  # the collector deleted nothing
    qtbot.waitUntil(lambda: said == ["canvas", "central item"])
    assert held_canvases() == before
