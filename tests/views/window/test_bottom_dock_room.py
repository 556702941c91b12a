"""A dock opened below the window takes its room from the grid (which scrolls), never
from the query strip's rows: every head's row of the strip stays in sight."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QScrollArea

from mha_gui.views.stage.query_strip import MIN_SHARE
from tests.views.docks.test_dock_sizes import open_alone

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _strip_scroll(window) -> QScrollArea:
    return window.query_strip.findChild(QScrollArea, "queryStripScroll")


@pytest.mark.parametrize("preset", ["causal-6x16", "gqa", "bert-base"])
def test_the_strip_keeps_its_rows_beside_a_bottom_dock(window, qtbot, preset):
    dock, _before, _view = open_alone(window, qtbot, "model", preset)
    strip = window.query_strip
    qtbot.waitUntil(lambda: dock.height() > 150 and strip.settled)
    # the strip has the height its rows need, and nothing of it scrolls out of sight
    qtbot.waitUntil(lambda: strip.height() >= strip.sizeHint().height())
    scroll = _strip_scroll(window)
    qtbot.waitUntil(lambda: scroll.verticalScrollBar().maximum() == 0)
    # every head's row of the strip's "every head" panel is drawn inside the strip
    box = strip.panels["heads"].plot.getViewBox()
    bottom = box.mapToScene(box.boundingRect().bottomLeft()).y()
    assert bottom <= scroll.viewport().height() + 1
    # the grid above keeps its minimum and scrolls if it needs more
    assert window.attention_view.height() >= window.attention_view.minimumHeight()


def test_a_short_window_keeps_its_grid(window, qtbot):
    """At 150 % on a 720 p screen (853 × 480 logical pixels) the strip may not take
    more than MIN_SHARE of the window's height, and the window fits the screen."""
    window.document.open_preset("bert-base")
    window.resize(853, 480)
    window.show()
    qtbot.waitExposed(window)
    strip = window.query_strip
    qtbot.waitUntil(lambda: strip.minimumSizeHint().height() <= MIN_SHARE * window.height() + 1)
    assert window.minimumSizeHint().height() <= 480
    qtbot.waitUntil(lambda: window.height() == 480)
    assert window.attention_view.height() >= window.attention_view.minimumHeight()
