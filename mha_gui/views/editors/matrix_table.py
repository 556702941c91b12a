"""The table of one matrix: typing, copy and paste, scrubbing and nudging its cells.

Everything typed, pasted, scrubbed or nudged here goes through the document (which
pushes undo commands); the table only reads the array, through its MatrixModel.

- Type a number in a cell (C locale: `0.5`, `-1e-3`); bad text is refused and the
  reason is sent out with the `message` signal (the main window shows it in its status bar).
- Copy a selection as tab-separated text; paste a spreadsheet block at the current cell
  (one undo step; a block that does not fit changes nothing).
- Scrub: Alt+drag or middle-drag vertically on a cell changes it continuously, one undo
  step per drag (Shift for finer steps); Ctrl+wheel nudges the cell under the mouse.
"""

from __future__ import annotations

import itertools
import math

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QSizePolicy,
    QStyledItemDelegate,
    QTableView,
    QWidget,
)

from mha_gui.engine.layer.parameters import VALUE_LIMIT
from mha_gui.engine.layer.values import format_value, parse_block, to_tsv
from mha_gui.views.editors.label_header import LabelHeader
from mha_gui.views.editors.matrix_model import MatrixModel
from mha_gui.views.widgets.never_raises import never_raises

_drag_ids = itertools.count(1)
NUMBER_CHARS = set("0123456789.,+-−eE ")


class NumberValidator(QValidator):
    """C-locale number entry: refuses keystrokes that can never make a number.

    Anything made of digits, signs, a point and an exponent is let through; whether it
    really is a number within range is decided by the model, which says why if not.
    """

    def validate(self, text: str, pos: int):
        if all(ch in NUMBER_CHARS for ch in text):
            return QValidator.State.Acceptable
        return QValidator.State.Invalid


class NumberDelegate(QStyledItemDelegate):
    def createEditor(self, parent, option, index):
        editor = QLineEdit(parent)
        editor.setValidator(NumberValidator(editor))
        table, model = self.parent(), index.model()
        if isinstance(table, MatrixTable):
            where = model.cell_name(index.row(), index.column())
            editor.inputRejected.connect(
                lambda: table.message.emit(
                    f"{where}: only a number can be typed here (digits, '.', '-', 'e')"
                )
            )
        editor.setFrame(False)
        editor.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return editor

    def setEditorData(self, editor, index):
        editor.setText(str(index.data(Qt.ItemDataRole.EditRole)))
        editor.selectAll()

    def setModelData(self, editor, model, index):
        model.setData(index, editor.text(), Qt.ItemDataRole.EditRole)


