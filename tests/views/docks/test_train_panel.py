"""Train a head: Step/Play move the document's W_Q/W_K towards the target as ONE undo step
that undo reverts exactly; a plateau is shown with a one-step re-initialisation; bad
input changes nothing; the run exports as a GIF."""

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QLabel

from mha_gui.engine.teaching.training import PLATEAU_HINT

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
    panel.ui.head.setCurrentIndex(1)
    assert panel.ui.target.currentData() == "previous"
    assert panel.ui.optimizer.currentText() == "Adam" and panel.ui.lr.text() == "0.05"
    w_q, w_k = doc.matrix("W_Q").copy(), doc.matrix("W_K").copy()
    count = doc.undo_stack.count()

    for _ in range(15):  # 150 steps with Step…
        click(qtbot, panel.ui.step_button)
    click(qtbot, panel.ui.play_button)  # …then Play until ~300
    qtbot.waitUntil(lambda: panel.trainer.steps_done >= 300 or not panel.timer.isActive())
    click(qtbot, panel.ui.play_button)  # Stop keeps what was reached
    qtbot.wait(20)
    t = panel.trainer
    assert t.steps_done >= 300
    assert t.loss < 0.1 * t.losses[0]
    # the document holds the trained numbers: every row's largest weight on the previous token
    assert list(argmax_rows(doc, 1)) == [0, 0, 1, 2]
    assert f"step {t.steps_done}" in panel.ui.status.text()
    # the whole run is ONE undo step, and undo restores W_Q/W_K exactly
    assert doc.undo_stack.count() == count + 1
    assert doc.undo_stack.undoText() == f"Train head 1 ({t.steps_done} steps)"
    doc.undo_stack.undo()
    assert np.array_equal(doc.matrix("W_Q"), w_q) and np.array_equal(doc.matrix("W_K"), w_k)
    assert panel.trainer is None  # the run ended: Step starts a new one
    # the curve was drawn live
    xs, ys = panel.ui.plot.curve.getData()
    assert len(ys) == t.steps_done + 1 and ys[-1] < ys[0]


def test_plateau_on_head_0_and_the_reinitialise_button_is_one_undo_step(window, panel, qtbot):
    doc = window.document
    panel.ui.head.setCurrentIndex(0)
    for _ in range(30):
        click(qtbot, panel.ui.step_button)
    assert panel.trainer.plateau
    hint = panel.findChild(QLabel, "train.plateau")
    assert hint.isVisible() and hint.text() == PLATEAU_HINT
    assert 0.1 < panel.trainer.loss / panel.trainer.losses[0] < 0.3  # honest: stuck near 20 %
    panel.ui.seed.setValue(3)
    assert panel.ui.reinit_button.text() == (
        "Re-initialise head 0's query and key weights (seed 3)"
    )
    count = doc.undo_stack.count()
    trained = doc.matrix("W_Q").copy()
    click(qtbot, panel.ui.reinit_button)
    assert doc.undo_stack.count() == count + 1
    assert doc.undo_stack.undoText() == "Re-initialise head 0's W^Q/W^K (seed 3)"
    assert not np.array_equal(doc.matrix("W_Q")[0], trained[0])
    assert np.array_equal(doc.matrix("W_Q")[1], trained[1])  # other heads untouched
    assert not panel.ui.plateau.isVisible()
    doc.undo_stack.undo()
    assert np.array_equal(doc.matrix("W_Q"), trained)


def test_export_gif_writes_one_frame_per_snapshot(window, panel, qtbot, dialogs, tmp_path):
    panel.ui.head.setCurrentIndex(1)
    for _ in range(6):
        click(qtbot, panel.ui.step_button)
    out = tmp_path / "run.gif"
    dialogs.save_path = str(out)
    click(qtbot, panel.ui.export_button)
    assert out.is_file()
    with Image.open(out) as gif:
        assert gif.n_frames == len(panel.snapshots) == 7
        assert gif.size[0] > 600
    assert not list(tmp_path.glob("*.part"))


def test_export_gif_after_n_changed_draws_the_runs_own_tokens(
    window, panel, qtbot, dialogs, tmp_path
):
    """The soak's causal-6x16 seed 1: steps, then n ← 1, then Export GIF raised IndexError
    (the run's 4×4 snapshots drawn with the 1×1 mask of now). The GIF is the run's."""
    panel.ui.head.setCurrentIndex(1)
    for _ in range(3):
        click(qtbot, panel.ui.step_button)
    frames = len(panel.snapshots)
    window.document.set_config(n=1)
    assert len(window.document.tokens) == 1
    out = tmp_path / "after.gif"
    dialogs.save_path = str(out)
    with qtbot.captureExceptions() as exceptions:
        click(qtbot, panel.ui.export_button)
    assert exceptions == []
    with Image.open(out) as gif:
        assert gif.n_frames == frames


