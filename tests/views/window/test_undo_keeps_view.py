"""Undo/redo of a config, mask or randomize step changes the numbers, not where the
teacher is looking (seen live: Ctrl+Z on 'Causal mask off' jumped back to the input)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtGui import QAction

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def trigger(window, name):
    window.findChild(QAction, name).trigger()


def test_undo_redo_of_causal_keeps_stage_head_and_query(qtbot, window):
    doc = window.document
    doc.set_causal(True)  # done while looking at the input
    doc.set_stage(3)
    doc.set_head(1)
    doc.set_query(2)
    trigger(window, "action.undo")
    assert doc.config.causal is False
    assert (doc.view.stage, doc.view.head, doc.view.query) == (3, 1, 2)
    doc.set_stage(4)
    trigger(window, "action.redo")
    assert doc.config.causal is True
    assert doc.view.stage == 4


def test_undo_of_mask_block_keeps_stage(qtbot, window):
    doc = window.document
    doc.set_stage(2)
    doc.toggle_blocked(1, 2)
    doc.set_stage(3)
    trigger(window, "action.undo")
    assert doc.session.mask is None
    assert doc.view.stage == 3


def test_undo_of_more_heads_clamps_the_inspected_head(qtbot, window):
    doc = window.document
    doc.set_config(h=4, h_kv=4)
    doc.set_head(3)
    doc.set_stage(5)
    trigger(window, "action.undo")
    assert doc.config.h == 2
    assert (doc.view.stage, doc.view.head) == (5, 1)
