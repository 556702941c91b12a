"""Docks open large enough for their figure: a side dock is widened to the width its
view reads at (capped so the stages keep room), a bottom dock made taller; past the cap
the figure scrolls — its title, key column and numbers are never clipped, and the
MHA/GQA/MQA and Now − snapshot figures never shrink below 3/4 of their size. The neuron
view and the token lines lay themselves out for a side dock's width at full size."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QScrollArea

from mha_gui.views.docks.dock_width import MAX_SHARE

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
EDITORS = {"X", "config", "W_Q", "W_K", "W_V", "W_O"}


def open_alone(window, qtbot, name: str, preset: str = "causal-6x16"):
    """The window at 1280×720 on `preset` with dock `name` the only one shown beside the
    editors: (the dock, its size before it showed, its view)."""
    window.document.open_preset(preset)
    window.resize(1280, 720)
    window.show()
    for other, dock in window.docks.items():
        if other not in EDITORS:
            dock.hide()
    qtbot.waitExposed(window)
    dock = window.docks[name]
    before = dock.width(), dock.height()
    dock.show()
    dock.raise_()
    return dock, before, window.views[name]


def scroll_of(view) -> QScrollArea | None:
    w = view.parentWidget()
    while w is not None and not isinstance(w, QScrollArea):
        w = w.parentWidget()
    return w


@pytest.mark.parametrize("name", ["neuron", "lines", "stats"])
def test_a_side_dock_opens_as_wide_as_its_figure(window, qtbot, name):
    dock, (width, _), view = open_alone(window, qtbot, name)
    want = view.wanted_width() if name == "stats" else view.sizeHint().width()
    cap = int(window.width() * MAX_SHARE)
    # wider than it used to open (~300 px), up to what it needs, the cap or what the
    # stages' minimum leaves
    qtbot.waitUntil(lambda: dock.width() >= min(want, cap, width + 200))
    assert dock.width() <= cap + 2
    if name == "stats":  # a line wider than the dock wraps (see below): never cut
        assert view.horizontalScrollBar().maximum() == 0
        return
    # the figure is drawn whole: either it fits, or its scroll area scrolls to it
    scale, _dx, _dy = view.transform()
    assert scale >= view.min_scale * view.zoom - 1e-6
    area = scroll_of(view)
    shown = area.viewport().width()
    assert view.width() <= shown or area.horizontalScrollBar().maximum() > 0


@pytest.mark.parametrize("name", ["kv-cache", "diff"])
def test_bottom_figures_keep_their_text_size(window, qtbot, name):
    dock, (_, height), view = open_alone(window, qtbot, name)
    if name == "diff":
        from mha_gui.views.docks.diff.diff_view import pin_snapshot

        pin_snapshot(window.document)
        window.document.set_value("X", (1, 0), 3.0)
    qtbot.waitUntil(lambda: view.drawing is not None and view.isVisible())
    qtbot.waitUntil(lambda: dock.height() > max(height, 200))  # made taller when it opened
    # ~10 px labels, never 5–8 px: the figure is drawn at 3/4 of its size or more
    qtbot.waitUntil(lambda: view.transform()[0] >= 0.74 * view.zoom)  # (whole pixels)
    area = scroll_of(view)
    # what does not fit scrolls: the colour bar and the last row are reachable
    fits = view.height() <= area.viewport().height()
    assert fits or area.verticalScrollBar().maximum() > 0


@pytest.mark.parametrize("zoom", [1.0, 1.5])
@pytest.mark.parametrize("name", ["neuron", "lines"])
def test_side_dock_figures_are_laid_out_for_the_dock_at_full_size(window, qtbot, name, zoom):
    """Not a 1000-unit figure shrunk into a 530 px dock (7 px notes): the figure is laid
    out for the dock's width and drawn at the zoom's size — or, zoomed in a dock too
    narrow for its narrowest layout at that size, as large as the dock allows, never
    below 100 %. Nothing scrolls sideways; what is taller than the dock scrolls down."""
    window.set_zoom(zoom, save=False)
    dock, _, view = open_alone(window, qtbot, name)
    qtbot.waitUntil(lambda: dock.width() >= 500)
    area = scroll_of(view)

    def laid_out_for_the_dock():
        d = view.drawing
        return d is not None and abs(d.width - view.layout_width()) < 1 and not view._dirty

    qtbot.waitUntil(laid_out_for_the_dock)
    narrowest = view.reflow[0]
    qtbot.waitUntil(lambda: abs(view.transform()[0] - min(zoom, view.width() / narrowest)) < 1e-6)
    assert view.transform()[0] >= 1.0 - 1e-6
    if zoom == 1.0:
        assert view.drawing.width < 600  # a narrow layout, not the export's
    qtbot.waitUntil(lambda: area.horizontalScrollBar().maximum() == 0)
    tall = view.drawing.height * view.transform()[0] > area.viewport().height() + 1
    assert not tall or area.verticalScrollBar().maximum() > 0


def test_the_statistics_wrap_their_notes_instead_of_scrolling(window, qtbot):
    dock, _, view = open_alone(window, qtbot, "stats")
    qtbot.waitUntil(lambda: dock.width() >= 500)
    assert view.wanted_width() > view.viewport().width()  # too wide for one line each
    assert view.horizontalScrollBar().maximum() == 0
    text = view.text()
    assert "3.46 kB as float32" in text and "in fp16" in text


def _one_line(view, phrase: str) -> bool:
    """Whether `phrase` is laid out on one line of the panel's text."""
    found = view.document().find(phrase)
    assert not found.isNull(), phrase
    block = found.block()
    layout = block.layout()
    start = found.selectionStart() - block.position()
    end = found.selectionEnd() - 1 - block.position()
    line = layout.lineForTextPosition(start)
    return line.isValid() and line.lineNumber() == layout.lineForTextPosition(end).lineNumber()


@pytest.mark.parametrize("zoom", [1.0, 1.5])
def test_no_number_or_note_of_the_statistics_is_broken_apart(window, qtbot, zoom):
    """At 150 % the columns are wider than the dock: the notes then go under their rows
    (they were squeezed to a character a line, and 15,408 broke into "15,40" / "8")."""
    window.set_zoom(zoom, save=False)
    dock, _, view = open_alone(window, qtbot, "stats")
    qtbot.waitUntil(lambda: dock.width() >= 500)
    qtbot.waitUntil(lambda: view.narrow == (zoom > 1.0))
    for phrase in ("15,408", "9,216", "(9.22 k) ∝ n", "S and A each hold", "60%"):
        assert _one_line(view, phrase), phrase
    assert view.horizontalScrollBar().maximum() == 0
