"""Canvases that go (a rebuild, a new session, kept stages beyond SCENE_CELLS) are
deleted one per event-loop turn: deleted together, the kept stages of an n = 2048 layer
froze the window for ~200 ms."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QScrollArea

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_a_rebuild_deletes_the_stages_canvases_on_turns_of_their_own(window, qtbot):
    window.document.open_preset("causal-6x16")
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    view = window.attention_view
    for stage in (1, 3, 4, 6):
        window.document.set_stage(stage)
        qtbot.waitUntil(lambda: view.settled)
    # each stage's page: its canvas's scroll area beside its colour bar
    holders = [s.page for s in view.scenes.every()]
    assert len(holders) == 4 and all(h.findChild(QScrollArea) for h in holders)
    turns: list[int] = []
    turn = [0]
    for holder in holders:
        holder.destroyed.connect(lambda *_: turns.append(turn[0]))
    window.set_theme("dark", save=False)  # every panel anew: every canvas goes
    assert all(h.isHidden() for h in holders)  # gone from sight at once
    while len(turns) < len(holders) and turn[0] < 200:
        turn[0] += 1
        QApplication.processEvents()  # one turn of the loop, as app.exec makes them
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert len(turns) == 4
    assert len(set(turns)) == 4  # never two canvases in one turn
