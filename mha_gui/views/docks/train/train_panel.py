"""Train a head (issue 10): gradient descent on one head's W^Q/W^K towards a target
pattern, live, as one undo step (dock `trainPanel`).

Pick a head, a target (previous token, first token, itself, uniform, "attend to token t",
or painted by hand in the small grid — blocked cells are refused), an optimizer (Adam or
plain gradient steps) and a learning rate; Step makes 10 steps, Play runs a QTimer of a
few steps per tick (the UI never waits). The loss curve grows live and the weights panel
of the head (the attention view, switched to the weights stage) morphs towards the target.

How a run is one undo step: the engine's `Trainer` works on its own copy of the session.
After every Step or tick its current W_Q/W_K (b_Q/b_K) are shown through the document as
the single undo step "Train head i (N steps)": if the step on top of the undo stack is
still this run's, it is undone (back to the run's start) and pushed again with the new
numbers (beginMacro / set_matrix / endMacro), so the stack holds one entry for the whole
run whose text counts the steps. The document always holds what was reached: Stop (or a
divergence, or the end of the run) keeps it, and Undo goes back exactly to the start.
Any other change of the numbers (an edit, Undo, another file) ends the run — the next
Step starts a new run, and a new undo step, from the numbers as they are then; so does
changing the head, the target, the optimizer or the learning rate.

A plateau is shown as measured (`Trainer.plateau`): the curve flattens, Play stops, and
PLATEAU_HINT appears with a button that re-initialises the head's W^Q/W^K from a seed
(`reinitialise_head`) as one undo step. Export GIF… writes one frame per recorded
snapshot (every Step or tick): the target, the weights now and the loss so far.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QFileDialog,
    QMessageBox,
    QWidget,
)

from mha_gui.engine.attention.forward import blocked_positions
from mha_gui.engine.layer.numbers import num
from mha_gui.engine.layer.values import parse_value
from mha_gui.engine.panels.notation import rich_text
from mha_gui.engine.teaching.training import (
    PLATEAU_DONE,
    Trainer,
    TrainingDiverged,
    check_target,
    default_lr,
    make_target,
    reinitialise_head,
)
from mha_gui.export.training_gif import Snapshot, write_training_gif
from mha_gui.theme import ERROR_RED
from mha_gui.views.docks.train.train_layout import STEP_COUNT, TrainLayout
from mha_gui.views.window.registry import ViewSpec, register_view

PLAY_STEPS = 5  # steps per timer tick of Play
PLAY_MS = 30
PLAY_LIMIT = 3000  # Play stops by itself after this many steps of one run


class TrainPanel(QWidget):
    def __init__(self, document, settings=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.trainer: Trainer | None = None
        self.snapshots: list[Snapshot] = []  # of the last run, kept after it ends
        self._run_frame: dict = {}  # the last run's head, target, tokens, mask and title
        self._mark: tuple[int, int] | None = None  # (index, count) after our undo step
        self._writing = False
        self._theme = "light"
        self._painted = np.zeros((document.config.n,) * 2)
        self._target_stale = False  # the target grid waits until the panel is shown

        self.ui = TrainLayout(self)  # every widget of the panel

        self.timer = QTimer(self)
        self.timer.setInterval(PLAY_MS)
        self.timer.timeout.connect(self._tick)

        self.ui.step_button.clicked.connect(lambda: self.step(STEP_COUNT))
        self.ui.play_button.clicked.connect(self.toggle_play)
        self.ui.export_button.clicked.connect(self.export_gif)
        self.ui.reinit_button.clicked.connect(self.reinitialise)
        self.ui.seed.valueChanged.connect(self._label_reinit)
        self.ui.target_grid.toggled.connect(self._paint)
        self.ui.target_grid.refused.connect(
            lambda text: self._say(text[0].upper() + text[1:] + ".", True)
        )
        for w in (self.ui.head, self.ui.target, self.ui.optimizer):
            w.currentIndexChanged.connect(self._settings_changed)
        self.ui.optimizer.currentIndexChanged.connect(self._default_lr)
        self.ui.token.valueChanged.connect(self._settings_changed)
        self.ui.lr.editingFinished.connect(self._lr_edited)
        # configChanged also follows every change of shape: one call per edit
        for signal in (document.valuesChanged, document.configChanged, document.maskChanged):
            signal.connect(self._numbers_changed)
        document.configChanged.connect(self._fill)
        document.tokensChanged.connect(self._show_target)
        document.traceChanged.connect(self._trace_changed)
        if settings is not None:
            settings.follow("theme", self.set_theme)
            settings.follow("colormap", self.ui.set_colormap)
        self._fill()
        self._default_lr()

    # ----------------------------------------------------------------- settings -----
    def _fill(self) -> None:
        """Head and token choices for the current dimensions."""
        c = self.document.config
        keep = self.ui.head.currentIndex()
        self.ui.head.blockSignals(True)
        self.ui.head.clear()
        for i in range(c.h):
            self.ui.head.addItem(f"head {i}", i)
        self.ui.head.setCurrentIndex(min(max(keep, 0), c.h - 1))
        self.ui.head.blockSignals(False)
        self.ui.token.setMaximum(c.n - 1)
        if self._painted.shape != (c.n, c.n):
            self._painted = np.zeros((c.n, c.n))
        self._settings_changed()

    def _default_lr(self) -> None:
        self.ui.lr.setText(f"{default_lr(self.document.config, self.ui.optimizer.currentData()):g}")
        self._settings_changed()

    def _lr_edited(self) -> None:
        if self.trainer is not None and self._lr_value_or_none() != self.trainer.lr:
            self._settings_changed()

    def _settings_changed(self, *_args) -> None:
        """A new head, target, optimizer or rate: the next Step starts a new run."""
        self.stop()
        self._end_run()
        self.ui.token.setVisible(self.ui.target.currentData() == "token")
        self._label_reinit()
        self._show_target()

    def _show_target(self) -> None:
        """Draw the chosen target in its grid; while the panel is hidden (its dock closed)
        the grid keeps its widget and only the n×n target waits until the panel is shown."""
        self.ui.target_grid.editable = self.ui.target.currentData() == "painted"
        if not self.isVisible():
            self._target_stale = True
            return
        self._target_stale = False
        blocked = self._blocked()
        try:
            target = self.target_matrix()
        except ValueError:
            target = np.zeros_like(blocked, dtype=float)
        self.ui.target_grid.set_matrix(target, blocked, self.document.tokens)
        self._trace_changed()

    def _trace_changed(self, *_args) -> None:
        """The head's weights now, when no run draws them (only while the panel shows)."""
        if self.trainer is None and self.isVisible() and not self.document.busy:
            weights = self._weights_now()
            if weights.shape[0] == self.document.config.n:
                self.ui.now_grid.set_matrix(weights, self._blocked(), self.document.tokens)

    def showEvent(self, event):
        super().showEvent(event)
        if self._target_stale:
            self._show_target()  # also draws the weights now
        else:
            self._trace_changed()

    def _weights_now(self) -> np.ndarray:
        """Head i's A_i as last computed: never waits for (or forces) a recompute; the
        traceChanged that follows an edit brings the new one."""
        weights = self.document.frozen_data().trace().weights
        return np.array(weights[min(self.head_index(), weights.shape[0] - 1)])

    def _paint(self, r: int, c: int) -> None:
        self._painted[r, c] = 0.0 if self._painted[r, c] > 0 else 1.0
        self._settings_changed()

    def head_index(self) -> int:
        return max(0, self.ui.head.currentIndex())

    def _blocked(self) -> np.ndarray:
        c = self.document.config
        return blocked_positions(c.n, self.document.mask, c.causal)

    def target_matrix(self) -> np.ndarray:
        """The chosen target (ValueError saying what is wrong)."""
        kind = self.ui.target.currentData()
        n, blocked = self.document.config.n, self._blocked()
        if kind == "painted":
            if not self._painted.any():
                raise ValueError(
                    "paint the target first: click the cells each query should attend to"
                )
            return check_target(self._painted, blocked)
        token = self.ui.token.value() if kind == "token" else None
        return make_target(kind, n, blocked, token)

    def _lr_value_or_none(self) -> float | None:
        try:
            return self.learning_rate()
        except ValueError:
            return None

    def learning_rate(self) -> float:
        text = self.ui.lr.text().strip()
        try:
            value = parse_value(text)
        except ValueError:
            value = float("nan")
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"the learning rate must be a positive finite number, got {text!r}")
        return value

    # -------------------------------------------------------------------- runs -------
    def _start_run(self) -> bool:
        if self.trainer is not None:
            return True
        doc = self.document
        try:
            trainer = Trainer(
                doc.snapshot(),
                self.head_index(),
                self.target_matrix(),
                lr=self.learning_rate(),
                optimizer=self.ui.optimizer.currentData(),
            )
        except ValueError as exc:
            self._say(str(exc)[0].upper() + str(exc)[1:] + ".", True)
            return False
        self.trainer = trainer
        self.snapshots = [Snapshot(0, trainer.weights.copy(), (trainer.loss,))]
        # what the run's GIF frames show, fixed now: a later change of n, the tokens, the
        # mask or the target must not be drawn over this run's snapshots
        self._run_frame = dict(
            target=trainer.target,
            head=trainer.head,
            tokens=list(doc.tokens),
            blocked=self._blocked(),
            title=f"Training head {trainer.head} towards “{self.ui.target.currentText()}”",
            floor=trainer.floor,
        )
        self._say("")
        # the weights stage of this head, where the pattern morphs (after pending relayouts)
        head = trainer.head
        QTimer.singleShot(0, self, lambda: (doc.set_head(head), doc.set_stage(3)))
        return True

    def _end_run(self) -> None:
        self.trainer = None
        self._mark = None

    def step(self, count: int = STEP_COUNT) -> bool:
        """`count` steps of the run (started if needed); False when nothing happened."""
        if not self._start_run():
            return False
        trainer = self.trainer
        diverged = None
        try:
            trainer.step(count)
        except TrainingDiverged as exc:
            diverged = str(exc)
        self._apply()
        self.snapshots.append(
            Snapshot(trainer.steps_done, trainer.weights.copy(), tuple(trainer.losses))
        )
        self._refresh()
        if diverged is not None:
            self.stop()
            self._say(
                diverged[0].upper() + diverged[1:] + "; what was reached before is kept.", True
            )
            return False
        return True

    def _apply(self) -> None:
        """Show the run's numbers through the document as its one undo step."""
        trainer = self.trainer
        if trainer is None or trainer.steps_done == 0:
            return
        stack = self.document.undo_stack
        self._writing = True
        try:
            if self._mark == (stack.index(), stack.count()):
                stack.undo()  # this run's previous state: replaced by the new one
            stack.beginMacro(f"Train head {trainer.head} ({trainer.steps_done} steps)")
            for name, value in trainer.changed().items():
                self.document.set_matrix(name, value)
            stack.endMacro()
        finally:
            self._writing = False
        self._mark = (stack.index(), stack.count())

    def _numbers_changed(self, *_args) -> None:
        if self._writing:
            return
        if self.trainer is not None:
            playing = self.timer.isActive()
            self.stop()
            self._end_run()
            if playing:
                self._say(
                    "The numbers changed during the run: it stopped there. Step starts a new run."
                )

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.stop()
        elif self._start_run():
            self.timer.start()
            self.ui.play_button.setText("■ Stop")

    def stop(self) -> None:
        """Stop playing; the document keeps what the run reached (its one undo step)."""
        self.timer.stop()
        self.ui.play_button.setText("▶ Play")

    def _tick(self) -> None:
        if not self.step(PLAY_STEPS):
            return
        t = self.trainer
        if t.plateau:
            self.stop()
        elif t.loss - t.floor < PLATEAU_DONE / 10:
            self.stop()
            self._say(
                f"Reached the target: the loss is within {PLATEAU_DONE / 10:g} of its minimum."
            )
        elif t.steps_done >= PLAY_LIMIT:
            self.stop()
            self._say(f"Stopped after {PLAY_LIMIT} steps: press Play to go on.")

    def _refresh(self) -> None:
        t = self.trainer
        if t is None:
            return
        self.ui.plot.show_losses(t.losses, t.floor)
        self.ui.now_grid.set_matrix(t.weights, self._blocked(), self.document.tokens)
        opt = "Adam" if t.optimizer_name == "adam" else "plain steps"
        self.ui.status.setText(
            f"step {t.steps_done} · loss {num(t.loss, 4)} (start {num(t.losses[0], 4)}, lowest "
            f"possible {num(t.floor, 3)}) · {opt}, lr {t.lr:g}"
        )
        self.ui.plateau.setVisible(t.plateau)

    # ------------------------------------------------------------- re-initialise -----
    def _label_reinit(self, *_args) -> None:
        self.ui.reinit_button.setText(
            # a button draws plain text, and Unicode has no superscript Q: say it in words
            f"Re-initialise head {self.head_index()}'s query and key weights "
            f"(seed {self.ui.seed.value()})"
        )

    def reinitialise(self) -> None:
        """New W^Q/W^K for the head from the seed: one undo step; the next Step starts a
        new run from them."""
        self.stop()
        doc, head, seed = self.document, self.head_index(), self.ui.seed.value()
        changes = reinitialise_head(doc.snapshot(), head, seed)
        self._end_run()
        stack = doc.undo_stack
        self._writing = True
        try:
            stack.beginMacro(f"Re-initialise head {head}'s W^Q/W^K (seed {seed})")
            for name, value in changes.items():
                doc.set_matrix(name, value)
            stack.endMacro()
        finally:
            self._writing = False
        self.ui.plateau.setVisible(False)
        self._show_target()
        self._say(
            f"Head {head}'s W^Q/W^K drawn afresh from seed {seed} (Undo brings them back): "
            "press Step or Play."
        )

    # ------------------------------------------------------------------ export -------
    def export_gif(self) -> str | None:
        if len(self.snapshots) < 2:
            self._say("Nothing to export yet: press Step or Play first.", True)
            return None
        frame = self._run_frame
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Export training GIF",
            f"training-head{frame['head']}.gif",
            "GIF animation (*.gif)",
        )
        if not path:
            return None
        if Path(path).suffix.lower() != ".gif":
            path += ".gif"
        snaps = self.snapshots
        try:
            write_training_gif(
                path,
                snaps,
                **frame,
                theme_name=self._theme,
                colormap=self.ui.target_grid.colormap,
            )
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self, "Export failed", str(exc))
            return None
        self._say(f"Exported {len(snaps)} frames to {path}")
        return path

    def set_theme(self, name: str) -> None:
        self._theme = name  # the GIF's theme too
        self.ui.set_theme(name)

    def _say(self, text: str, error: bool = False) -> None:
        self.ui.message.setText(rich_text(text))  # W^Q typeset, as everywhere
        self.ui.message.setStyleSheet(f"color: {ERROR_RED};" if error else "")


register_view(ViewSpec("train", TrainPanel, "trainPanel", "Train a head"))

__all__ = ["TrainPanel"]
