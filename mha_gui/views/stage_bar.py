"""Stage navigation (slider, Previous / Next / Play, ←/→) and the inspect controls.

Shows the current stage's title, its formula (large, readable from the back of a room)
and the shapes of its operands, e.g. `A_i = softmax(Q_i K_iᵀ / √d_k)   S_i: 4×4 → A_i: 4×4`.
Everything is bound both ways to the document's view state.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QIcon, QKeyEvent, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QTextEdit,
    QWidget,
)

from mha_gui import theme
from mha_gui.engine.stages import STAGES, formula_for, shapes_line

PLAY_INTERVAL_MS = 1200
# Widgets that need ←/→ themselves: text being edited, and table cell navigation.
_KEEP_ARROWS = (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit, QAbstractItemView)


def _swatch(colour: str) -> QIcon:
    pix = QPixmap(12, 12)
    pix.fill(QColor(colour))
    return QIcon(pix)


class StageBar(QWidget):
    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("stageBar")
        last = len(STAGES) - 1

        self.prevButton = QPushButton("◀ Previous")
        self.prevButton.setObjectName("stagePrevious")
        self.prevButton.setToolTip("Previous stage (←)")
        self.playButton = QPushButton("▶ Play")
        self.playButton.setObjectName("stagePlay")
        self.playButton.setCheckable(True)
        self.playButton.setToolTip(f"Step through the stages, {PLAY_INTERVAL_MS / 1000:g} s each")
        self.nextButton = QPushButton("Next ▶")
        self.nextButton.setObjectName("stageNext")
        self.nextButton.setToolTip("Next stage (→)")

        self.stageSlider = QSlider(Qt.Orientation.Horizontal)
        self.stageSlider.setObjectName("stageSlider")
        self.stageSlider.setRange(0, last)
        self.stageSlider.setPageStep(1)
        self.stageSlider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.stageSlider.setTickInterval(1)
        self.stageSlider.setMinimumWidth(140)
        self.stageSlider.setAccessibleName("Calculation stage")

        self.titleLabel = QLabel()
        self.titleLabel.setObjectName("stageTitle")
        title_font = QFont(self.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.25)
        title_font.setBold(True)
        self.titleLabel.setFont(title_font)
        self.whatLabel = QLabel()
        self.whatLabel.setObjectName("stageWhat")
        self.whatLabel.setWordWrap(False)
        # the sentence may be cut on a narrow window; the full text is its tooltip
        self.whatLabel.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        self.formulaLabel = QLabel()
        self.formulaLabel.setObjectName("stageFormula")
        formula_font = QFont(self.font())
        formula_font.setPointSizeF(formula_font.pointSizeF() * 1.6)
        self.formulaLabel.setFont(formula_font)
        self.formulaLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.shapesLabel = QLabel()
        self.shapesLabel.setObjectName("stageShapes")
        shapes_font = QFont(self.font())
        shapes_font.setPointSizeF(shapes_font.pointSizeF() * 1.2)
        self.shapesLabel.setFont(shapes_font)

        self.headSelector = QComboBox()
        self.headSelector.setObjectName("headSelector")
        self.headSelector.setAccessibleName("Inspect head")
        self.headSelector.setToolTip("Inspect head: highlights its panel; the others stay visible")
        self.querySelector = QComboBox()
        self.querySelector.setObjectName("querySelector")
        self.querySelector.setAccessibleName("Query token")
        self.querySelector.setToolTip("Query token: outlines its row in every head")
        self.querySelector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        head_label = QLabel("Inspect &head")
        head_label.setBuddy(self.headSelector)
        query_label = QLabel("&Query token")
        query_label.setBuddy(self.querySelector)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        for w in (self.prevButton, self.playButton, self.nextButton):
            top.addWidget(w)
        top.addWidget(self.stageSlider, 1)
        top.addSpacing(8)
        top.addWidget(self.titleLabel)
        top.addStretch(1)
        top.addWidget(head_label)
        top.addWidget(self.headSelector)
        top.addSpacing(6)
        top.addWidget(query_label)
        top.addWidget(self.querySelector)

        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.formulaLabel)
        bottom.addSpacing(24)
        bottom.addWidget(self.shapesLabel)
        bottom.addSpacing(24)
        bottom.addWidget(self.whatLabel, 1)

        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        grid.setVerticalSpacing(2)
        grid.addLayout(top, 0, 0)
        grid.addLayout(bottom, 1, 0)

        self.playTimer = QTimer(self)
        self.playTimer.setInterval(PLAY_INTERVAL_MS)
        self.playTimer.timeout.connect(self._play_step)

        self.prevShortcut = QShortcut(QKeySequence(Qt.Key.Key_Left), self)
        self.nextShortcut = QShortcut(QKeySequence(Qt.Key.Key_Right), self)
        for sc in (self.prevShortcut, self.nextShortcut):
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
        self.prevShortcut.activated.connect(lambda: self._arrow(Qt.Key.Key_Left, -1))
        self.nextShortcut.activated.connect(lambda: self._arrow(Qt.Key.Key_Right, +1))

        self.prevButton.clicked.connect(self.previous_stage)
        self.nextButton.clicked.connect(self.next_stage)
        self.playButton.toggled.connect(self.set_playing)
        self.stageSlider.valueChanged.connect(document.set_stage)
        self.headSelector.currentIndexChanged.connect(self._head_picked)
        self.querySelector.currentIndexChanged.connect(self._query_picked)

        document.viewChanged.connect(self._sync_view)
        document.configChanged.connect(self._sync_all)
        document.shapeChanged.connect(self._sync_all)
        document.tokensChanged.connect(self._fill_queries)
        self._sync_all()

    # ------------------------------------------------------------------ actions ---
    def next_stage(self) -> None:
        self.document.set_stage(self.document.view.stage + 1)

    def previous_stage(self) -> None:
        self.document.set_stage(self.document.view.stage - 1)

    def set_playing(self, playing: bool) -> None:
        """Start (from the first stage if at the last) or stop stepping through stages."""
        if playing:
            if self.document.view.stage >= len(STAGES) - 1:
                self.document.set_stage(0)
            self.playTimer.start()
        else:
            self.playTimer.stop()
        if self.playButton.isChecked() != playing:
            self.playButton.blockSignals(True)
            self.playButton.setChecked(playing)
            self.playButton.blockSignals(False)
        self.playButton.setText("⏸ Pause" if playing else "▶ Play")

    @property
    def playing(self) -> bool:
        return self.playTimer.isActive()

    def _play_step(self) -> None:
        self.next_stage()
        if self.document.view.stage >= len(STAGES) - 1:
            self.set_playing(False)

    def _arrow(self, key: Qt.Key, step: int) -> None:
        focus = QApplication.focusWidget()
        if isinstance(focus, _KEEP_ARROWS) and focus.isEnabled():
            # a table or text field has focus: the arrow moves its cursor, not the stage
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                QApplication.sendEvent(focus, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier))
            return
        self.next_stage() if step > 0 else self.previous_stage()

    def _head_picked(self, index: int) -> None:
        if index >= 0:
            self.document.set_head(index)

    def _query_picked(self, index: int) -> None:
        if index >= 0:
            self.document.set_query(index)

    def set_theme(self, name: str) -> None:
        pal = theme.palette(name)
        self.whatLabel.setStyleSheet(f"color: {pal.muted};")
        self.shapesLabel.setStyleSheet(f"color: {pal.muted};")

    # -------------------------------------------------------------------- syncing ---
    def _sync_all(self) -> None:
        self._fill_heads()
        self._fill_queries()
        self._sync_view()

    def _fill_heads(self) -> None:
        c = self.document.config
        combo = self.headSelector
        combo.blockSignals(True)
        combo.clear()
        for i in range(c.h):
            combo.addItem(_swatch(theme.head_color(i)), f"head {i}")
            if c.variant != "MHA":
                combo.setItemData(
                    i, f"reads K/V group {c.kv_group(i)}", Qt.ItemDataRole.ToolTipRole
                )
        combo.setCurrentIndex(self.document.view.head)
        combo.blockSignals(False)

    def _fill_queries(self) -> None:
        combo = self.querySelector
        combo.blockSignals(True)
        combo.clear()
        for i, token in enumerate(self.document.tokens):
            combo.addItem(token)
            combo.setItemData(i, f"token {i}", Qt.ItemDataRole.ToolTipRole)
        combo.setCurrentIndex(self.document.view.query)
        combo.blockSignals(False)

    def _sync_view(self) -> None:
        doc = self.document
        view, c = doc.view, doc.config
        stage = STAGES[view.stage]
        for widget, value in (
            (self.stageSlider, view.stage),
            (self.headSelector, view.head),
            (self.querySelector, view.query),
        ):
            if widget.count() if isinstance(widget, QComboBox) else True:
                current = widget.value() if isinstance(widget, QSlider) else widget.currentIndex()
                if current != value:
                    widget.blockSignals(True)
                    if isinstance(widget, QSlider):
                        widget.setValue(value)
                    else:
                        widget.setCurrentIndex(value)
                    widget.blockSignals(False)
        self.titleLabel.setText(f"{stage.index + 1}/{len(STAGES)}  {stage.title}")
        self.whatLabel.setText(stage.what)
        self.whatLabel.setToolTip(stage.what)
        self.formulaLabel.setText(formula_for(stage, c))
        self.shapesLabel.setText(shapes_line(stage, c))
        self.prevButton.setEnabled(view.stage > 0)
        self.nextButton.setEnabled(view.stage < len(STAGES) - 1)
