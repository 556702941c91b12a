"""Stage navigation (slider, Previous / Next / Play, ←/→) and the inspect controls.

Shows the current stage's title, its formula (large, readable from the back of a room)
and the shapes of its operands, e.g. `A_i = softmax(Q_i K_iᵀ / √d_k)   S_i: 4×4 → A_i: 4×4`.
Everything is bound both ways to the document's view state.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFont,
    QIcon,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPalette,
    QPixmap,
    QShortcut,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from mha_gui import theme
from mha_gui.engine.stages import STAGES, formula_for, shapes_line
from mha_gui.views.display_options import bind_display
from mha_gui.views.flow_layout import FlowLayout

PLAY_INTERVAL_MS = 1200
# Widgets that need ←/→ themselves: text being edited, and table cell navigation.
_KEEP_ARROWS = (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit, QAbstractItemView)


def _group(*items) -> QWidget:
    """Widgets side by side in one unit that the flow layout never splits.

    An int is spacing; a (widget, stretch) pair gets that stretch."""
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for item in items:
        if isinstance(item, int):
            layout.addSpacing(item)
        elif isinstance(item, tuple):
            layout.addWidget(*item)
        else:
            layout.addWidget(item)
    return box


class WrapLabel(QLabel):
    """Plain text on one line when there is room, wrapped at spaces when not (never cut)."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        m = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self.text()) + 4 + m.left() + m.right()
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = self.fontMetrics()
        word = max((fm.horizontalAdvance(w) for w in self.text().split()), default=0)
        return QSize(word + 4, fm.height())


class ElidedLabel(QLabel):
    """One line of plain text that ends in … when narrower than its text.

    `text()` stays the full text; the layout may shrink it down to a few words.
    """

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance("Softmax normalises…"), fm.height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance(self.text()) + 4, fm.height())

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(
            rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text
        )
        painter.end()


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

        # title, formula and shapes are never cut: on a very narrow bar they wrap instead
        self.titleLabel = WrapLabel()
        self.titleLabel.setObjectName("stageTitle")
        # the sentence may be cut (…) on a narrow window; the full text is its tooltip
        self.whatLabel = ElidedLabel()
        self.whatLabel.setObjectName("stageWhat")

        self.formulaLabel = WrapLabel()
        self.formulaLabel.setObjectName("stageFormula")
        self.formulaLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.shapesLabel = WrapLabel()
        self.shapesLabel.setObjectName("stageShapes")
        self.shapesLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

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

        self.headSelector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)

        # Two flowing lines that wrap on a narrow window or a big zoom instead of
        # widening it: [navigation · title · selectors] and [formula · shapes · sentence].
        nav = _group(self.prevButton, self.playButton, self.nextButton, (self.stageSlider, 1))
        nav.setObjectName("stageNavigation")
        nav.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        selectors = _group(head_label, self.headSelector, 6, query_label, self.querySelector)
        selectors.setObjectName("stageSelectors")
        self.topFlow = FlowLayout(h_spacing=14)
        for w in (nav, self.titleLabel, selectors):
            self.topFlow.addWidget(w)
        self.bottomFlow = FlowLayout(h_spacing=24)
        for w in (self.formulaLabel, self.shapesLabel, self.whatLabel):
            self.bottomFlow.addWidget(w)

        box = QVBoxLayout(self)
        box.setContentsMargins(6, 4, 6, 4)
        box.setSpacing(2)
        box.addLayout(self.topFlow)
        box.addLayout(self.bottomFlow)

        self._apply_fonts()

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
        self.playButton.setText("❚❚ Pause" if playing else "▶ Play")

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

    def _apply_fonts(self) -> None:
        """Title, formula and shapes larger than the rest (they follow the zoom)."""
        for label, factor, bold in (
            (self.titleLabel, 1.25, True),
            (self.formulaLabel, 1.6, False),
            (self.shapesLabel, 1.2, False),
        ):
            font = QFont(self.font())
            font.setPointSizeF(self.font().pointSizeF() * factor)
            font.setBold(bold)
            label.setFont(font)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._apply_fonts()

    def bind_display(self, settings) -> None:
        """Follow a DisplaySettings' theme (the fonts follow the application's zoom)."""
        bind_display(self, settings, ("theme",))

    def set_theme(self, name: str) -> None:
        # a palette, not a style sheet: style sheets stop the labels following the zoom
        muted = QColor(theme.palette(name).muted)
        for label in (self.whatLabel, self.shapesLabel):
            pal = QPalette(label.palette())
            for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
                pal.setColor(group, QPalette.ColorRole.WindowText, muted)
            label.setPalette(pal)

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
