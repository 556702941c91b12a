"""The train panel's widgets and their look: head, target, optimizer and rate choices,
the target and weights-now grids, the buttons, the loss curve (loss_plot.py), the
plateau box and the message line.

`TrainLayout(panel)` builds them and lays them out on `panel`; the panel keeps it as
`self.ui` (the Qt Designer convention) and reads every widget from there."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from mha_gui.engine.teaching.training import PLATEAU_HINT
from mha_gui.views.docks.train.loss_plot import LossPlot
from mha_gui.views.docks.train.target_grid import TargetGrid

STEP_COUNT = 10  # steps per press of Step
TARGETS = (
    ("previous token", "previous"),
    ("first token", "first"),
    ("itself (diagonal)", "self"),
    ("uniform", "uniform"),
    ("attend to token t", "token"),
    ("painted by hand", "painted"),
)
OPTIMIZERS = (("Adam", "adam"), ("plain gradient steps", "sgd"))


class TrainLayout:
    def __init__(self, panel) -> None:
        self.head = QComboBox(objectName="train.head")
        self.target = QComboBox(objectName="train.target")
        for text, key in TARGETS:
            self.target.addItem(text, key)
        self.token = QSpinBox(objectName="train.token", minimum=0)
        self.optimizer = QComboBox(objectName="train.optimizer")
        for text, key in OPTIMIZERS:
            self.optimizer.addItem(text, key)
        self.lr = QLineEdit(objectName="train.lr")
        self.lr.setToolTip(
            "The learning rate: a positive number (Adam moves each entry by about this much "
            "per step)"
        )
        form = QFormLayout()
        form.addRow("Head", self.head)
        target_row = QHBoxLayout()
        target_row.addWidget(self.target, 1)
        target_row.addWidget(self.token)
        form.addRow("Target", target_row)
        form.addRow("Optimizer", self.optimizer)
        form.addRow("Learning rate", self.lr)

        self.target_grid = TargetGrid(editable=True, objectName="train.targetGrid")
        self.now_grid = TargetGrid(objectName="train.nowGrid")
        grids = QHBoxLayout()
        for caption, grid in (
            ("target (click to paint)", self.target_grid),
            ("weights now", self.now_grid),
        ):
            box = QVBoxLayout()
            label = QLabel(caption, alignment=Qt.AlignmentFlag.AlignHCenter)
            box.addWidget(label)
            box.addWidget(grid, 1)
            grids.addLayout(box, 1)

        self.step_button = QPushButton(f"Step ({STEP_COUNT} steps)", objectName="train.step")
        self.play_button = QPushButton("▶ Play", objectName="train.play")
        self.export_button = QPushButton("Export GIF…", objectName="train.export")
        buttons = QHBoxLayout()
        for b in (self.step_button, self.play_button, self.export_button):
            buttons.addWidget(b)

        self.status = QLabel("", objectName="train.status", wordWrap=True)
        self.plot = LossPlot()

        self.plateau = QFrame(objectName="train.plateauBox")
        self.plateau.setFrameShape(QFrame.Shape.StyledPanel)
        self.plateau_text = QLabel(PLATEAU_HINT, objectName="train.plateau", wordWrap=True)
        self.seed = QSpinBox(objectName="train.reinitSeed", minimum=0, maximum=999_999)
        self.reinit_button = QPushButton("", objectName="train.reinit")
        plateau_row = QHBoxLayout()
        plateau_row.addWidget(QLabel("seed"))
        plateau_row.addWidget(self.seed)
        plateau_row.addWidget(self.reinit_button, 1)
        plateau_layout = QVBoxLayout(self.plateau)
        plateau_layout.addWidget(self.plateau_text)
        plateau_layout.addLayout(plateau_row)
        self.plateau.setVisible(False)

        self.message = QLabel("", objectName="train.message", wordWrap=True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(panel)
        layout.addLayout(form)
        layout.addLayout(grids, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.plateau)
        layout.addWidget(self.message)

    # ------------------------------------------------------------------ look ---------
    def set_theme(self, name: str) -> None:
        self.plot.set_theme(name)
        for grid in (self.target_grid, self.now_grid):
            grid.set_theme(name)

    def set_colormap(self, name: str) -> None:
        for grid in (self.target_grid, self.now_grid):
            grid.set_colormap(name)