class MatrixTable(QTableView):
    """A QTableView over a MatrixModel with copy, paste, scrub and Ctrl+wheel nudge."""

    message = Signal(str)

    def __init__(self, model: MatrixModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.matrix_model = model
        self.setObjectName(f"editor.{model.name}")
        # headers that size themselves from their widest labels (views/editors/label_header.py)
        self.setHorizontalHeader(LabelHeader(Qt.Orientation.Horizontal, self))
        self.setVerticalHeader(LabelHeader(Qt.Orientation.Vertical, self))
        self.setModel(model)
        self.horizontalHeader().follow(model)
        self.verticalHeader().follow(model)
        self.setItemDelegate(NumberDelegate(self))
        self.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.setAccessibleName(f"{model.name} matrix")
        self.setAccessibleDescription(
            "Arrow keys move between cells, F2 or typing edits one; Tab and Shift+Tab "
            "leave the table"
        )
        # Tab leaves the table instead of walking its cells (no keyboard trap: WCAG 2.1.2);
        # the arrows move between cells
        self.setTabKeyNavigation(False)
        model.rejected.connect(self.message)
        self.viewport().installEventFilter(self)
        self._scrub: tuple | None = None
        # Never taller or wider than the matrix: the dock's spare room stays empty.
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Maximum)
        self._fit_sections()
        # Columns fit the numbers; during a scrub they only widen, so they do not jump.
        model.modelReset.connect(self._fit_sections)
        model.dataChanged.connect(self._refit_columns)
        # A scroll bar appearing (narrow dock) makes room for itself instead of a row.
        self.horizontalScrollBar().rangeChanged.connect(self.updateGeometry)
        self.verticalScrollBar().rangeChanged.connect(self.updateGeometry)

    # ---------------------------------------------------------------- sizing --------
    def _column_width(self) -> int:
        """Wide enough for the longest number shown (small integers give narrow columns)."""
        fm = self.fontMetrics()
        a = self.matrix_model.slice()
        if a.size > 4096:
            chars = 6  # "-0.123": typical of random weights, and cheap to decide
        elif a.size == 0:
            chars = 3
        else:
            d = self.matrix_model.decimals
            chars = max(3, max(len(format_value(float(v), d)) for v in a.flat))
        return fm.horizontalAdvance("0" * chars) + 14

    def _fit_sections(self) -> None:
        fm = self.fontMetrics()
        self.horizontalHeader().setMinimumSectionSize(fm.horizontalAdvance("00") + 8)
        self.horizontalHeader().setDefaultSectionSize(self._column_width())
        self.verticalHeader().setDefaultSectionSize(fm.height() + 8)
        self.updateGeometry()

    def _refit_columns(self) -> None:
        """After an edit: fit the new numbers; while scrubbing, only ever widen."""
        header = self.horizontalHeader()
        width = self._column_width()
        current = header.defaultSectionSize()
        if width == current or (self._scrub is not None and width < current):
            return
        header.setDefaultSectionSize(width)
        self.updateGeometry()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_sections()

    def sizeHint(self) -> QSize:
        """Fit a small matrix exactly; cap a large one (it scrolls)."""
        rows, cols = self.model().rowCount(), self.model().columnCount()
        w = (
            self.verticalHeader().sizeHint().width()
            + cols * self.horizontalHeader().defaultSectionSize()
            + 2 * self.frameWidth()
        )
        h = (
            self.horizontalHeader().sizeHint().height()
            + rows * self.verticalHeader().defaultSectionSize()
            + 2 * self.frameWidth()
        )
        sb = self.style().pixelMetric(self.style().PixelMetric.PM_ScrollBarExtent)
        cap_w, cap_h = 560, 420
        if w > cap_w or self.horizontalScrollBar().maximum() > 0:
            h += sb
        if h > cap_h or self.verticalScrollBar().maximum() > 0:
            w += sb
        return QSize(min(w, cap_w), min(h, cap_h))

    def minimumSizeHint(self) -> QSize:
        hint = self.sizeHint()
        return QSize(min(hint.width(), 120), min(hint.height(), 80))

    # ---------------------------------------------------------- copy & paste --------
    def selected_block(self) -> tuple[int, int, int, int] | None:
        """(row0, col0, rows, cols): the bounding box of the selection, or None."""
        indexes = self.selectionModel().selectedIndexes() if self.selectionModel() else []
        if not indexes:
            current = self.currentIndex()
            if not current.isValid():
                return None
            return current.row(), current.column(), 1, 1
        rows = [i.row() for i in indexes]
        cols = [i.column() for i in indexes]
        return min(rows), min(cols), max(rows) - min(rows) + 1, max(cols) - min(cols) + 1

    def copy_selection(self) -> str | None:
        box = self.selected_block()
        if box is None:
            self.message.emit("Select cells to copy")
            return None
        r, c, nr, nc = box
        text = to_tsv(self.matrix_model.slice()[r : r + nr, c : c + nc])
        QGuiApplication.clipboard().setText(text)
        self.message.emit(f"Copied a {nr}×{nc} block of {self.matrix_model.name}")
        return text

    def paste_text(self, text: str) -> bool:
        """Write a tab-separated block at the current cell; False (and a message) if not."""
        model = self.matrix_model
        try:
            block = parse_block(text)
        except ValueError as exc:
            self.message.emit(f"Cannot paste into {model.name}: {exc}")
            return False
        box = self.selected_block()
        row, col = (box[0], box[1]) if box else (0, 0)
        try:
            model.document.set_block(model.name, model.block_head(), row, col, block)
        except ValueError as exc:
            self.message.emit(f"Cannot paste: {exc}")
            return False
        self.selectionModel().select(
            self._range(row, col, block.shape[0], block.shape[1]),
            self.selectionModel().SelectionFlag.ClearAndSelect,
        )
        self.message.emit(f"Pasted a {block.shape[0]}×{block.shape[1]} block into {model.name}")
        return True

    def _range(self, row, col, rows, cols):
        from PySide6.QtCore import QItemSelection

        m = self.model()
        return QItemSelection(m.index(row, col), m.index(row + rows - 1, col + cols - 1))

    def paste(self) -> bool:
        return self.paste_text(QGuiApplication.clipboard().text())

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            return
        if event.matches(QKeySequence.StandardKey.Paste):
            self.paste()
            return
        super().keyPressEvent(event)

    # --------------------------------------------------------- scrub & nudge --------
    def scrub_step(self) -> float:
        """Value change per pixel of drag: a hundredth of the matrix's order of magnitude."""
        peak = self.matrix_model.levels()[1]  # max |value|, cached by the model
        base = 10.0 ** math.floor(math.log10(peak)) if peak > 0 else 1.0
        return base / 100.0

    def _set_scrubbed(self, row: int, col: int, value: float, key) -> None:
        step = self.scrub_step()
        decimals = max(0, -math.floor(math.log10(step)) + 1)
        value = max(-VALUE_LIMIT, min(VALUE_LIMIT, round(value, decimals)))
        m = self.matrix_model
        m.document.set_value(m.name, m.array_index(row, col), value, merge_key=key)

    def begin_scrub(self, row: int, col: int, y: float) -> None:
        key = ("scrub", next(_drag_ids))
        self._scrub = (row, col, self.matrix_model.value(row, col), y, key)
        self.viewport().setCursor(Qt.CursorShape.SizeVerCursor)

    def move_scrub(self, y: float, fine: bool = False) -> None:
        if self._scrub is None:
            return
        row, col, start, y0, key = self._scrub
        step = self.scrub_step() * (0.1 if fine else 1.0)
        self._set_scrubbed(row, col, start + (y0 - y) * step, key)

    def end_scrub(self) -> None:
        if self._scrub is not None:
            self._scrub = None
            self.viewport().unsetCursor()
            self._refit_columns()

    def nudge(self, row: int, col: int, notches: float) -> None:
        """Ctrl+wheel: ten scrub steps per notch; successive nudges of a cell merge."""
        m = self.matrix_model
        key = ("wheel", id(self), m.name, m.array_index(row, col))
        value = m.value(row, col) + notches * 10 * self.scrub_step()
        self._set_scrubbed(row, col, value, key)

    @never_raises(default=False)
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is not self.viewport():
            return False
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress:
            alt = event.modifiers() & Qt.KeyboardModifier.AltModifier
            button = event.button()
            if button == Qt.MouseButton.MiddleButton or (
                button == Qt.MouseButton.LeftButton and alt
            ):
                index = self.indexAt(event.position().toPoint())
                if index.isValid():
                    self.setCurrentIndex(index)
                    self.begin_scrub(index.row(), index.column(), event.position().y())
                    return True
        elif kind == QEvent.Type.MouseMove and self._scrub is not None:
            fine = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.move_scrub(event.position().y(), fine)
            return True
        elif kind == QEvent.Type.MouseButtonRelease and self._scrub is not None:
            self.end_scrub()
            return True
        elif kind == QEvent.Type.Wheel and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            index = self.indexAt(event.position().toPoint())
            if index.isValid():
                self.nudge(index.row(), index.column(), event.angleDelta().y() / 120.0)
            return True
        return False
