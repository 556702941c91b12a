"""The query strip names every key legibly up to 40 tokens, in the real window at
1280×720 and 100 % / 150 % zoom: measured from what its axes draw (generateDrawSpecs):
every token, at ≥ 10 px, no label touching the next (the strip scrolls sideways if the
keys need more width than it has)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontInfo, QImage, QPainter

from mha_gui.views.stage.square_grid import axis_label
from tests.views.stage.test_square_heatmaps import settle, window

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def drawn(axis):
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        return axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()


@pytest.mark.parametrize("zoom", [1.0, 1.5])
@pytest.mark.parametrize("layer", ["20 tokens", "40 tokens", "causal-6x16"])
def test_every_key_is_named_legibly_without_overlap(qtbot, layer, zoom):
    w = window(qtbot, layer, zoom)
    w.document.set_stage(3)
    settle(qtbot, w.attention_view)
    strip = w.query_strip
    qtbot.waitUntil(lambda: strip.settled)
    keys = [axis_label(t, i) for i, t in enumerate(w.document.tokens)]
    for name in ("s", "a", "heads"):
        axis = strip.panels[name].plot.getAxis("bottom")
        specs = drawn(axis)
        assert [text for _r, _f, text in specs] == keys, name
        assert QFontInfo(axis.style["tickFont"]).pixelSize() >= 10, name
        boxes = sorted((rect.left(), rect.right()) for rect, _f, _t in specs)
        for (_l, right), (left, _r) in zip(boxes, boxes[1:], strict=False):
            assert right <= left + 0.5, (name, right, left)
    assert w.width() <= 1280 and w.height() <= 720
    w.document.undo_stack.setClean()


@pytest.mark.parametrize("layer", ["toy", "gqa", "causal-6x16"])
def test_the_strips_vectors_are_never_bars_taller_than_wide(qtbot, layer):
    """q, s, a and z are 1 × n matrices: never taller than wide beside the "every head"
    panel (gqa's were 55 × 117 px bars, as tall as its eight rows); a vector whose
    columns are narrower than its 24 px minimum stays 24 px tall."""
    from tests.views.stage.test_square_heatmaps import drawn_cell

    w = window(qtbot, layer, 1.0)
    w.document.set_stage(3)
    strip = w.query_strip
    settle(qtbot, w.attention_view)
    qtbot.waitUntil(lambda: strip.settled)

    def bars() -> list:
        cells = {name: drawn_cell(strip.panels[name]) for name in ("q", "s", "a", "z")}
        return [(n, wh) for n, wh in cells.items() if wh[1] > max(24.5, wh[0] * 1.06)]

    qtbot.waitUntil(lambda: not bars())  # the view boxes follow their widths
    w.document.undo_stack.setClean()


@pytest.mark.parametrize("zoom", [1.0, 1.5])
@pytest.mark.parametrize("layer", ["toy", "gqa", "causal-6x16", "20 tokens", "40 tokens"])
def test_every_strip_panel_draws_square_cells(qtbot, layer, zoom):
    """The strip's boxes stretch with the window, its cells do not: each panel's cells
    are squares of the largest side its box allows (the toy's "every head" panel was
    46 × 22 px cells, causal-6x16's 30 × 13), its keys still named. Only where squares
    would be smaller than the keys' labels need (40 keys, 8 heads) do cells stretch."""
    from tests.views.stage.test_square_heatmaps import drawn_cell

    w = window(qtbot, layer, zoom)
    w.document.set_stage(3)
    strip = w.query_strip
    settle(qtbot, w.attention_view)
    qtbot.waitUntil(lambda: strip.settled)
    squares = {"q", "s", "a", "z", "heads"} - ({"heads"} if layer == "40 tokens" else set())

    def not_square() -> list:
        cells = {name: drawn_cell(strip.panels[name]) for name in squares}
        return [(n, wh) for n, wh in cells.items() if abs(wh[0] - wh[1]) > 1.0]

    qtbot.waitUntil(lambda: not not_square())
    for name in ("s", "a", "heads"):  # and every key is still named, at ≥ 10 px
        axis = strip.panels[name].plot.getAxis("bottom")
        keys = [axis_label(t, i) for i, t in enumerate(w.document.tokens)]
        assert [text for _r, _f, text in drawn(axis)] == keys, name
        assert QFontInfo(axis.style["tickFont"]).pixelSize() >= 10, name
    w.document.undo_stack.setClean()
