"""What a teacher exports looks like what they see: the same colour for the same cell, the
same colour levels, titles and number format, on screen and in the PNG."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.panels.stage_panels import describe_stage
from mha_gui.export import figure
from mha_gui.views.stage.attention_view import AttentionView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def settle(qtbot):
    for _ in range(3):
        qtbot.wait(5)


def screen_rgb(qtbot, view, key, row, col) -> tuple[int, int, int]:
    """The colour of a cell on screen, a little inside its top-left corner (off the
    number printed in its middle)."""
    settle(qtbot)
    image = view.grab().toImage()
    vb = view.panels[key].plot.getViewBox()
    point = view.canvas.mapFromScene(vb.mapViewToScene(QPointF(col + 0.2, row + 0.2)))
    c = QColor(image.pixel(point + view.canvas.pos()))
    return c.red(), c.green(), c.blue()


def export_rgb(session, stage, kind_row, head, row, col) -> tuple[int, int, int]:
    """The colour of the same cell in the exported PNG (1600 px wide)."""
    lay = figure.figure_layout(session, stage)
    image = figure.render_image(session, stage)
    scale = image.width() / lay.width
    panel_row = lay.scene.rows[kind_row]
    g = next(g for g in lay.panels if g.panel in panel_row.panels and g.panel.head == head)
    x = (g.x + (col + 0.2) * g.cell) * scale
    y = (g.y + (row + 0.2) * g.cell) * scale
    c = QColor(image.pixel(int(x), int(y)))
    return c.red(), c.green(), c.blue()


@pytest.mark.parametrize(
    ("stage", "kind", "kind_row", "head", "row", "col"),
    [
        ("output", "C", 1, 1, 2, 1),  # was twice as saturated on paper as on screen
        ("output", "Y", 0, None, 1, 3),
        ("scores", "S", 0, 0, 2, 1),
        ("projections", "K", 1, 1, 3, 0),
        ("weights", "A", 0, 1, 2, 2),
    ],
)
def test_a_cell_has_the_same_colour_on_screen_and_in_the_png(
    qtbot, show_widget, stage, kind, kind_row, head, row, col
):
    session = load_preset("toy")
    doc = Document(session.copy())
    view = show_widget(AttentionView(doc), 1000, 620)
    doc.set_stage(
        ["input", "projections", "scores", "weights", "mixing", "concat", "output"].index(stage)
    )
    key = (kind, -1 if head is None else head)
    on_screen = screen_rgb(qtbot, view, key, row, col)
    on_paper = export_rgb(session, stage, kind_row, head, row, col)
    assert max(abs(a - b) for a, b in zip(on_screen, on_paper, strict=True)) <= 3, (
        on_screen,
        on_paper,
    )


def test_levels_titles_and_numbers_agree(qtbot, show_widget):
    session = load_preset("toy")
    doc = Document(session.copy())
    view = show_widget(AttentionView(doc), 1000, 620)
    doc.set_stage(6)
    settle(qtbot)
    scene = figure.build_scene(session, "output")
    # one colour scale for the whole stage, on screen and on paper
    assert {row.levels for row in scene.rows} == {view.scene.levels}
    assert view.colorbar.levels == view.scene.levels
    # the number printed in a cell is the same text
    described = describe_stage(doc, 6)
    c_row = next(r for r in scene.rows if r.panels[0].head is not None)
    for head, panel in enumerate(c_row.panels):
        shown = view.panels[("C", head)]
        for r in range(panel.matrix.shape[0]):
            for c in range(panel.matrix.shape[1]):
                text = shown.labels[r][c].textItem.toPlainText()
                assert text == c_row.fmt.cell(float(panel.matrix[r, c])), (head, r, c)
    # the titles name the same matrices (rich text on screen, Unicode on paper)
    for p in described.panels:
        if p.head is not None:
            assert view.titles[p.head] is not None
            assert p.title == f"head {p.head} · {p.symbol.pretty}"
    np.testing.assert_allclose(
        sum(doc.contribution(i) for i in range(doc.config.h)), doc.trace().output
    )
