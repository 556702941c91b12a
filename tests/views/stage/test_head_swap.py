"""One head big: inspecting another head re-targets the panels on screen (no new build)
and every panel then shows its head's numbers, title, frame and hidden cells — the same
as a stage built for that head from the start."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from mha_gui.engine.panels.stage_panels import KINDS
from tests.views.stage.test_stage_layouts import settle, shown

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def expect_consistent(w, inspected: int) -> None:
    """Every panel shows the numbers, title and frame of the head its key names."""
    view, doc = w.attention_view, w.document
    assert view.geometry.mode == "one-big" and view.geometry.big == inspected
    data = view.scene
    for (kind, head), panel in data.panels.items():
        assert panel.head == (None if head < 0 else head)
        source = KINDS[kind].source(doc.frozen_data(), None if head < 0 else head)
        np.testing.assert_array_equal(panel.matrix, source)
        framed = panel._frame is not None and panel._frame[0] is not None
        assert framed == (head == inspected), (kind, head)
    for head, title in data.titles.items():
        if head >= 0:
            assert f"head {head}" in title.text
            assert title.text.startswith("▶") == (head == inspected)


def opened(qtbot, stage: int):
    """The gqa preset (8 query heads, 2 K/V groups: one head big) at `stage`, settled."""
    w = shown(qtbot, "gqa")
    w.document.set_stage(stage)
    settle(qtbot, w)
    return w, w.attention_view, w.document


def then(qtbot, w, *actions) -> None:
    for action in actions:
        action()
        settle(qtbot, w)


@pytest.mark.parametrize("stage", [1, 3, 6])
def test_another_head_inspected_is_drawn_by_the_panels_there(qtbot, stage):
    w, view, doc = opened(qtbot, stage)
    builds = view.rebuild_count
    for head in (5, 2, 7, 0):
        doc.set_head(head)
        settle(qtbot, w)
        expect_consistent(w, head)
    assert view.rebuild_count == builds  # no stage was built again
    # the thumbnails stay in head order: their places hold heads 0, 1, … without the big one
    places = sorted((p.row, p.col, h) for h, p in view.geometry.places.items() if p.thumb)
    assert [h for *_rc, h in places] == [h for h in range(8) if h != 0]
    w.document.undo_stack.setClean()


def test_a_click_on_a_moved_thumbnail_inspects_the_head_it_shows(qtbot):
    w, view, doc = opened(qtbot, 3)
    then(qtbot, w, lambda: doc.set_head(5))
    # the thumbnail in head 5's old place now shows head 6: a click there inspects 6
    small = view.panels[("A", 6)]
    assert small.head == 6
    rect = small.cell_view_rect(1, 1)
    qtbot.mouseClick(view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    qtbot.waitUntil(lambda: doc.view.head == 6)
    settle(qtbot, w)
    expect_consistent(w, 6)
    w.document.undo_stack.setClean()


def test_a_kept_stage_shown_again_follows_the_inspected_head(qtbot):
    w, view, doc = opened(qtbot, 3)
    then(qtbot, w, lambda: doc.set_stage(4), lambda: doc.set_head(3))
    builds = view.rebuild_count
    doc.set_stage(3)  # kept since its first visit, built for head 0
    settle(qtbot, w)
    assert view.rebuild_count == builds
    expect_consistent(w, 3)
    w.document.undo_stack.setClean()


def test_hidden_cells_follow_their_head(qtbot):
    """An exercise's blanks are a head's cells: after the swap they are hidden where that
    head is drawn now, and nowhere else."""
    w, view, doc = opened(qtbot, 3)

    def hidden(kind, head):
        return {(0, 1): 0} if kind == "A" and head == 2 else {}

    view.blanks.set(hidden)
    doc.set_head(2)
    settle(qtbot, w)
    for (kind, head), panel in view.panels.items():
        want = {(0, 1)} if (kind, head) == ("A", 2) else set()
        assert set(panel.marks.hidden) == want, (kind, head)
    view.blanks.set(None)
    w.document.undo_stack.setClean()


def test_a_screen_reader_hears_the_heads_the_panels_now_show(qtbot):
    """Each panel is an accessible table named by its symbol: after the swap the
    table in the big place is A₅ and its cells read head 5's weights."""
    from tests.views.accessibility.helpers import NAME, VALUE, cell, tables

    w, view, doc = opened(qtbot, 3)
    then(qtbot, w, lambda: doc.set_head(5))
    names = [t.text(NAME) for t in tables(view.canvas)]
    assert sorted(names) == sorted(f"A{'₀₁₂₃₄₅₆₇'[h]}" for h in range(8)), names
    big = next(t for t in tables(view.canvas) if t.text(NAME) == "A₅")
    cols = doc.config.n
    reads = cell(big, 1, 2, cols).text(NAME) + " " + cell(big, 1, 2, cols).text(VALUE)
    assert f"{float(doc.trace().weights[5, 1, 2]):.2f}" in reads, reads  # as the panel prints it
    w.document.undo_stack.setClean()
