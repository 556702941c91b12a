"""Editors for the matrices a user can change: X, W^Q, W^K, W^V, W_O and the biases.

A MatrixEditor is a matrix's title, its head tabs (per-head parameters), its table
(views/editors/matrix_table.py: typing, paste, scrub) and its bias row; the X editor also adds
and removes tokens and renames them.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from mha_gui import theme
from mha_gui.document.cells import KV
from mha_gui.engine.panels.notation import rich_text
from mha_gui.views.editors.matrix_model import MatrixModel
from mha_gui.views.editors.matrix_table import MatrixTable
from mha_gui.views.settings.display_options import bind_display


def _title(name: str, document, head: int) -> str:
    """`W_1^Q  (d_model × d_k = 4 × 2)` — the matrix, its head and its shape."""
    c = document.config
    if name == "X":
        return f"X  (n × d_model = {c.n} × {c.d_model})"
    if name == "W_O":
        return f"W_O  (h·d_v × d_model = {c.h * c.d_v} × {c.d_model})"
    letter = name[-1]
    width = "d_v" if letter == "V" else "d_k"
    size = c.d_v if letter == "V" else c.d_k
    text = f"W_{head}^{letter}  (d_model × {width} = {c.d_model} × {size})"
    if name in KV and c.variant != "MHA":
        first = head * c.group_size
        heads = (
            f"head {first}" if c.group_size == 1 else f"heads {first}–{first + c.group_size - 1}"
        )
        text += f"\nK/V head {head}, shared by {heads}"
    return text


class MatrixEditor(QWidget):
    """One matrix's editor: its title, a head selector if per-head, the table, its bias.

    `message(str)` carries everything the user should be told (refused values, pastes).
    """

    message = Signal(str)

    def __init__(self, document, name: str, bias: str | None = None, parent=None):
        super().__init__(parent)
        self.document = document
        self.name = name
        self.setObjectName(f"matrixEditor.{name}")
        self.model = MatrixModel(document, name, self)
        self.table = MatrixTable(self.model, self)
        self.table.message.connect(self.message)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        self.title = QLabel(self)
        self.title.setObjectName(f"title.{name}")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setWordWrap(True)  # a narrow dock wraps the title instead of widening
        layout.addWidget(self.title)

        self.tabs: QTabBar | None = None
        if self.model.is_headed:
            self.tabs = QTabBar(self)
            self.tabs.setObjectName(f"headTabs.{name}")
            self.tabs.setExpanding(False)
            self.tabs.setUsesScrollButtons(True)
            self.tabs.setDrawBase(False)
            self.tabs.currentChanged.connect(self._on_tab)
            layout.addWidget(self.tabs)
        layout.addWidget(self.table)

        self.bias_model: MatrixModel | None = None
        self.bias_table: MatrixTable | None = None
        self.bias_label: QLabel | None = None
        if bias is not None:
            self.bias_label = QLabel(self)
            self.bias_label.setWordWrap(True)
            self.bias_model = MatrixModel(document, bias, self)
            self.bias_table = MatrixTable(self.bias_model, self)
            self.bias_table.message.connect(self.message)
            self.bias_table.verticalHeader().setVisible(True)
            layout.addWidget(self.bias_label)
            layout.addWidget(self.bias_table)

        self.token_buttons: QWidget | None = None
        if name == "X":
            self._add_token_controls(layout)
            self.table.setToolTip("Double-click a token (row label) to rename it")
        layout.addStretch(1)

        # configChanged follows every shapeChanged (after the models have reset)
        document.configChanged.connect(self._sync)
        document.viewChanged.connect(self._follow_view)
        self._sync()
        self._follow_view()

    # -------------------------------------------------------------- tokens ----------
    def _add_token_controls(self, layout: QVBoxLayout) -> None:
        row = QWidget(self)
        box = QHBoxLayout(row)
        box.setContentsMargins(0, 0, 0, 0)
        self.add_token_button = QPushButton("+ token", row)
        self.add_token_button.setObjectName("addToken")
        self.add_token_button.setToolTip("Add a token (a row of X); new numbers are seeded")
        self.remove_token_button = QPushButton("− token", row)
        self.remove_token_button.setObjectName("removeToken")
        self.remove_token_button.setToolTip("Remove the last token (undo brings it back)")
        self.add_token_button.clicked.connect(lambda: self.change_tokens(+1))
        self.remove_token_button.clicked.connect(lambda: self.change_tokens(-1))
        box.addWidget(self.add_token_button)
        box.addWidget(self.remove_token_button)
        box.addStretch(1)
        layout.addWidget(row)
        self.token_buttons = row
        self.table.verticalHeader().sectionDoubleClicked.connect(self.rename_token)

    def change_tokens(self, delta: int) -> None:
        n = self.document.config.n + delta
        try:
            self.document.set_config(n=n, label="Add token" if delta > 0 else "Remove token")
        except ValueError as exc:
            self.message.emit(f"Cannot change the number of tokens: {exc}")

    def rename_token(self, i: int) -> None:
        tokens = self.document.tokens
        if not 0 <= i < len(tokens):
            return
        text, ok = QInputDialog.getText(
            self, "Rename token", f"Label of token {i}:", QLineEdit.EchoMode.Normal, tokens[i]
        )
        if not ok:
            return
        try:
            self.document.set_token(i, text)
        except ValueError as exc:
            self.message.emit(f"Cannot rename token {i}: {exc}")

    # -------------------------------------------------------------- heads -----------
    def _on_tab(self, index: int) -> None:
        if index < 0:
            return
        self.model.set_head(index)
        if self.bias_model is not None:
            self.bias_model.set_head(index)
        self._update_titles()
        if getattr(self, "_syncing", False):
            return
        c = self.document.config
        if self.name == "W_Q":
            self.document.set_head(index)
        elif c.kv_group(self.document.view.head) != index:
            self.document.set_head(index * c.group_size)

    def _follow_view(self) -> None:
        """The inspected head's slice is the one shown, its tab marked."""
        if self.tabs is None:
            return
        c = self.document.config
        head = min(self.document.view.head, c.h - 1)
        target = c.kv_group(head) if self.name in KV else head
        self._syncing = True
        try:
            if self.tabs.currentIndex() != target:
                self.tabs.setCurrentIndex(target)
        finally:
            self._syncing = False

    def _sync(self) -> None:
        """Rebuild the head tabs and titles after a config change."""
        c = self.document.config
        if self.tabs is not None:
            count = self.model.head_count()
            self._syncing = True
            try:
                while self.tabs.count() > count:
                    self.tabs.removeTab(self.tabs.count() - 1)
                while self.tabs.count() < count:
                    self.tabs.addTab("")
                for i in range(count):
                    if self.name in KV and c.variant != "MHA":
                        label = f"K/V {i}"
                        tip = f"K/V head {i}, read by query heads {i * c.group_size}–{(i + 1) * c.group_size - 1}"
                    else:
                        label, tip = f"head {i}", f"head {i}'s {self.name}"
                    self.tabs.setTabText(i, label)
                    self.tabs.setTabToolTip(i, tip)
                self._colour_tabs()
                self.tabs.setCurrentIndex(min(self.model.head, count - 1))
            finally:
                self._syncing = False
            self._follow_view()
        if self.bias_table is not None:
            on = self.bias_model.exists()
            self.bias_table.setVisible(on)
            self.bias_label.setVisible(on)
        if self.token_buttons is not None:
            self.remove_token_button.setEnabled(c.n > 1)
        self._update_titles()
        self.table.updateGeometry()

    def _colour_tabs(self) -> None:
        """Head colours on the tabs, lightened on a dark palette so they stay readable."""
        if getattr(self, "tabs", None) is None:
            return
        c = self.document.config
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        for i in range(self.tabs.count()):
            head = i if self.name == "W_Q" else i * c.group_size
            colour = theme.head_text_color(head, "dark" if dark else "light")
            self.tabs.setTabTextColor(i, QColor(colour))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._colour_tabs()

    def _update_titles(self) -> None:
        # typeset like the stage bar's formula (W₀^Q with real scripts); the plain text
        # stays selectable, and `_title` is what a copy of it reads
        text = _title(self.name, self.document, self.model.head)
        self.title.setText(rich_text(text).replace("\n", "<br>"))
        self.title.setAccessibleName(text)
        if self.bias_label is not None:
            c = self.document.config
            if self.name == "W_O":
                self.bias_label.setText(rich_text(f"b_O  (d_model = {c.d_model})"))
            else:
                letter = self.name[-1]
                size = c.d_v if letter == "V" else c.d_k
                self.bias_label.setText(
                    rich_text(f"b_{self.model.head}^{letter}  ({size}, added to every row)")
                )
        if self.bias_table is not None and self.bias_model.exists():
            hint = self.bias_table.sizeHint()
            self.bias_table.setFixedHeight(hint.height())

    def bind_display(self, settings) -> None:
        """Follow a DisplaySettings' colour map (the tints follow the palette by themselves)."""
        bind_display(self, settings, ("colormap",))

    def set_colormap(self, name: str) -> None:
        """Tint the cells with another colour map (View ▸ Colormap)."""
        for model in (self.model, self.bias_model):
            if model is not None:
                model.set_colormap(name)

    def tables(self) -> list[MatrixTable]:
        return [t for t in (self.table, self.bias_table) if t is not None]
