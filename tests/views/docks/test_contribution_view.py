"""The contribution view: switches `ablate.i` (checked = head off) are undo steps that the
document drives, the output is then the other heads' sum + b_O, and the bars show the
sizes numpy computes."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox

from mha_gui.document import Document
from mha_gui.engine import load_preset
from mha_gui.engine.layer.session import load_session
from mha_gui.export.figures.contributions import Cell, Header, contribution_drawing
from mha_gui.views.docks.contributions.contribution_view import ContributionView
from tests.views.docks.drawing_views import make_view

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def view(show_widget):
    doc = Document(load_preset("gqa"))
    yield show_widget(make_view("contributions", doc), 900, 420)
    doc.deleteLater()


def box(view, i) -> QCheckBox:
    found = view.findChild(QCheckBox, f"ablate.{i}")
    assert found is not None and found.isCheckable()
    return found


def click(qtbot, widget):
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)
    qtbot.wait(5)


def test_one_box_per_head(view):
    h = view.document.config.h
    assert [view.findChild(QCheckBox, f"ablate.{i}") is not None for i in range(h)] == [True] * h
    assert view.findChild(QCheckBox, f"ablate.{h}") is None
    assert "Checked: head 2 is switched off" in box(view, 2).toolTip()


def test_clicking_a_box_switches_the_head_off_and_y_is_the_other_heads_plus_bias(qtbot):
    doc = Document(load_preset("gqa"))
    doc.set_config(bias=True)  # a b_O to add back
    doc.set_matrix("b_O", np.arange(doc.config.d_model, dtype=float) / 7)
    v = ContributionView(doc)
    qtbot.addWidget(v)
    v.show()
    full = np.array([doc.contribution(i) for i in range(doc.config.h)])
    click(qtbot, box(v, 1))
    click(qtbot, box(v, 5))
    assert doc.config.ablate == (1, 5)
    assert box(v, 1).isChecked() and box(v, 5).isChecked() and not box(v, 0).isChecked()
    kept = [i for i in range(doc.config.h) if i not in (1, 5)]
    y = doc.trace().output
    assert np.allclose(y, full[kept].sum(axis=0) + doc.matrix("b_O"), atol=1e-12)
    assert np.all(doc.trace().heads[1] == 0) and np.all(doc.contribution(5) == 0)
    # the weights of a switched-off head are still there for the attention view
    assert np.allclose(doc.trace().weights[1].sum(axis=1), 1.0)
    doc.deleteLater()


def test_each_click_is_one_undo_step_and_undo_unchecks_the_box(view, qtbot):
    doc = view.document
    before = doc.trace().output.copy()
    steps = doc.undo_stack.count()
    click(qtbot, box(view, 3))
    assert doc.undo_stack.count() == steps + 1
    assert doc.undo_stack.undoText() == "Switch off head 3"
    assert box(view, 3).isChecked() and "(off)" in box(view, 3).text()
    doc.undo_stack.undo()
    qtbot.wait(5)
    assert doc.config.ablate == () and not box(view, 3).isChecked()
    assert np.array_equal(doc.trace().output, before)
    doc.undo_stack.redo()
    qtbot.wait(5)
    assert box(view, 3).isChecked() and doc.config.ablate == (3,)
    click(qtbot, box(view, 3))  # back on: a second step
    assert doc.config.ablate == () and doc.undo_stack.undoText() == "Switch on head 3"


def test_the_boxes_follow_the_document_and_the_head_count(view, qtbot):
    doc = view.document
    doc.set_ablated(6, True)  # from elsewhere (a menu, a loaded file)
    assert box(view, 6).isChecked()
    doc.set_config(h=4, h_kv=2)
    qtbot.wait(5)
    assert [view.findChild(QCheckBox, f"ablate.{i}") is not None for i in range(8)] == [
        True
    ] * 4 + [False] * 4
    assert not any(box(view, i).isChecked() for i in range(4))  # head 6 no longer exists
    doc.undo_stack.undo()
    qtbot.wait(5)
    assert len(view.boxes) == 8 and box(view, 6).isChecked()


def test_the_bars_show_the_sizes_numpy_computes(view, qtbot):
    doc = view.document
    click(qtbot, box(view, 2))
    qtbot.wait(5)
    drawing = view.canvas.drawing
    assert drawing is not None and drawing.norms.ablate == (2,)
    t = doc.trace()
    d_v = doc.config.d_v
    w_o = doc.matrix("W_O")
    for i in range(doc.config.h):
        c = t.heads[i] @ w_o[i * d_v : (i + 1) * d_v]
        assert np.allclose(drawing.norms.norms[i], np.linalg.norm(c, axis=1))
    assert np.allclose(drawing.norms.total, np.linalg.norm(t.output, axis=1))
    g = 2 // doc.config.group_size
    lost = np.linalg.norm((t.weights[2] @ t.v[g]) @ w_o[2 * d_v : 3 * d_v], axis=1)
    assert np.allclose(drawing.norms.lost[2], lost) and np.all(lost > 0)
    # what the user reads: the header says off, the tooltip gives the lost size
    assert "(off)" in drawing.tooltip(Cell(0, 2))
    assert "switched off" in drawing.tooltip(Header(2))
    assert "‖Y‖" in drawing.tooltip(Cell(1, None))


def test_clicking_a_bar_follows_its_token_and_head(view, qtbot):
    canvas = view.canvas
    qtbot.wait(5)
    d = canvas.drawing
    x = d.column_x(4) + d.col_w / 2
    y = d.row_y(2) + d.row_h / 2
    scale, dx, dy = canvas.transform()
    from PySide6.QtCore import QPoint

    pos = QPoint(int(x * scale + dx), int(y * scale + dy))
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=pos)
    assert view.document.view.query == 2 and view.document.view.head == 4


def test_session_save_and_load_keep_the_switches(view, qtbot, tmp_path):
    doc = view.document
    click(qtbot, box(view, 0))
    click(qtbot, box(view, 7))
    path = tmp_path / "ablated.json"
    doc.save(path)
    assert load_session(path).config.ablate == (0, 7)
    other = Document(load_preset("gqa"))
    other.open_file(path)
    v2 = ContributionView(other)
    qtbot.addWidget(v2)
    assert [b.isChecked() for b in v2.boxes] == [True] + [False] * 6 + [True]
    assert np.allclose(other.trace().output, doc.trace().output)
    other.deleteLater()


def test_the_figure_of_a_session_matches_the_window(view, qtbot):
    from mha_gui.engine.panels.stage_panels import SessionData

    doc = view.document
    click(qtbot, box(view, 1))
    figure = contribution_drawing(SessionData(doc.snapshot()))
    on_screen = contribution_drawing(doc)
    assert np.allclose(figure.norms.norms, on_screen.norms.norms)
    assert np.allclose(figure.norms.lost, on_screen.norms.lost)
    assert figure.width <= 1600 and figure.height > 0


def test_the_view_follows_the_display_settings(qtbot):
    from mha_gui.views.settings.display_settings import DisplaySettings

    doc = Document(load_preset("toy"))
    settings = DisplaySettings(load=False)
    v = ContributionView(doc, settings)
    qtbot.addWidget(v)
    settings.set("theme", "dark", save=False)
    settings.set("zoom", 1.5, save=False)
    assert v.canvas.theme_name == "dark" and v.canvas.zoom == 1.5
    doc.deleteLater()


def test_a_narrow_dock_gets_a_table_that_fits_it(view, qtbot):
    view.resize(380, 520)
    qtbot.waitUntil(lambda: view.canvas.drawing is not None and view.canvas.drawing.width < 400)
    d = view.canvas.drawing
    assert d.narrow and d.width <= view.canvas.width() + 1
    scale, _dx, _dy = view.canvas.transform()
    assert scale > 0.9  # drawn at about its own size: the text stays readable
    view.resize(1400, 520)
    qtbot.waitUntil(lambda: not view.canvas.drawing.narrow)
