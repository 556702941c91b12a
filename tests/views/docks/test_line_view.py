"""The token line dock: its lines are the weights, hovering a token keeps only its lines,
a head's chip hides and shows that head's pixels, a click follows a query, and the
window's export is the figure on screen (the figure's own tests:
tests/export/figures/test_lines.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.export.drawing import FigureOptions, render_drawing
from mha_gui.export.figures.lines import CHIP_H
from mha_gui.export.figures.registry import draw_figure
from mha_gui.views.window import registry
from tests.views.docks.drawing_views import (
    QT_LOG_IGNORE,
    pixels,
    settle,
    shown_view,
    widget_point,
)

pytestmark = QT_LOG_IGNORE


@pytest.fixture
def view(show_widget, qtbot):
    return shown_view(show_widget, qtbot, "lines", "causal-6x16", 900, 600)


def query_point(view, j) -> QPoint:
    d = view.drawing
    return widget_point(view, d.x_from - 30, d.row_y(j))


def chip_point(view, head) -> QPoint:
    _, x, y, w = next(c for c in view.drawing.chips if c[0] == head)
    return widget_point(view, x + w / 2, y + CHIP_H / 2)


def move_mouse(view, pos: QPoint) -> None:
    event = QMouseEvent(
        QMouseEvent.Type.MouseMove,
        QPointF(pos),
        QPointF(view.mapToGlobal(pos)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(view, event)


def test_lines_are_the_weights(view):
    assert view.objectName() == "lineView"
    trace = view.document.trace()
    model = view.drawing.model
    h, n, _ = trace.weights.shape
    drawn = {(ln.head, ln.query, ln.key) for ln in model.lines}
    expected = {
        (i, j, k)
        for i in range(h)
        for j in range(n)
        for k in range(n)
        if not trace.mask[j, k] and trace.weights[i, j, k] > 0
    }
    assert drawn == expected and trace.mask.any()  # causal: blocked pairs have no line
    for ln in model.lines:
        assert ln.weight == trace.weights[ln.head, ln.query, ln.key] == ln.strength
    strengths = [ln.strength for ln in model.lines]
    assert strengths == sorted(strengths)  # the strong lines are painted last, on top


def test_hovering_a_token_keeps_only_its_lines(view, qtbot):
    move_mouse(view, query_point(view, 3))
    settle(qtbot, view)
    assert view.focus == ("query", 3)
    lines = view.drawing.model.lines
    assert lines and {ln.query for ln in lines} == {3}
    assert len(lines) == 4 * 4  # 4 heads × keys 0..3 (causal)
    assert any("only the lines of query 3" in note for note in view.drawing.notes)
    d = view.drawing
    move_mouse(view, widget_point(view, d.x_to + 30, d.row_y(0)))
    settle(qtbot, view)
    assert view.focus == ("key", 0) and {ln.key for ln in view.drawing.model.lines} == {0}
    move_mouse(view, widget_point(view, view.drawing.width / 2, 5))
    settle(qtbot, view)
    assert view.focus is None and len(view.drawing.model.lines) == 4 * 21


def test_a_head_chip_hides_and_shows_its_lines(view, qtbot):
    before = pixels(view)
    qtbot.mouseClick(view, Qt.LeftButton, pos=chip_point(view, 2))
    settle(qtbot, view)
    assert view.hidden == {2}
    assert {ln.head for ln in view.drawing.model.lines} == {0, 1, 3}
    hidden = pixels(view)
    assert not np.array_equal(before, hidden)
    qtbot.mouseClick(view, Qt.LeftButton, pos=chip_point(view, 2))
    settle(qtbot, view)
    assert view.hidden == set()
    assert np.array_equal(before, pixels(view))
    assert view.document.undo_stack.count() == 0  # view state, not an undo step


def test_clicking_a_query_follows_it(view, qtbot):
    qtbot.mouseClick(view, Qt.LeftButton, pos=query_point(view, 4))
    assert view.document.view.query == 4
    settle(qtbot, view)
    assert view.drawing.query == 4


def test_follows_edits_and_theme(view, qtbot):
    doc = view.document
    assert doc.set_value("X", (1, 0), 9.0)
    settle(qtbot, view)
    trace = doc.trace()
    for ln in view.drawing.model.lines:
        assert ln.weight == trace.weights[ln.head, ln.query, ln.key]
    light = pixels(view)
    view.set_theme("dark")
    qtbot.wait(10)
    assert not np.array_equal(light, pixels(view))


def test_the_window_export_is_the_view_on_screen(view, qtbot):
    qtbot.mouseClick(view, Qt.LeftButton, pos=chip_point(view, 1))
    settle(qtbot, view)
    doc = view.document
    options = FigureOptions(head=doc.view.head, query=doc.view.query, extra={"hidden": view.hidden})
    spec = registry.view_spec("lines")
    exported = draw_figure(spec.figure, SessionData(doc.snapshot()), options)
    # the window's Export figure writes the CLI's drawing, byte for byte: the view on
    # screen without its mouse hint ("hover a token…"), which a file cannot use
    on_file = view.export_drawing(vector=False)
    assert render_drawing(exported, 700) == render_drawing(on_file, 700)
    assert any("hover" in n for n in view.drawing.notes)
    assert [n for n in view.drawing.notes if "hover" not in n] == on_file.notes
