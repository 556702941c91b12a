"""Train a head: Step/Play move the document's W_Q/W_K towards the target as ONE undo step
that undo reverts exactly; a plateau is shown with a one-step re-initialisation; bad
input changes nothing; the run exports as a GIF."""

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel

from mha_gui.engine.training import PLATEAU_HINT

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def panel(window, qtbot):
    window.resize(1500, 950)
    window.show()
    qtbot.waitExposed(window)
    window.docks["train"].show()
    qtbot.wait(50)  # the dock opens and the view relays out
    p = window.views["train"]
    assert p.objectName() == "trainPanel" and p.isVisible()
    yield p
    p.stop()
    window.document.undo_stack.setClean()


def click(qtbot, widget):
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def cell_point(grid, r: int, c: int) -> QPoint:
    """The middle of the pixels where the grid's own hit test (the one a click uses)
    finds cell (r, c)."""
    hits = [
        (x, y)
        for x in range(grid.width())
        for y in range(grid.height())
        if grid.cell_at(x + 0.5, y + 0.5) == (r, c)
    ]
    assert hits, (r, c)
    xs, ys = zip(*hits, strict=True)
    return QPoint((min(xs) + max(xs)) // 2, (min(ys) + max(ys)) // 2)


def argmax_rows(doc, head):
    return doc.trace().weights[head].argmax(axis=1)


def test_previous_token_on_head_1_is_learned_as_one_undo_step(window, panel, qtbot):
    doc = window.document
    panel.head.setCurrentIndex(1)
    assert panel.target.currentData() == "previous"
    assert panel.optimizer.currentText() == "Adam" and panel.lr.text() == "0.05"
    w_q, w_k = doc.matrix("W_Q").copy(), doc.matrix("W_K").copy()
    count = doc.undo_stack.count()

    for _ in range(15):  # 150 steps with Step…
        click(qtbot, panel.step_button)
    click(qtbot, panel.play_button)  # …then Play until ~300
    qtbot.waitUntil(lambda: panel.trainer.steps_done >= 300 or not panel.timer.isActive())
    click(qtbot, panel.play_button)  # Stop keeps what was reached
    qtbot.wait(20)
    t = panel.trainer
    assert t.steps_done >= 300
    assert t.loss < 0.1 * t.losses[0]
    # the document holds the trained numbers: every row's largest weight on the previous token
    assert list(argmax_rows(doc, 1)) == [0, 0, 1, 2]
    assert f"step {t.steps_done}" in panel.status.text()
    # the whole run is ONE undo step, and undo restores W_Q/W_K exactly
    assert doc.undo_stack.count() == count + 1
    assert doc.undo_stack.undoText() == f"Train head 1 ({t.steps_done} steps)"
    doc.undo_stack.undo()
    assert np.array_equal(doc.matrix("W_Q"), w_q) and np.array_equal(doc.matrix("W_K"), w_k)
    assert panel.trainer is None  # the run ended: Step starts a new one
    # the curve was drawn live
    xs, ys = panel.curve.getData()
    assert len(ys) == t.steps_done + 1 and ys[-1] < ys[0]


def test_plateau_on_head_0_and_the_reinitialise_button_is_one_undo_step(window, panel, qtbot):
    doc = window.document
    panel.head.setCurrentIndex(0)
    for _ in range(30):
        click(qtbot, panel.step_button)
    assert panel.trainer.plateau
    hint = panel.findChild(QLabel, "train.plateau")
    assert hint.isVisible() and hint.text() == PLATEAU_HINT
    assert 0.1 < panel.trainer.loss / panel.trainer.losses[0] < 0.3  # honest: stuck near 20 %
    panel.seed.setValue(3)
    assert panel.reinit_button.text() == "Re-initialise head 0's W^Q/W^K (seed 3)"
    count = doc.undo_stack.count()
    trained = doc.matrix("W_Q").copy()
    click(qtbot, panel.reinit_button)
    assert doc.undo_stack.count() == count + 1
    assert doc.undo_stack.undoText() == "Re-initialise head 0's W^Q/W^K (seed 3)"
    assert not np.array_equal(doc.matrix("W_Q")[0], trained[0])
    assert np.array_equal(doc.matrix("W_Q")[1], trained[1])  # other heads untouched
    assert not panel.plateau.isVisible()
    doc.undo_stack.undo()
    assert np.array_equal(doc.matrix("W_Q"), trained)


def test_export_gif_writes_one_frame_per_snapshot(window, panel, qtbot, dialogs, tmp_path):
    panel.head.setCurrentIndex(1)
    for _ in range(6):
        click(qtbot, panel.step_button)
    out = tmp_path / "run.gif"
    dialogs.save_path = str(out)
    click(qtbot, panel.export_button)
    assert out.is_file()
    with Image.open(out) as gif:
        assert gif.n_frames == len(panel.snapshots) == 7
        assert gif.size[0] > 600
    assert not list(tmp_path.glob("*.part"))


def test_bad_input_changes_nothing(window, panel, qtbot):
    doc = window.document
    count = doc.undo_stack.count()
    for bad in ("0", "-1", "nan", "inf", "abc"):
        panel.lr.setText(bad)
        click(qtbot, panel.step_button)
        assert "learning rate" in panel.message.text(), bad
        assert doc.undo_stack.count() == count and panel.trainer is None
    panel.lr.setText("0.05")
    # a painted target: blocked cells are refused, an empty one is explained
    doc.set_causal(True)
    count = doc.undo_stack.count()
    panel.target.setCurrentIndex(panel.target.findData("painted"))
    click(qtbot, panel.step_button)
    assert "Paint the target" in panel.message.text() and panel.trainer is None
    grid = panel.target_grid
    # query 0 cannot see key 3 under the causal mask
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=cell_point(grid, 0, 3))
    assert "blocked" in panel.message.text() and not panel._painted.any()
    for r, c in ((0, 0), (1, 0), (2, 1), (3, 2)):
        qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=cell_point(grid, r, c))
    assert panel._painted.sum() == 4
    click(qtbot, panel.step_button)
    assert panel.trainer is not None and doc.undo_stack.count() == count + 1
    # attend to token t: a token no query may see under the mask is refused
    panel.target.setCurrentIndex(panel.target.findData("token"))
    panel.token.setValue(3)
    assert panel.trainer is None  # a new target: the next Step starts a new run
    click(qtbot, panel.step_button)
    assert panel.trainer is not None  # query 3 may see token 3


