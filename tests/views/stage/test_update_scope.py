"""What an edit redraws: only what it changed (the structure the speed relies on).

No timings here (benchmarks/bench_gui.py measures); these pin which panels get new
pixels, which editor cells are repainted and how many recomputes a turn costs.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from mha_gui.document import Document
from mha_gui.engine.layer.numbers import nice_peak
from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.views.editors.matrix_model import MatrixModel
from mha_gui.views.stage.attention_view import AttentionView
from mha_gui.views.stage.query_strip import QueryStrip

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

OUTPUT, WEIGHTS = 6, 3


def settle(qtbot):
    for _ in range(3):
        qtbot.wait(5)


@pytest.fixture
def view(show_widget):
    doc = Document(random_session(seed=3, tokens=6, d_model=8, heads=4))
    return show_widget(AttentionView(doc), 900, 560)


def spy_images(view, monkeypatch) -> list:
    """Record the (kind, head) of every panel that gets a new image."""
    calls = []
    for key, panel in view.panels.items():
        original = panel.image.setImage

        def record(*args, _key=key, _original=original, **kwargs):
            calls.append(_key)
            return _original(*args, **kwargs)

        monkeypatch.setattr(panel.image, "setImage", record)
    return calls


def edit(qtbot, doc, name, index, delta):
    with qtbot.waitSignal(doc.traceChanged):
        doc.set_value(name, index, float(doc.matrix(name)[index]) + delta, merge_key="t")
    settle(qtbot)


def test_one_head_edit_at_weights_sets_only_that_heads_image(qtbot, view, monkeypatch):
    doc = view.document
    doc.set_stage(WEIGHTS)
    settle(qtbot)
    calls = spy_images(view, monkeypatch)
    edit(qtbot, doc, "W_Q", (2, 1, 0), 0.05)
    assert calls == [("A", 2)]


def test_one_head_edit_at_output_sets_only_y_and_that_heads_contribution(qtbot, view, monkeypatch):
    doc = view.document
    doc.set_stage(OUTPUT)
    settle(qtbot)
    levels = view.scene.levels
    calls = spy_images(view, monkeypatch)
    edit(qtbot, doc, "W_Q", (1, 0, 0), 1e-4)  # too small to move the (rounded) levels
    assert view.scene.levels == levels
    assert sorted(calls) == [("C", 1), ("Y", -1)]


def test_w_o_edit_sets_only_y_and_the_contribution_of_the_rows_head(qtbot, view, monkeypatch):
    doc = view.document
    doc.set_stage(OUTPUT)
    settle(qtbot)
    calls = spy_images(view, monkeypatch)
    d_v = doc.config.d_v
    edit(qtbot, doc, "W_O", (3 * d_v + 1, 2), 1e-4)  # a row of head 3's block
    assert sorted(calls) == [("C", 3), ("Y", -1)]


def test_contributions_shown_stay_exact_through_every_kind_of_edit(qtbot, view):
    doc = view.document
    doc.set_stage(OUTPUT)
    settle(qtbot)
    for name, index, delta in (
        ("W_Q", (0, 1, 1), 0.3),
        ("W_O", (5, 0), -0.4),
        ("W_V", (2, 3, 0), 0.2),
        ("X", (1, 2), 0.5),
        ("W_O", (0, 7), 0.1),
    ):
        edit(qtbot, doc, name, index, delta)
        t = doc.trace()
        for head in range(doc.config.h):
            np.testing.assert_allclose(
                view.panels[("C", head)].matrix, t.contributions[head], atol=1e-12
            )
        np.testing.assert_allclose(view.panels[("Y", -1)].matrix, t.output, atol=1e-12)
    doc.undo_stack.setIndex(0)  # and back to the start
    settle(qtbot)
    t = doc.trace()
    for head in range(doc.config.h):
        np.testing.assert_allclose(view.panels[("C", head)].matrix, t.contributions[head])


def test_twenty_edits_in_one_turn_give_one_recompute_and_one_update_per_panel(qtbot, view):
    doc = view.document
    doc.set_stage(OUTPUT)
    settle(qtbot)
    recomputes, updates = doc.recompute_count, view.update_count
    traces = []
    doc.traceChanged.connect(traces.append)
    for k in range(20):
        index = (k % doc.config.h, k % doc.config.d_model, k % doc.config.d_k)
        doc.set_value("W_Q", index, float(doc.matrix("W_Q")[index]) + 0.01)
    settle(qtbot)
    assert doc.recompute_count == recomputes + 1
    assert len(traces) == 1
    assert view.update_count - updates <= len(view.panels)


def test_stage_levels_are_rounded_to_two_significant_digits():
    assert nice_peak(0.40626) == 0.41
    assert nice_peak(6.0) == 6.0
    assert nice_peak(127.0) == 130.0
    assert nice_peak(0.0) == 1.0
    assert nice_peak(float("inf")) == 1.0


def test_query_strip_ignores_stage_changes(qtbot, monkeypatch):
    doc = Document(load_preset("toy"))
    strip = QueryStrip(doc)
    qtbot.addWidget(strip)
    calls = []
    for name, panel in strip.panels.items():
        monkeypatch.setattr(
            panel, "set_matrix", lambda *a, _n=name, **k: calls.append(_n), raising=True
        )
    doc.set_stage(4)
    doc.set_stage(5)
    assert calls == []
    doc.set_query(2)
    assert "heads" in calls


def test_editor_repaints_only_the_edited_cell_when_the_levels_hold(qtbot):
    doc = Document(load_preset("toy"))
    model = MatrixModel(doc, "X", doc)
    model.index(0, 0).data(Qt.ItemDataRole.BackgroundRole)  # levels computed, as on screen
    model._on_values("X")  # the slice as shown
    ranges = []
    model.dataChanged.connect(
        lambda a, b, *_: ranges.append((a.row(), a.column(), b.row(), b.column()))
    )
    peak = model.levels()[1]
    r, c = np.argwhere(np.abs(doc.matrix("X")) < peak)[0]
    doc.set_value("X", (int(r), int(c)), float(doc.matrix("X")[r, c]) + peak / 1000)
    assert ranges == [(r, c, r, c)]
    ranges.clear()
    doc.set_value("X", (int(r), int(c)), 10 * peak)  # a new maximum: every tint changes
    assert ranges == [(0, 0, model.rowCount() - 1, model.columnCount() - 1)]


def test_w_o_rows_repainted_on_head_change_span_only_those_two_heads(qtbot):
    doc = Document(random_session(seed=1, tokens=4, d_model=16, heads=8))
    doc.set_head(2)
    model = MatrixModel(doc, "W_O", doc)
    rows, headers = [], []
    model.dataChanged.connect(lambda a, b, *_: rows.append((a.row(), b.row())))
    model.headerDataChanged.connect(lambda _o, a, b: headers.append((a, b)))
    d_v = doc.config.d_v
    doc.set_head(3)
    assert rows == headers == [(2 * d_v, 4 * d_v - 1)]


def test_switching_a_weight_editor_to_another_head_keeps_its_row_headers(qtbot):
    """The rows of W_i^Q are the same d_model features for every head: no re-measuring."""
    doc = Document(random_session(seed=1, tokens=4, d_model=16, heads=8))
    model = MatrixModel(doc, "W_Q", doc)
    headers, cells = [], []
    model.headerDataChanged.connect(lambda *a: headers.append(a))
    model.dataChanged.connect(lambda a, b, *_: cells.append((a.row(), b.row())))
    model.set_head(3)
    assert headers == [] and cells == [(0, model.rowCount() - 1)]


def test_editor_tints_match_the_colour_map_cell_by_cell(qtbot):
    from mha_gui import theme

    doc = Document(random_session(seed=2, tokens=5, d_model=6, heads=2))
    model = MatrixModel(doc, "W_O", doc)
    full = doc.matrix("W_O")
    expected = theme.colors_for(full, theme.levels_for("values", full), theme.DIVERGING)
    for r in range(model.rowCount()):
        for c in range(model.columnCount()):
            tint = model.index(r, c).data(Qt.ItemDataRole.BackgroundRole)
            assert (tint.red(), tint.green(), tint.blue()) == tuple(expected[r, c]), (r, c)


def test_a_stage_shown_again_is_reused_and_brought_up_to_date(qtbot, view, monkeypatch):
    doc = view.document
    doc.set_stage(WEIGHTS)
    settle(qtbot)
    weights_canvas = view.canvas
    doc.set_stage(OUTPUT)
    settle(qtbot)
    assert view.canvas is not weights_canvas
    edit(qtbot, doc, "W_Q", (1, 0, 0), 0.5)  # while the weights are not on screen
    builds = view.rebuild_count
    kept = view._scenes[WEIGHTS].panels
    calls = []
    for key, panel in kept.items():
        original = panel.image.setImage
        monkeypatch.setattr(
            panel.image,
            "setImage",
            lambda *a, _k=key, _o=original, **k: (calls.append(_k), _o(*a, **k))[1],
        )
    doc.set_stage(WEIGHTS)
    settle(qtbot)
    assert view.canvas is weights_canvas and view.rebuild_count == builds
    assert calls == [("A", 1)]
    for head in range(doc.config.h):
        np.testing.assert_array_equal(view.panels[("A", head)].matrix, doc.trace().weights[head])


def test_kept_stages_are_dropped_when_the_config_changes(qtbot, view):
    doc = view.document
    for stage in (WEIGHTS, OUTPUT, 2):
        doc.set_stage(stage)
        settle(qtbot)
    assert set(view._scenes) == {0, WEIGHTS, OUTPUT}
    assert view._scenes[WEIGHTS].panels[("A", 0)]._blocked is None
    doc.set_causal(True)
    settle(qtbot)
    assert view._scenes == {}
    doc.set_stage(WEIGHTS)
    settle(qtbot)
    assert view.panels[("A", 0)]._blocked is not None  # built anew: the causal mask shows


def test_a_kept_stage_shows_a_mask_edited_while_it_was_hidden(qtbot, view):
    doc = view.document
    doc.set_stage(WEIGHTS)
    settle(qtbot)
    doc.set_stage(2)
    settle(qtbot)
    doc.toggle_blocked(0, 3)
    settle(qtbot)
    assert view.panels[("S", 0)]._blocked[0, 3]
    doc.set_stage(WEIGHTS)  # kept: brought up to date, blocked cell marked
    settle(qtbot)
    assert view.panels[("A", 1)]._blocked[0, 3]
    np.testing.assert_array_equal(view.panels[("A", 1)].matrix, doc.trace().weights[1])
