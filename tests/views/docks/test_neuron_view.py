"""The neuron view on screen: follows head, query and edits, a click takes a key apart,
theme and colour map repaint it, and its export is the same drawing."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from mha_gui.cli import main
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.export.drawing import FigureOptions, render_drawing
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
    return shown_view(show_widget, qtbot, "neuron", "toy", 900, 700)


def key_point(view, k) -> QPoint:
    d = view.drawing
    chart = d.charts[-1]  # the weights
    return widget_point(view, chart.x + 20, chart.rows_y + (k + 0.5) * d.row_h)


def test_shows_the_inspected_pair_and_its_numbers(view):
    doc = view.document
    assert view.objectName() == "neuronView"
    nu = view.drawing.neuron
    trace = doc.trace()
    assert (nu.head, nu.query) == (doc.view.head, doc.view.query)
    assert nu.key == int(np.argmax(trace.weights[nu.head, nu.query])) and not nu.chosen
    assert nu.score == pytest.approx(trace.scores[nu.head, nu.query, nu.key], abs=1e-12)


def test_follows_head_query_and_edits(view, qtbot):
    doc = view.document
    doc.set_head(1)
    settle(qtbot, view)
    assert view.drawing.neuron.head == 1
    doc.set_query(2)
    settle(qtbot, view)
    assert view.drawing.neuron.query == 2
    before = view.drawing.neuron.scaled
    assert doc.set_value("X", (2, 0), 7.0)
    settle(qtbot, view)
    nu, trace = view.drawing.neuron, doc.trace()
    assert nu.scaled != before
    assert nu.score == pytest.approx(trace.scores[1, 2, nu.key], abs=1e-12)
    np.testing.assert_array_equal(nu.weights, trace.weights[1, 2])


def test_click_a_key_then_click_it_again_for_the_strongest(view, qtbot):
    default = view.drawing.neuron.key
    other = (default + 1) % view.document.config.n
    qtbot.mouseClick(view, Qt.LeftButton, pos=key_point(view, other))
    settle(qtbot, view)
    assert view.drawing.neuron.key == other and view.drawing.neuron.chosen
    # another head keeps the chosen key (compare heads on one pair) …
    view.document.set_head(1)
    settle(qtbot, view)
    assert view.drawing.neuron.key == other and view.drawing.neuron.head == 1
    qtbot.mouseClick(view, Qt.LeftButton, pos=key_point(view, other))
    settle(qtbot, view)
    assert not view.drawing.neuron.chosen
    # … another query goes back to its strongest key
    qtbot.mouseClick(view, Qt.LeftButton, pos=key_point(view, other))
    settle(qtbot, view)
    view.document.set_query(3)
    settle(qtbot, view)
    assert not view.drawing.neuron.chosen


def test_a_click_is_not_an_undo_step(view, qtbot):
    qtbot.mouseClick(view, Qt.LeftButton, pos=key_point(view, 0))
    settle(qtbot, view)
    assert view.document.undo_stack.count() == 0


def test_rope_uses_the_rotated_vectors(view, qtbot):
    doc = view.document
    doc.set_rope(True)
    settle(qtbot, view)
    nu, trace = view.drawing.neuron, doc.trace()
    assert nu.rotated and trace.q_rot is not None
    np.testing.assert_array_equal(nu.q, trace.q_rot[nu.head, nu.query])
    np.testing.assert_array_equal(nu.k, trace.k_rot[nu.group, nu.key])
    assert any("RoPE is on" in note for note in view.drawing.notes)


def test_theme_and_colormap_repaint(view, qtbot):
    light = pixels(view)
    view.set_theme("dark")
    qtbot.wait(10)
    dark = pixels(view)
    assert not np.array_equal(light, dark)
    view.set_colormap("grey")
    qtbot.wait(10)
    assert not np.array_equal(dark, pixels(view))


def test_tooltip_explains_a_dimension_and_a_key(view):
    d = view.drawing
    assert d.tooltip(("dim", 0)).startswith("dimension 0: q ")
    assert "click to take this score apart" in d.tooltip(("key", 1))


def test_bad_key_is_refused_and_nothing_changes(view):
    with pytest.raises(ValueError, match="key 9 is out of range"):
        view.set_key(9)
    assert view.key is None


def test_registered_and_exported_like_the_window(view, tmp_path, capsys):
    spec = registry.view_spec("neuron")
    assert spec.object_name == "neuronView" and spec.figure == "neuron"
    doc = view.document
    options = FigureOptions(head=doc.view.head, query=doc.view.query)
    exported = draw_figure(spec.figure, SessionData(doc.snapshot()), options)
    # the window's Export figure writes the CLI's drawing, byte for byte: the view on
    # screen without its mouse hints ("click a key below…"), which a file cannot use
    on_file = view.export_drawing(vector=False)
    a = render_drawing(exported, 800).convertToFormat(render_drawing(on_file, 800).format())
    assert a == render_drawing(on_file, 800)
    assert any("click" in n for n in view.drawing.notes)
    assert not any("click" in n for n in on_file.notes)
    assert on_file.notes == [n.split(" — click")[0] for n in view.drawing.notes]

    out = tmp_path / "n.svg"
    code = main(
        ["export", "--preset", "toy", "--view", "neuron", "--head", "1", "--query", "2",
         "--key", "0", "--out", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    svg = out.read_text()
    # toy, head 1: q₂ = (2, 2), k₀ = (1, 1): vector text, the sum written out
    assert "Σ = 2 + 2 = 4" in svg and "S₁[2, 0] = scale × " in svg and "<image" not in svg