def test_bad_input_changes_nothing(window, panel, qtbot):
    doc = window.document
    count = doc.undo_stack.count()
    for bad in ("0", "-1", "nan", "inf", "abc"):
        panel.ui.lr.setText(bad)
        click(qtbot, panel.ui.step_button)
        assert "learning rate" in panel.ui.message.text(), bad
        assert doc.undo_stack.count() == count and panel.trainer is None
    panel.ui.lr.setText("0.05")
    # a painted target: blocked cells are refused, an empty one is explained
    doc.set_causal(True)
    count = doc.undo_stack.count()
    panel.ui.target.setCurrentIndex(panel.ui.target.findData("painted"))
    click(qtbot, panel.ui.step_button)
    assert "Paint the target" in panel.ui.message.text() and panel.trainer is None
    grid = panel.ui.target_grid
    # query 0 cannot see key 3 under the causal mask
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=cell_point(grid, 0, 3))
    assert "blocked" in panel.ui.message.text() and not panel._painted.any()
    for r, c in ((0, 0), (1, 0), (2, 1), (3, 2)):
        qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=cell_point(grid, r, c))
    assert panel._painted.sum() == 4
    click(qtbot, panel.ui.step_button)
    assert panel.trainer is not None and doc.undo_stack.count() == count + 1
    # attend to token t: a token no query may see under the mask is refused
    panel.ui.target.setCurrentIndex(panel.ui.target.findData("token"))
    panel.ui.token.setValue(3)
    assert panel.trainer is None  # a new target: the next Step starts a new run
    click(qtbot, panel.ui.step_button)
    assert panel.trainer is not None  # query 3 may see token 3


def test_an_edit_during_play_ends_the_run_and_keeps_what_was_reached(window, panel, qtbot):
    doc = window.document
    panel.ui.head.setCurrentIndex(1)
    click(qtbot, panel.ui.play_button)
    qtbot.waitUntil(lambda: panel.trainer is not None and panel.trainer.steps_done >= 20)
    reached = doc.matrix("W_Q").copy()
    x = doc.matrix("X").copy()
    x[0, 0] += 1
    doc.set_matrix("X", x)
    assert not panel.timer.isActive() and panel.trainer is None
    assert "stopped" in panel.ui.message.text()
    assert np.array_equal(doc.matrix("W_Q"), reached)
    assert doc.undo_stack.undoText() == "Set X"


def test_divergence_stops_the_run_and_keeps_what_was_reached(window, panel, qtbot):
    doc = window.document
    panel.ui.head.setCurrentIndex(1)
    click(qtbot, panel.ui.step_button)  # 10 good steps with Adam
    reached = doc.matrix("W_Q").copy()
    count = doc.undo_stack.count()
    panel.ui.optimizer.setCurrentIndex(panel.ui.optimizer.findData("sgd"))
    assert panel.ui.optimizer.currentText() == "plain gradient steps"
    panel.ui.lr.setText("10000")
    panel.ui.lr.editingFinished.emit()
    click(qtbot, panel.ui.play_button)
    qtbot.waitUntil(lambda: not panel.timer.isActive())
    assert "diverged" in panel.ui.message.text() and "kept" in panel.ui.message.text()
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
    from mha_gui.engine.layer.presets import random_session
    from mha_gui.engine.teaching.training_targets import make_target

    window.resize(1500, 950)
    window.show()
    qtbot.waitExposed(window)
    p = window.views["train"]
    assert not p.isVisible()
    window.document.open_session(random_session(seed=1, tokens=9, d_model=8, heads=2))
    grid = window.findChild(type(p.ui.target_grid), "train.targetGrid")
    assert grid is p.ui.target_grid and grid.matrix.shape != (9, 9)  # not drawn while hidden

    window.docks["train"].show()
    qtbot.waitUntil(lambda: p.ui.target_grid.matrix.shape == (9, 9))
    expected = make_target(p.ui.target.currentData(), 9, p._blocked(), p.ui.token.value())
    np.testing.assert_array_equal(p.ui.target_grid.matrix, expected)
    qtbot.waitUntil(lambda: p.ui.now_grid.matrix.shape == (9, 9))  # the weights now, too


def _axis_texts(plot_item, name: str) -> list[str]:
    """The tick labels the axis draws at its present size (pyqtgraph's own draw specs)."""
    axis = plot_item.getAxis(name)
    image = QImage(400, 400, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in texts]


