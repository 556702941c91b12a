"""Every heatmap of every stage is a grid of square cells at a readable size, in the
real window at 1280×720, at 100 % and 150 % zoom: measured on the drawn image item
mapped to the canvas's pixels. Every token is named on both axes (what the axes really
draw), a switched-off head is marked off, exercise blanks carry their list numbers, and
the layout never depends on the order in which stages were visited."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import QApplication

from mha_gui.app import create_main_window
from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.stage.square_grid import READABLE, SMALL, axis_label

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

# name -> (preset, or (tokens, d_model, heads) of a seeded random layer)
LAYERS = {
    "toy": "toy",
    "causal-6x16": "causal-6x16",
    "gqa": "gqa",
    "bert-base-like": (24, 96, 12),  # BERT-base's 12 heads of width d_model / 12
    "20 tokens": (20, 16, 4),
    "40 tokens": (40, 32, 8),
    "20 tokens, d_model 64": (20, 64, 4),  # Y, H, X wider than 40: each row still named
}


def window(qtbot, layer, zoom):
    """The window at 1280×720 on a layer of LAYERS (or a preset's name), shown."""
    spec = LAYERS.get(layer, layer)
    w = create_main_window(spec if isinstance(spec, str) else "toy")
    qtbot.addWidget(w)
    if not isinstance(spec, str):
        w.document.replace_session(random_session(0, *spec))
    w.set_zoom(zoom, save=False)
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    return w


def settle(qtbot, view):
    qtbot.waitUntil(lambda: view.settled and not view.document.busy)
    QApplication.processEvents()


def drawn_cell(panel) -> tuple[float, float]:
    """(width, height) in canvas pixels of one drawn cell: the image item's bounding
    rect mapped to the view, divided by the matrix's shape."""
    item = panel.image
    rect = item.mapRectToScene(item.boundingRect())
    rect = panel.plot.scene().views()[0].viewportTransform().mapRect(rect)
    return rect.width() / panel.cols, rect.height() / panel.rows


def drawn_labels(axis) -> list[str]:
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        return [text for _rect, _flags, text in axis.generateDrawSpecs(painter)[2]]
    finally:
        painter.end()


def minimum(panel, zoom) -> float:
    side = max(panel.rows, panel.cols)
    if side <= SMALL:
        return 14 * max(zoom, 1.0)
    if side <= READABLE:
        return 10 * max(zoom, 1.0)
    if panel.rows <= READABLE:  # a wide overview (Y, H, X of d_model 64, 96): rows named
        return 10.0
    return 0.0


@pytest.mark.parametrize("zoom", [1.0, 1.5])
@pytest.mark.parametrize("layer", list(LAYERS))
def test_every_panel_is_square_readable_and_fully_labelled(qtbot, layer, zoom):
    w = window(qtbot, layer, zoom)
    view = w.attention_view
    tokens = w.document.tokens
    for stage in STAGES:
        w.document.set_stage(stage.index)
        settle(qtbot, view)
        assert w.width() <= 1280 and w.height() <= 720
        for key, panel in view.panels.items():
            width, height = drawn_cell(panel)
            assert abs(width - height) < 0.05 * max(width, height), (stage.name, key)
            thumb = view.geometry.places[key[1]].thumb
            if thumb:
                continue  # a thumbnail is small on purpose: its head is a click away
            assert width >= minimum(panel, zoom) - 0.01, (stage.name, key, width)
            # numbers inside cells only at a legible size (else on hover)
            for row in panel.labels:
                for item in row:
                    if item.isVisible() and item.textItem.toPlainText():
                        font = item.textItem.font()
                        assert font.pixelSize() >= 10, (stage.name, key)
                        # … and inside its cell with room to spare: numbers never
                        # run into the next one (a fifth of a cell between them)
                        text = item.textItem.toPlainText()
                        assert QFontMetricsF(font).horizontalAdvance(text) <= 0.81 * width, (
                            stage.name, key, text, width,
                        )  # fmt: skip
            # every row and column named, as the axes draw them
            if panel.rows <= READABLE:
                rows = drawn_labels(panel.plot.getAxis("left"))
                assert rows == [axis_label(t, i) for i, t in enumerate(tokens)], key
                # a line apart: the rows' labels never pile on top of each other
                font = panel.plot.getAxis("left").style["tickFont"]
                assert height >= 1.1 * font.pixelSize(), (stage.name, key, height)
            if panel.cols <= READABLE:
                assert len(drawn_labels(panel.plot.getAxis("bottom"))) == panel.cols, key
    # the query strip names every key too (no thinning up to 40 tokens)
    keys = [axis_label(t, i) for i, t in enumerate(tokens)]
    for name in ("s", "a", "heads"):
        assert drawn_labels(w.query_strip.panels[name].plot.getAxis("bottom")) == keys, name
    w.document.undo_stack.setClean()


def test_the_layout_does_not_depend_on_the_order_of_visits(qtbot):
    w = window(qtbot, "causal-6x16", 1.0)
    view = w.attention_view

    def sizes_at(stage):
        w.document.set_stage(stage)
        settle(qtbot, view)
        return {k: tuple(round(v, 1) for v in drawn_cell(p)) for k, p in view.panels.items()}

    direct = sizes_at(3)
    for stage in (1, 2, 0, 6, 5):
        sizes_at(stage)
    assert sizes_at(3) == direct
    w.document.undo_stack.setClean()


def test_bert_like_grid_has_even_panel_heights(qtbot):
    w = window(qtbot, "bert-base-like", 1.0)
    view = w.attention_view
    view.set_stage_layout("grid")
    for stage in STAGES:
        w.document.set_stage(stage.index)
        settle(qtbot, view)
        heights = {
            round(p.image.mapRectToScene(p.image.boundingRect()).height(), 1)
            for (kind, head), p in view.panels.items()
            if head >= 0
        }
        assert len(heights) <= 1, (stage.name, heights)
    w.document.undo_stack.setClean()


def test_space_marks_are_told_apart():
    assert axis_label("␣", 5) == "␣ 5"
    assert axis_label(" ", 2) == "␣ 2"
    assert axis_label("␣on", 3) == "␣on"
    assert axis_label("cat", 1) == "cat"
