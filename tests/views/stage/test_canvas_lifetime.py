"""The one rule of a stage canvas's lifetime (stage_scene.py): a canvas is never cleared
and refilled, a scene ends only by SceneStack.close, and Qt deletes the canvas with all
its items — from the application's own event loop, never from inside a context menu
opened on that canvas, and never by leaving items to Python's garbage collector."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pyqtgraph as pg
import pytest
import shiboken6
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from mha_gui.document import Document
from mha_gui.views.stage.attention_view import AttentionView

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints",
    "This plugin does not support raise",
    "This plugin does not support grabbing",
)


def deleted_later():
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()


def test_a_rebuild_makes_a_new_canvas_and_deletes_the_old_one_whole(qtbot, show_widget):
    view = show_widget(AttentionView(Document()), 900, 560)
    doc = view.document
    for stage in (1, 3, 6):
        doc.set_stage(stage)
    old_canvas, old_vb = view.canvas, view.panels[("Y", -1)].plot.getViewBox()
    kept = [s.canvas for s in view._scenes.values()]
    view.set_theme("dark")  # every panel anew: every stage's canvas goes
    assert view.canvas is not old_canvas and view._scenes == {}
    qtbot.waitUntil(lambda: not shiboken6.isValid(old_canvas))
    assert not shiboken6.isValid(old_vb)  # deleted with its canvas, in C++
    assert not any(shiboken6.isValid(c) for c in kept)


def test_no_item_is_left_to_the_garbage_collector(qtbot, show_widget):
    """Items only ever leave a scene with their canvas: after many rebuilds and stage
    switches no view box is alive outside a scene (Python would delete it, at any
    allocation, in any thread)."""
    view = show_widget(AttentionView(Document()), 900, 560)
    doc = view.document
    for k in range(12):
        doc.set_stage(k % 7)
        if k % 3 == 0:
            view.set_theme("dark" if k % 2 else "light")
        if k % 4 == 0:
            view.resize(600 + 100 * (k % 5), 560)
        qtbot.waitUntil(lambda: view.settled)
    deleted_later()
    gc.collect()
    stray = [
        o
        for o in gc.get_objects()
        if isinstance(o, pg.ViewBox) and shiboken6.isValid(o) and o.scene() is None
    ]
    assert stray == []


def right_click_then_rebuild() -> dict:
    """In a child process (a regression is a segmentation fault): right-click a weights
    panel and, while its menu waits, rebuild every panel; what was seen meanwhile."""
    from mha_gui.app import create_main_window

    app = QApplication.instance() or QApplication([])
    window = create_main_window("toy")
    window.resize(1280, 720)
    window.show()
    view = window.attention_view
    window.document.set_stage(3)
    while not view.settled:
        app.processEvents()
    panel = view.panels[("A", 0)]
    point = view.canvas.mapFromScene(panel.plot.getViewBox().mapViewToScene(QPointF(0.5, 0.5)))
    clicked = view.canvas
    seen = {}

    def in_the_menu():
        menu = QApplication.activePopupWidget()
        seen["menu"] = menu is not None
        window.set_theme("dark", save=False)  # rebuilds now, inside the menu's loop
        deleted_later()
        seen["alive"] = shiboken6.isValid(clicked)
        seen["new"] = view.canvas is not clicked
        QTest.keyClick(menu, Qt.Key.Key_Escape)

    QTimer.singleShot(0, in_the_menu)
    QTest.mouseClick(clicked.viewport(), Qt.MouseButton.RightButton, pos=point)
    seen["back"] = True
    while shiboken6.isValid(clicked):  # deleted once the menu has gone
        app.processEvents()
        deleted_later()
    window.document.undo_stack.setClean()
    window.close()
    return seen


def test_a_rebuild_while_a_panels_menu_is_open_keeps_its_canvas_until_it_closes(tmp_path):
    """A rebuild during a right-click's menu (a recompute ends, a setting changes) must
    not delete the canvas whose mouse handler is waiting for that menu."""
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root))
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # the child's settings stay in the test's folder
    code = "import json, tests.views.stage.test_canvas_lifetime as t; "
    code += "print(json.dumps(t.right_click_then_rebuild()))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"menu": True, "alive": True, "new": True, "back": True}