def test_an_edit_during_play_ends_the_run_and_keeps_what_was_reached(window, panel, qtbot):
    doc = window.document
    panel.head.setCurrentIndex(1)
    click(qtbot, panel.play_button)
    qtbot.waitUntil(lambda: panel.trainer is not None and panel.trainer.steps_done >= 20)
    reached = doc.matrix("W_Q").copy()
    x = doc.matrix("X").copy()
    x[0, 0] += 1
    doc.set_matrix("X", x)
    assert not panel.timer.isActive() and panel.trainer is None
    assert "stopped" in panel.message.text()
    assert np.array_equal(doc.matrix("W_Q"), reached)
    assert doc.undo_stack.undoText() == "Set X"


def test_divergence_stops_the_run_and_keeps_what_was_reached(window, panel, qtbot):
    doc = window.document
    panel.head.setCurrentIndex(1)
    click(qtbot, panel.step_button)  # 10 good steps with Adam
    reached = doc.matrix("W_Q").copy()
    count = doc.undo_stack.count()
    panel.optimizer.setCurrentIndex(panel.optimizer.findData("sgd"))
    assert panel.optimizer.currentText() == "plain gradient steps"
    panel.lr.setText("10000")
    panel.lr.editingFinished.emit()
    click(qtbot, panel.play_button)
    qtbot.waitUntil(lambda: not panel.timer.isActive())
    assert "diverged" in panel.message.text() and "kept" in panel.message.text()
    t = panel.trainer  # the run with the new rate: its last good numbers are kept
    assert np.array_equal(doc.matrix("W_Q"), t.changed()["W_Q"])
    assert np.isfinite(doc.matrix("W_Q")).all() and np.abs(doc.matrix("W_Q")).max() <= 1e6
    if t.steps_done:
        assert doc.undo_stack.count() == count + 1
        assert doc.undo_stack.undoText() == f"Train head 1 ({t.steps_done} steps)"
        doc.undo_stack.undo()
    assert np.array_equal(doc.matrix("W_Q"), reached)


def test_the_hidden_panel_draws_its_target_only_when_shown(window, qtbot):
    """The train dock starts closed: opening a layer keeps the grid widgets (found by
    objectName) but leaves their n×n content until the dock is first shown."""
    from mha_gui.engine.presets import random_session
    from mha_gui.engine.training_targets import make_target

    window.resize(1500, 950)
    window.show()
    qtbot.waitExposed(window)
    p = window.views["train"]
    assert not p.isVisible()
    window.document.open_session(random_session(seed=1, tokens=9, d_model=8, heads=2))
    grid = window.findChild(type(p.target_grid), "train.targetGrid")
    assert grid is p.target_grid and grid.matrix.shape != (9, 9)  # not drawn while hidden

    window.docks["train"].show()
    qtbot.waitUntil(lambda: p.target_grid.matrix.shape == (9, 9))
    expected = make_target(p.target.currentData(), 9, p._blocked(), p.token.value())
    np.testing.assert_array_equal(p.target_grid.matrix, expected)
    qtbot.waitUntil(lambda: p.now_grid.matrix.shape == (9, 9))  # the weights now, too