def test_the_empty_loss_plot_says_what_appears_and_draws_no_axis_of_its_own(panel, qtbot):
    plot = panel.ui.plot
    assert not plot.has_curve()
    assert plot.empty.isVisible() and "press Step or Play" in plot.empty.text()
    assert not plot.graphics.isVisible()  # no −400 … 400 over 0.2 … 0.8 before a run

    click(qtbot, panel.ui.step_button)
    click(qtbot, panel.ui.step_button)
    qtbot.waitUntil(lambda: plot.graphics.isVisible())
    assert not plot.empty.isVisible()
    t = panel.trainer
    steps = [float(s) for s in _axis_texts(plot.plot, "bottom")]
    assert steps and min(steps) >= 0 and max(steps) <= t.steps_done
    assert max(steps) >= t.steps_done / 2  # the axis spans the run, not a default range
    losses = [float(s.replace("−", "-")) for s in _axis_texts(plot.plot, "left")]
    span = max(t.losses) - min(t.floor, min(t.losses))
    assert losses and min(losses) >= min(t.floor, min(t.losses)) - 0.1 * span
    assert max(losses) <= max(t.losses) + 0.1 * span
    assert max(losses) - min(losses) >= 0.5 * span


def _ink_runs(image, y0: int, y1: int, background) -> list[tuple[int, int]]:
    """Horizontal runs of columns with any pixel unlike the background in rows y0 … y1."""
    inked = [
        any(
            sum(abs(a - b) for a, b in zip(image.getpixel((x, y))[:3], background, strict=True))
            > 120
            for y in range(y0, y1)
        )
        for x in range(image.width)
    ]
    runs, start = [], None
    for x, on in enumerate([*inked, False]):
        if on and start is None:
            start = x
        elif not on and start is not None:
            runs.append((start, x - 1))
            start = None
    return runs


def _painted_grid(panel, qtbot, tmp_path, tokens, side: int):
    """The panel's kind of grid showing eye(n) with `tokens`, painted at side × side:
    (its image, the background colour, each column's (left, right) px, the grid's
    bottom row) — the columns found by the grid's own hit test of the painted cells."""
    grid = type(panel.ui.target_grid)()
    qtbot.addWidget(grid)
    grid.set_matrix(np.eye(len(tokens)), None, tokens)
    grid.resize(side, side)
    grid.show()
    qtbot.waitExposed(grid)
    path = tmp_path / "grid.png"
    grid.grab().save(str(path))  # painted at this size: the hit test is the painted grid
    y_mid = next(y for y in range(grid.height()) if grid.cell_at(grid.width() / 2, y) is not None)
    spans = []
    for c in range(len(tokens)):
        xs = [x for x in range(grid.width()) if grid.cell_at(x + 0.5, y_mid + 0.5) == (0, c)]
        spans.append((min(xs), max(xs)))
    bottom = max(y for y in range(grid.height()) if grid.cell_at(spans[0][0] + 1, y) is not None)
    image = Image.open(path).convert("RGB")
    return image, image.getpixel((1, image.height - 1)), spans, bottom


def test_the_target_grid_column_labels_stay_inside_their_columns(panel, qtbot, tmp_path):
    tokens = ["attention", "transformer", "query", "keys", "values", "softmax"]
    # the panel's grid in a narrow dock: 180 px
    image, background, spans, bottom = _painted_grid(panel, qtbot, tmp_path, tokens, 180)
    n = len(tokens)
    runs = _ink_runs(image, bottom + 3, min(image.height, bottom + 18), background)
    ink = [r for r in runs if r[1] >= spans[0][0]]  # right of the row labels
    # every stroke lies inside one column, and every column has its label
    owner = [
        [c for c, (left, right) in enumerate(spans) if left <= x0 and x1 <= right] for x0, x1 in ink
    ]
    assert all(len(o) == 1 for o in owner), list(zip(ink, owner, strict=True))
    assert sorted({o[0] for o in owner}) == list(range(n))


def test_a_column_label_wider_than_its_column_is_turned_and_whole(panel, qtbot, tmp_path):
    """ "three" under a 30 px column was cut to "th…": such labels read upwards, whole."""
    tokens = ["one", "two", "three", "down"]
    image, background, spans, bottom = _painted_grid(panel, qtbot, tmp_path, tokens, 150)

    def ink_height(left: int, right: int) -> int:
        rows = [
            y
            for y in range(bottom + 2, image.height)
            if any(
                sum(abs(a - b) for a, b in zip(image.getpixel((x, y)), background, strict=True))
                > 120
                for x in range(left, right + 1)
            )
        ]
        return max(rows) - min(rows) + 1 if rows else 0

    heights = [ink_height(*span) for span in spans]
    # turned: each label runs down as far as its text is long ("three" longer than "one")
    assert heights[2] > heights[0] + 4 and heights[2] > heights[3], heights
    assert heights[2] > spans[2][1] - spans[2][0], heights  # longer than its column is wide
