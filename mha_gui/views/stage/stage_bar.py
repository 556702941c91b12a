"""Stage navigation (slider, Previous / Next / Play, Ctrl+PgUp / Ctrl+PgDown anywhere in
the window, ← / → when no table or text field has focus) and the inspect controls.

Shows the current stage's title ("Stage 4 of 7 · Attention weights": Stage.number, the
one numbering people see) over the shapes of its operands (S_i: 4×4 → A_i: 4×4), its
formula (large, readable from the back of a room: A_i = softmax(Q_i K_iᵀ / √d_k)) and a
sentence on two lines, all typeset (stage_labels.py), and the Layout selector of the stage
area (grid / one head big, kept in the view settings). Everything is bound both ways to
the document's view state.

Two rows, [navigation · selectors] and [title over shapes · formula · sentence], so the
heatmaps keep the height of the window: the title keeps the width of the longest stage
title, the formula shrinks rather than wraps and the captions elide, so nothing moves
from one stage to the next and the heatmaps below never jump during Play.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFont,
    QIcon,
    QKeyEvent,
    QKeySequence,
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
from mha_gui.engine.panels.stages import STAGES, formula_for, shapes_line
from mha_gui.views.settings.display_options import bind_display
from mha_gui.views.stage.stage_labels import (
    ElidedLabel,
    FormulaLabel,
    FormulaLine,
    stage_title,
    title_column,
    typeset_width,
)
from mha_gui.views.widgets.flow_layout import FlowLayout
from mha_gui.views.widgets.token_list_model import TokenListModel

PLAY_INTERVAL_MS = 1200
TITLE_GROW, FORMULA_GROW = 1.15, 1.4  # the title's and the formula's size, × the bar's font
SHAPES_ROOM = 1.45  # the title column at most this × the widest title (see _fix_sizes)
QUERY_CHARS = 12  # the query selector's width at most, in characters (longer labels elide)
# Next / Previous stage from anywhere in the window, even inside a matrix editor: tables
# use the arrows, Home/End and PgUp/PgDown to move, text fields Ctrl+arrows, but neither
# Ctrl+PgUp/PgDown (spreadsheets use it for the next sheet, browsers for the next tab).
NEXT_KEY = "Ctrl+PgDown"
PREVIOUS_KEY = "Ctrl+PgUp"
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


LAYOUT_CHOICES = (("auto", "Auto"), ("grid", "Grid"), ("one-big", "One head big"))


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

        # short buttons (their names and keys in the accessible names and tooltips):
        # the bar keeps to two rows on a 1280-wide projector at 150 %
        self.prev_button = QPushButton("◀")
        self.prev_button.setObjectName("stagePrevious")
        self.prev_button.setAccessibleName("Previous stage")
        self.prev_button.setToolTip(f"Previous stage ({PREVIOUS_KEY}; ← when no table has focus)")
        self.play_button = QPushButton("▶ Play")
        self.play_button.setObjectName("stagePlay")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip(f"Step through the stages, {PLAY_INTERVAL_MS / 1000:g} s each")
        self.next_button = QPushButton("▶")
        self.next_button.setObjectName("stageNext")
        self.next_button.setAccessibleName("Next stage")
        self.next_button.setToolTip(f"Next stage ({NEXT_KEY}; → when no table has focus)")

        self.stage_slider = QSlider(Qt.Orientation.Horizontal)
        self.stage_slider.setObjectName("stageSlider")
        self.stage_slider.setRange(0, last)
        self.stage_slider.setPageStep(1)
        self.stage_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.stage_slider.setTickInterval(1)
        self.stage_slider.setMinimumWidth(84)
        self.stage_slider.setAccessibleName("Calculation stage")

        # the title is as wide as the longest stage title (fixed: nothing moves per stage)
        self.title_label = QLabel()
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.title_label.setObjectName("stageTitle")
        self.formula_label = FormulaLabel(FORMULA_GROW)
        self.formula_label.setObjectName("stageFormula")
        # shapes and sentence may be cut (…) on a narrow bar; the full text is the tooltip
        self.shapes_label = ElidedLabel()
        self.shapes_label.setObjectName("stageShapes")
        self.what_label = ElidedLabel(lines=2)
        self.what_label.setObjectName("stageWhat")

        self.head_selector = QComboBox()
        self.head_selector.setObjectName("headSelector")
        self.head_selector.setAccessibleName("Inspect head")
        self.head_selector.setToolTip("Inspect head: highlights its panel; the others stay visible")
        self.query_selector = QComboBox()
        self.query_selector.setObjectName("querySelector")
        self.query_selector.setAccessibleName("Query token")
        self.query_selector.setToolTip("Query token: outlines its row in every head")
        # as wide as the longest label (up to QUERY_CHARS): measured from the labels'
        # lengths, not by asking the model for every one of up to thousands of rows
        self.query_selector.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.query_selector.setModel(TokenListModel(self.query_selector))
        head_label = QLabel("&Head")
        head_label.setBuddy(self.head_selector)
        query_label = QLabel("&Query")
        query_label.setBuddy(self.query_selector)

        # "head 11" whole, and the Layout selector the one that gives way in a narrow bar
        # (at 150 % beside a dock the head selector showed "head" without its number)
        self.head_selector.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.head_selector.setMinimumContentsLength(len("head 00"))
        self.layout_selector = QComboBox()
        self.layout_selector.setObjectName("stageLayout")
        self.layout_selector.setAccessibleName("Stage layout")
        self.layout_selector.setToolTip(
            "Grid: every head alike · One head big: the inspected head large, the others as "
            "thumbnails (click one to inspect it) · Auto: grid up to 4 heads"
        )
        for value, text in LAYOUT_CHOICES:
            self.layout_selector.addItem(text, value)
        self.layout_selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.layout_selector.setMinimumWidth(
            self.layout_selector.fontMetrics().horizontalAdvance("Auto") + 40
        )
        layout_label = QLabel("&Layout")
        layout_label.setBuddy(self.layout_selector)
        self._settings = None

        # Two lines, [navigation · selectors] and [title over the shapes · formula ·
        # the sentence on two lines], each one row on a 1280×720 projector at 100 % and 150 % (and
        # wrapping, never widening the window, at a bigger zoom). Every item keeps one
        # size through the stages (the widest stage's; the formula shrinks rather than
        # wraps), so the bar's height is the same at every stage: nothing moves in Play.
        nav = _group(self.prev_button, self.play_button, self.next_button, (self.stage_slider, 1))
        nav.setObjectName("stageNavigation")
        nav.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        selectors = _group(
            head_label,
            self.head_selector,
            10,
            query_label,
            self.query_selector,
            10,
            layout_label,
            self.layout_selector,
        )
        selectors.setObjectName("stageSelectors")
        self.top_flow = FlowLayout(h_spacing=14)
        for w in (nav, selectors):
            self.top_flow.addWidget(w)
        self.bottom_flow = FlowLayout(h_spacing=18)
        self.title_box = title_column(self.title_label, self.shapes_label)
        self.bottom_flow.addWidget(self.title_box)
        self.bottom_flow.addWidget(FormulaLine(self.formula_label, self.what_label))

        box = QVBoxLayout(self)
        box.setContentsMargins(6, 3, 6, 3)
        box.setSpacing(2)
        box.addLayout(self.top_flow)
        box.addLayout(self.bottom_flow)
        # Tab reads the selectors as a sentence, layout first: … Layout, Inspect head,
        # Query token, then the heatmaps of that head and query (one Tab after the query)
        QWidget.setTabOrder(self.layout_selector, self.head_selector)
        QWidget.setTabOrder(self.head_selector, self.query_selector)

        self._apply_fonts()

        self.play_timer = QTimer(self)
        self.play_timer.setInterval(PLAY_INTERVAL_MS)
        self.play_timer.timeout.connect(self._play_step)

        self.prev_shortcut = QShortcut(QKeySequence(Qt.Key.Key_Left), self)
        self.next_shortcut = QShortcut(QKeySequence(Qt.Key.Key_Right), self)
        self.prev_stage_key = QShortcut(QKeySequence(PREVIOUS_KEY), self)
        self.next_stage_key = QShortcut(QKeySequence(NEXT_KEY), self)
        for sc in (
            self.prev_shortcut,
            self.next_shortcut,
            self.prev_stage_key,
            self.next_stage_key,
        ):
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
        self.prev_stage_key.activated.connect(self.previous_stage)
        self.next_stage_key.activated.connect(self.next_stage)
        self.prev_shortcut.activated.connect(lambda: self._arrow(Qt.Key.Key_Left, -1))
        self.next_shortcut.activated.connect(lambda: self._arrow(Qt.Key.Key_Right, +1))

        self.prev_button.clicked.connect(self.previous_stage)
        self.next_button.clicked.connect(self.next_stage)
        self.play_button.toggled.connect(self.set_playing)
        self.stage_slider.valueChanged.connect(document.set_stage)
        self.head_selector.currentIndexChanged.connect(self._head_picked)
        self.query_selector.currentIndexChanged.connect(self._query_picked)
        self.layout_selector.currentIndexChanged.connect(self._layout_picked)

        document.viewChanged.connect(self._sync_view)
        document.configChanged.connect(self._sync_all)  # it follows every shapeChanged
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
            self.play_timer.start()
        else:
            self.play_timer.stop()
        if self.play_button.isChecked() != playing:
            self.play_button.blockSignals(True)
            self.play_button.setChecked(playing)
            self.play_button.blockSignals(False)
        self.play_button.setText("❚❚ Pause" if playing else "▶ Play")

    @property
    def playing(self) -> bool:
        return self.play_timer.isActive()

    def _play_step(self) -> None:
        self.next_stage()
        if self.document.view.stage >= len(STAGES) - 1:
            self.set_playing(False)

    def _arrow(self, key: Qt.Key, step: int) -> None:
        focus = QApplication.focusWidget()
        if isinstance(focus, _KEEP_ARROWS) and focus.isEnabled():
            # a table or text field has focus: the arrow moves its cursor, not the stage
            # (the shortcuts are off meanwhile, or the key sent would trigger them again)
            arrows = (self.prev_shortcut, self.next_shortcut)
            for sc in arrows:
                sc.setEnabled(False)
            try:
                for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                    event = QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier)
                    QApplication.sendEvent(focus, event)
            finally:
                for sc in arrows:
                    sc.setEnabled(True)
            return
        self.next_stage() if step > 0 else self.previous_stage()

    def _head_picked(self, index: int) -> None:
        if index >= 0:
            self.document.set_head(index)

    def _query_picked(self, index: int) -> None:
        if index >= 0:
            self.document.set_query(index)

    def _layout_picked(self, index: int) -> None:
        if index >= 0 and self._settings is not None:
            self._settings.set("stage_layout", self.layout_selector.itemData(index))

    def set_stage_layout(self, name: str) -> None:
        """Show the view settings' stage layout (auto, grid or one-big)."""
        index = self.layout_selector.findData(name)
        if index >= 0 and index != self.layout_selector.currentIndex():
            self.layout_selector.blockSignals(True)
            self.layout_selector.setCurrentIndex(index)
            self.layout_selector.blockSignals(False)

    def _apply_fonts(self) -> None:
        """Title and formula larger than the rest (they follow the zoom); the title as
        wide as the longest stage title, so nothing beside it moves."""
        for label, factor, bold in (
            (self.title_label, TITLE_GROW, True),
            (self.formula_label, FORMULA_GROW, False),
        ):
            font = QFont(self.font())
            font.setPointSizeF(self.font().pointSizeF() * factor)
            font.setBold(bold)
            label.setFont(font)
        self._fix_sizes()

    def _fix_sizes(self) -> None:
        """Title and formula as wide as the widest stage's (for this config and zoom):
        the flow then breaks its lines in the same places at every stage."""
        c = self.document.config
        for button in (self.prev_button, self.next_button):  # styles widen text buttons
            button.setFixedWidth(button.fontMetrics().horizontalAdvance("◀") * 3 + 12)
        fm = self.title_label.fontMetrics()
        widest = max(fm.horizontalAdvance(stage_title(s)) for s in STAGES)
        self.title_label.setFixedWidth(widest + 8)
        # the shapes beneath as wide as the widest stage's, up to SHAPES_ROOM × the title
        # (beyond, the longest elide: a 768-wide layer's projections at 150 %)
        font = self.shapes_label.font()
        shapes = max(typeset_width(shapes_line(s, c), font) for s in STAGES) + 8
        self.title_box.setFixedWidth(round(min(max(widest + 8, shapes), SHAPES_ROOM * widest)))
        font = self.formula_label.font()
        widest = max(typeset_width(formula_for(s, c), font) for s in STAGES)
        self.formula_label.setFixedHeight(self.formula_label.line_height())
        self.formula_label.set_widest(widest)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._apply_fonts()

    def bind_display(self, settings) -> None:
        """Follow a DisplaySettings' theme (the fonts follow the application's zoom)."""
        bind_display(self, settings, ("theme",))
        self._settings = settings
        settings.follow("stage_layout", self.set_stage_layout)

    def set_theme(self, name: str) -> None:
        # a palette, not a style sheet: style sheets stop the labels following the zoom
        muted = QColor(theme.palette(name).muted)
        for label in (self.what_label, self.shapes_label):
            pal = QPalette(label.palette())
            for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
                pal.setColor(group, QPalette.ColorRole.WindowText, muted)
            label.setPalette(pal)

    # -------------------------------------------------------------------- syncing ---
    def _sync_all(self) -> None:
        self._fix_sizes()
        self._fill_heads()
        self._fill_queries()
        self._sync_view()

    def _fill_heads(self) -> None:
        c = self.document.config
        combo = self.head_selector
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
        combo = self.query_selector
        combo.blockSignals(True)
        tokens = self.document.tokens
        combo.model().set_tokens(tokens)
        longest = max((len(t) for t in tokens), default=1)
        combo.setMinimumContentsLength(max(3, min(QUERY_CHARS, longest)))
        if combo.currentIndex() != self.document.view.query:
            combo.setCurrentIndex(self.document.view.query)
        combo.blockSignals(False)

    def _sync_view(self) -> None:
        doc = self.document
        view, c = doc.view, doc.config
        stage = STAGES[view.stage]
        for widget, value in (
            (self.stage_slider, view.stage),
            (self.head_selector, view.head),
            (self.query_selector, view.query),
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
        self.title_label.setText(stage_title(stage))
        self.what_label.setText(stage.what)
        self.what_label.setToolTip(stage.what)
        self.formula_label.set_formula(formula_for(stage, c))  # typeset (notation.py)
        shapes = shapes_line(stage, c)
        self.shapes_label.setText(shapes)
        self.shapes_label.setToolTip(shapes)
        self.prev_button.setEnabled(view.stage > 0)
        self.next_button.setEnabled(view.stage < len(STAGES) - 1)
