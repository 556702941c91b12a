"""AttentionView: what the user sees changes with the numbers, the stage and the selection."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtGui import QColor

from mha_gui import theme
from mha_gui.document import Document
from mha_gui.engine.teaching.explain import num
from mha_gui.views.stage.attention_view import AttentionView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def view(show_widget):
    return show_widget(AttentionView(Document()), 900, 560)


def settle(qtbot):
    """Let deferred rebuilds, the coalesced recompute and layout passes run."""
    for _ in range(3):
        qtbot.wait(5)


def grab(qtbot, w):
    settle(qtbot)
    return w.grab().toImage()


def cell_center(view, panel, row, col) -> QPoint:
    """Widget coordinates of the centre of cell (row, col) of a panel."""
    vb = panel.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))
    return view.canvas.mapFromScene(scene) + view.canvas.pos()


def cell_pixels(image, view, panel, row, col) -> set:
    """Every colour inside one cell (shrunk a little to stay off its borders)."""
    vb = panel.plot.getViewBox()
    a = view.canvas.mapFromScene(vb.mapViewToScene(QPointF(col + 0.1, row + 0.1)))
    b = view.canvas.mapFromScene(vb.mapViewToScene(QPointF(col + 0.9, row + 0.9)))
    return {
        image.pixel(x, y)
        for x in range(min(a.x(), b.x()), max(a.x(), b.x()))
        for y in range(min(a.y(), b.y()), max(a.y(), b.y()))
    }


def test_edit_changes_pixels_and_undo_restores_them(qtbot, view):
    doc = view.document
    doc.set_stage(3)
    before = grab(qtbot, view)
    with qtbot.waitSignal(doc.traceChanged):
        assert doc.set_value("W_Q", (0, 1, 0), 3.0)
    after = grab(qtbot, view)
    assert after != before
    with qtbot.waitSignal(doc.traceChanged):
        doc.undo_stack.undo()
    assert grab(qtbot, view) == before
    with qtbot.waitSignal(doc.traceChanged):
        doc.undo_stack.redo()
    assert grab(qtbot, view) == after


def test_every_stage_draws_something_different(qtbot, view):
    images = []
    for stage in range(7):
        view.document.set_stage(stage)
        images.append(grab(qtbot, view))
    for i in range(7):
        for j in range(i + 1, 7):
            assert images[i] != images[j], (i, j)


def test_stage_panels_show_the_trace(qtbot, view):
    doc = view.document
    t = doc.trace()
    expected = {
        0: {("X", -1): doc.matrix("X")},
        1: {("Q", 1): t.q[1], ("K", 0): t.k[0], ("V", 1): t.v[1]},
        2: {("S", 0): t.scores[0]},
        3: {("A", 1): t.weights[1]},
        4: {("Z", 0): t.heads[0]},
        5: {("H", -1): t.concat},
        6: {("Y", -1): t.output, ("C", 1): t.contributions[1]},
    }
    for stage, panels in expected.items():
        doc.set_stage(stage)
        assert len(view.panels) == {0: 1, 1: 6, 5: 1, 6: 3}.get(stage, 2)
        for key, matrix in panels.items():
            np.testing.assert_array_equal(view.panels[key].matrix, matrix)
    assert view.panels[("Y", -1)].plot.getAxis("left")._tickLevels[0][0][1] == "the"


def test_weights_levels_are_fixed_and_scores_levels_finite(qtbot, view):
    doc = view.document
    doc.set_causal(True)
    doc.set_stage(3)
    settle(qtbot)
    assert view.panels[("A", 0)].levels == (0.0, 1.0)
    doc.set_stage(2)
    lo, hi = view.panels[("S", 0)].levels
    assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
    assert view.panels[("S", 0)].image.levels is not None


def test_only_changed_heads_are_redrawn(qtbot, view):
    doc = view.document
    doc.set_stage(3)  # weights: levels fixed, so only head 0's panel needs new pixels
    settle(qtbot)
    rebuilds, updates = view.rebuild_count, view.update_count
    with qtbot.waitSignal(doc.traceChanged):
        doc.set_value("W_Q", (0, 0, 0), 2.0)
    settle(qtbot)
    assert view.rebuild_count == rebuilds
    assert view.update_count == updates + 1


def test_head_selection_frames_that_head(qtbot, view):
    doc = view.document
    doc.set_stage(3)
    doc.set_head(0)
    img0 = grab(qtbot, view)
    doc.set_head(1)
    img1 = grab(qtbot, view)
    assert img0 != img1
    # the frame of head 1's panel is drawn in head 1's colour, head 0's is not
    for head, image, framed in ((1, img1, True), (1, img0, False)):
        vb = view.panels[("A", head)].plot.getViewBox()
        rect = vb.sceneBoundingRect()
        p = view.canvas.mapFromScene(QPointF(rect.center().x(), rect.top() + 1))
        colour = QColor(image.pixel(p))
        is_head = colour.name() == QColor(theme.head_color(head)).name()
        assert is_head == framed


def test_query_selection_outlines_a_row_in_every_head(qtbot, view):
    doc = view.document
    doc.set_stage(2)
    doc.set_query(0)
    img0 = grab(qtbot, view)
    doc.set_query(2)
    img2 = grab(qtbot, view)
    assert img0 != img2
    for head in (0, 1):
        panel = view.panels[("S", head)]
        assert panel.query_rect.isVisible()
        assert panel.query_rect.rect().top() == 2.0


def test_blocked_cell_looks_different_from_a_zero_cell(qtbot, view):
    doc = view.document
    doc.set_causal(True)
    doc.set_stage(2)
    image = grab(qtbot, view)
    t = doc.trace()
    panel = view.panels[("S", 0)]
    # toy head 0: the key "the" scores 0 for every query; (0, 1) is blocked (causal)
    assert t.scores[0, 1, 0] == 0 and t.mask[0, 1]
    zero = cell_pixels(image, view, panel, 1, 0)
    blocked = cell_pixels(image, view, panel, 0, 1)
    assert QColor(theme.LIGHT.blocked).rgb() in blocked
    assert QColor(theme.LIGHT.hatch).rgb() in blocked
    assert QColor(theme.LIGHT.blocked).rgb() not in zero
    assert zero != blocked
    # weights: a blocked 0 is marked too
    doc.set_stage(3)
    image = grab(qtbot, view)
    assert QColor(theme.LIGHT.blocked).rgb() in cell_pixels(
        image, view, view.panels[("A", 0)], 0, 1
    )


def test_tooltip_text_has_the_numbers(qtbot, view):
    doc = view.document
    t = doc.trace()
    text = view.cell_tooltip("A", 1, 2, 0)
    assert text.startswith("A_1[2,0] = softmax(S_1[2,:])[0] = e^")
    assert num(t.weights[1, 2, 0]) in text and '"sat"' in text
    doc.set_stage(2)
    panel = view.panels[("S", 0)]
    assert panel.tooltip(1, 2) == view.cell_tooltip("S", 0, 1, 2)
    assert num(t.scores[0, 1, 2]) in panel.tooltip(1, 2)
    assert 'query "cat" → key "sat"' in panel.tooltip(1, 2)


def test_values_printed_on_small_matrices_and_toggle(qtbot, view):
    doc = view.document
    doc.set_stage(3)
    settle(qtbot)
    panel = view.panels[("A", 1)]
    label = panel.labels[2][2]
    assert label.isVisible()
    assert label.textItem.toPlainText() == num(doc.trace().weights[1, 2, 2], 2)
    before = grab(qtbot, view)
    view.set_show_values(False)
    assert not label.isVisible()
    assert grab(qtbot, view) != before


def test_click_selects_head_and_query(qtbot, view):
    doc = view.document
    doc.set_stage(3)
    view.panels[("A", 1)].clicked(3, 0)
    assert (doc.view.head, doc.view.query) == (1, 3)


def test_context_menu_hook_and_panel_matrix(qtbot, view):
    doc = view.document
    doc.set_stage(3)
    with qtbot.waitSignal(view.panelContextMenuRequested) as blocker:
        view.panels[("A", 1)].context_menu(QPoint(10, 20))
    assert blocker.args == ["weights", 1, QPoint(10, 20)]
    matrix, rows, cols, symbol = view.panel_matrix("weights", 1)
    np.testing.assert_array_equal(matrix, doc.trace().weights[1])
    assert rows == cols == ["the", "cat", "sat", "down"] and symbol == "A_1"
    matrix, rows, cols, symbol = view.panel_matrix("projections", 0)
    assert matrix.shape == (4, 6) and symbol == "[Q_0 | K_0 | V_0]"
    matrix, _, _, symbol = view.panel_matrix("output", -1)
    np.testing.assert_array_equal(matrix, doc.trace().output)
    assert symbol == "Y"
    assert view.panel_matrix("concat", -1)[0].shape == (4, 4)


def test_theme_recolours_background(qtbot, view):
    view.set_theme("dark")
    image = grab(qtbot, view)
    assert QColor(image.pixel(2, 2)).name() == theme.DARK.background
    view.set_theme("light")
    assert QColor(grab(qtbot, view).pixel(2, 2)).name() == theme.LIGHT.background


def test_tokens_rename_relabels_axes(qtbot, view):
    doc = view.document
    doc.set_stage(2)
    before = grab(qtbot, view)
    doc.set_token(0, "a")
    assert grab(qtbot, view) != before
    assert view.panels[("S", 0)].plot.getAxis("bottom")._tickLevels[0][0][1] == "a"


def test_many_heads_lay_out_in_a_grid(qtbot, view):
    doc = view.document
    view.set_stage_layout("grid")  # 8 heads are shown one big by default
    doc.open_preset("gqa")
    doc.set_stage(1)
    settle(qtbot)
    assert len([k for k in view.panels if k[0] == "Q"]) == 8
    assert 1 < view.scene.grid_cols < 8
    # K panel of head 5 shows K/V group 1
    np.testing.assert_array_equal(view.panels[("K", 5)].matrix, doc.trace().k[1])


def test_large_matrices_print_no_values(qtbot, view):
    doc = view.document
    doc.open_preset("random")  # small; then grow n beyond the value limit
    doc.set_config(n=16)
    doc.set_stage(3)
    settle(qtbot)
    panel = view.panels[("A", 0)]
    assert panel.rows == 16 and panel.labels == []


def test_each_head_group_is_one_cell_of_the_stage_grid(qtbot, view):
    """A group's title and panels are built in their own cell, placed once in the grid
    (row-major, `grid_cols` wide); the colour bar in its own canvas beside the grid's
    scroll area, so that a grid scrolled sideways keeps its scale in view."""
    for stage in (1, 2, 6):
        view.document.set_stage(stage)
        settle(qtbot)
        scene, ci = view.scene, view.canvas.ci
        cols = scene.grid_cols
        groups = view._groups()
        for idx, group in enumerate(groups):
            cell = ci.getItem(idx // cols, idx % cols)
            assert cell is not None and scene.titles[group.head] in cell.items
            for kind in group.kinds:
                assert scene.panels[(kind, group.head)].plot in cell.items
        assert ci.getItem(0, cols) is None or scene.thumbs is not None
        assert scene.bar_canvas.ci.getItem(0, 0) is scene.colorbar
        holder, bar = scene.holder.geometry(), scene.bar_canvas.geometry()
        assert bar.left() >= holder.right() and bar.width() > 40
