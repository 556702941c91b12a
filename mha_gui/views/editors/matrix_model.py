"""Table models over the document's matrices: one QAbstractTableModel per matrix.

A model never writes an array. `setData` parses and checks the text (once; a refusal is
`rejected` with its reason) and hands the number to `Document.set_value`, which pushes an
undo command; the document's signals then tell the model what to repaint (one
`dataChanged` per change of the matrix, never per cell).

Per-head parameters (W_Q, W_K, W_V and their biases) show one head — or one K/V group —
at a time, chosen with `set_head`. Biases are shown as a single row under their weight:
b_i^Q is the row added to every row of X W_i^Q.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette

from mha_gui import theme
from mha_gui.document.cells import HEADED, KV, cell_index, is_bias
from mha_gui.engine.layer.values import format_value, parse_value
from mha_gui.views.widgets.never_raises import never_raises
from mha_gui.views.widgets.rich_text import tooltip_html

# Alpha of the value tint: light enough that black or white text stays readable on it.
TINT_ALPHA = 110
# On a dark base: how far toward the colour map's saturated end the largest value goes.
DARK_TINT_STRENGTH = 0.85
_NO_PARENT = QModelIndex()  # a table has no parent index (a shared default, never changed)


class MatrixModel(QAbstractTableModel):
    """The numbers of one matrix (or one head's slice of it) as a table.

    `rejected(reason)` is emitted when typed text is refused; the view shows the reason.
    """

    rejected = Signal(str)

    def __init__(self, document, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.name = name
        self.head = 0
        self.decimals = 3
        self.colormap = theme.DEFAULT_COLORMAP
        self._levels: tuple[float, float] | None = None  # over the whole matrix
        self._shown: np.ndarray | None = None  # the slice as last shown (what changed?)
        self._shape: tuple[int, int] | None = None
        self._bold = QFont()
        self._bold.setBold(True)
        document.valuesChanged.connect(self._on_values)
        document.shapeChanged.connect(self._on_shape)
        document.tokensChanged.connect(self._on_tokens)
        document.viewChanged.connect(self._on_view)
        self._last_view_head = document.view.head

    # ------------------------------------------------------------------ shape -------
    @property
    def is_headed(self) -> bool:
        return self.name in HEADED

    @property
    def is_bias(self) -> bool:
        return is_bias(self.name)

    def exists(self) -> bool:
        """False when this is a bias and biases are off in the config."""
        return self.name in self.document.config.parameter_shapes()

    def head_count(self) -> int:
        """How many slices the selector offers (h, h_kv, or 1 for unheaded matrices)."""
        if not self.is_headed:
            return 1
        c = self.document.config
        return c.h_kv if self.name in KV else c.h

    def set_head(self, head: int) -> None:
        head = max(0, min(int(head), self.head_count() - 1))
        if head == self.head:
            return
        self.head = head
        self._shown = None
        if self.rowCount() and self.columnCount():
            self.dataChanged.emit(
                self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1)
            )
        # no headerDataChanged: row labels do not depend on the head, and every such
        # signal makes the header re-measure its sections (hundreds at d_model=768)

    def slice(self) -> np.ndarray:
        """The 2-D block on screen (read-only): one head for per-head parameters."""
        if not self.exists():
            return np.zeros((0, 0))
        a = self.document.matrix(self.name)
        if self.is_headed:
            a = a[min(self.head, a.shape[0] - 1)]
        return a[None, :] if a.ndim == 1 else a

    def _size(self) -> tuple[int, int]:
        """(rows, columns), cached: Qt asks for them thousands of times per repaint."""
        if self._shape is None:
            self._shape = self.slice().shape
        return self._shape

    def array_index(self, row: int, col: int) -> tuple:
        """The document index of a table cell."""
        return cell_index(self.name, self.head, row, col)

    def block_head(self) -> int | None:
        """The `head` argument of `Document.set_block` for this model."""
        return self.head if self.is_headed else None

    def rowCount(self, parent: QModelIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else self._size()[0]

    def columnCount(self, parent: QModelIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else self._size()[1]

    # ------------------------------------------------------------------- data -------
    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def value(self, row: int, col: int) -> float:
        a = self.document.matrix(self.name)
        if self.is_headed:
            a = a[min(self.head, a.shape[0] - 1)]
        return float(a[col] if a.ndim == 1 else a[row, col])

    def levels(self) -> tuple[float, float]:
        """Tint levels, ±max|value| over the whole matrix (all heads), cached per change."""
        if self._levels is None:
            full = self.document.matrix(self.name)
            hi = float(full.max()) if full.size else 0.0
            lo = float(full.min()) if full.size else 0.0
            if math.isfinite(hi) and math.isfinite(lo):  # two reductions, no copies
                self._levels = theme.symmetric_levels(max(hi, -lo))
            else:
                self._levels = theme.levels_for("values", full)
        return self._levels

    def _tint_index(self, row: int, col: int) -> int:
        """Which entry of the colour map tints a cell (the one `theme.colors_for` picks)."""
        size = len(theme.colormap_for("values", self.colormap))
        return int(theme.colour_index(self.value(row, col), self.levels(), size))

    def _tint_tables(self) -> tuple[list[tuple], list[tuple]]:
        base = QGuiApplication.palette().color(QPalette.ColorRole.Base)
        return tint_tables(self.colormap, (base.red(), base.green(), base.blue()))

    def set_colormap(self, name: str) -> None:
        """The colour map of the value tints (View ▸ Colormap)."""
        if theme.check_colormap(name) == self.colormap:
            return
        self.colormap = name
        if self.rowCount() and self.columnCount():
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(self.rowCount() - 1, self.columnCount() - 1),
                [Qt.ItemDataRole.BackgroundRole],
            )

    def inspected_rows(self) -> range:
        """Rows of W_O that belong to the inspected head (emphasised)."""
        if self.name != "W_O":
            return range(0)
        c = self.document.config
        h = min(self.document.view.head, c.h - 1)
        return range(h * c.d_v, (h + 1) * c.d_v)

    @never_raises()
    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return format_value(self.value(r, c), self.decimals)
        if role == Qt.ItemDataRole.EditRole:
            return format_value(self.value(r, c), 10)
        if role == Qt.ItemDataRole.BackgroundRole:
            return QColor(*self._tint_tables()[0][self._tint_index(r, c)])
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(*self._tint_tables()[1][self._tint_index(r, c)])
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and r in self.inspected_rows():
            return self._bold
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip_html(f"{self.cell_name(r, c)} = {self.value(r, c)!r}")
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{self.cell_name(r, c)} = {format_value(self.value(r, c), 6)}"
        return None

    def cell_name(self, row: int, col: int) -> str:
        if self.is_headed:
            symbol = "g" if self.name in KV and self.document.config.variant != "MHA" else ""
            head = f"{symbol}{self.head}" if symbol else str(self.head)
            if self.is_bias:
                return f"{self.name}[{head}][{col}]"
            return f"{self.name}[{head}][{row}, {col}]"
        if self.name == "b_O":
            return f"b_O[{col}]"
        if self.name == "X":
            return f"X[{row}, {col}]  (token {self.document.tokens[row]!r})"
        return f"{self.name}[{row}, {col}]"

    def setData(self, index: QModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        try:
            number = parse_value(value)  # parsed once; the document gets the number
        except ValueError as reason:
            self.rejected.emit(f"{self.cell_name(index.row(), index.column())}: {reason}")
            return False
        return self.document.set_value(
            self.name, self.array_index(index.row(), index.column()), number
        )

    # ---------------------------------------------------------------- headers -------
    def row_label(self, row: int) -> str:
        c = self.document.config
        if self.name == "X":
            tokens = self.document.tokens
            return tokens[row] if row < len(tokens) else str(row)
        if self.name == "W_O":
            return f"h{row // c.d_v}·{row % c.d_v}"
        if self.is_bias:
            return self.name
        return str(row)

    @never_raises()
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ):
        vertical = orientation == Qt.Orientation.Vertical
        if role == Qt.ItemDataRole.DisplayRole:
            return self.row_label(section) if vertical else str(section)
        if role == Qt.ItemDataRole.ToolTipRole and vertical:
            if self.name == "X":
                return tooltip_html(
                    f"token {section}: {self.row_label(section)!r} (double-click to rename)"
                )
            if self.name == "W_O":
                c = self.document.config
                return f"row {section} of W_O: head {section // c.d_v}, component {section % c.d_v}"
        if self.name == "W_O" and vertical and 0 <= section < self.rowCount():
            head = section // self.document.config.d_v
            if role == Qt.ItemDataRole.BackgroundRole:
                color = QColor(theme.head_color(head))
                color.setAlpha(200 if section in self.inspected_rows() else 90)
                return color
            if role == Qt.ItemDataRole.FontRole and section in self.inspected_rows():
                return self._bold
        return None

    # --------------------------------------------------------- document signals -----
    def _on_values(self, name: str) -> None:
        """Repaint only the cells that changed (a scrub step: one cell), unless the levels
        moved and every tint with them."""
        if name != self.name or not (self.rowCount() and self.columnCount()):
            return
        old_levels, shown = self._levels, self._shown
        self._levels = None
        now = self.slice()
        if shown is None or shown.shape != now.shape:
            self._shown = now.copy()
            self._all_changed()
            return
        # what is shown is kept in the same buffer: a fresh 2048 × 768 copy per editor
        # cost ~8 ms of page faults each time a layer was opened
        rows, cols = np.nonzero(shown != now)
        np.copyto(shown, now)
        if self.levels() != old_levels:
            self._all_changed()
        elif rows.size:
            self.dataChanged.emit(
                self.index(int(rows.min()), int(cols.min())),
                self.index(int(rows.max()), int(cols.max())),
            )

    def _all_changed(self) -> None:
        self.dataChanged.emit(
            self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1)
        )

    def _on_shape(self) -> None:
        self.beginResetModel()
        self._levels = self._shown = self._shape = None
        self.head = max(0, min(self.head, self.head_count() - 1))
        self.endResetModel()

    def _on_tokens(self) -> None:
        if self.name == "X" and self.rowCount():
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, self.rowCount() - 1)

    def _on_view(self) -> None:
        head, before = self.document.view.head, self._last_view_head
        if head == before:
            return
        self._last_view_head = head
        if self.name == "W_O" and self.rowCount():
            # the rows from the head that loses the emphasis to the one that gains it,
            # in one signal each (every headerDataChanged re-measures the header)
            d_v, last = self.document.config.d_v, self.rowCount() - 1
            first = min(min(before, head) * d_v, last)
            end = min((max(before, head) + 1) * d_v - 1, last)
            self.headerDataChanged.emit(Qt.Orientation.Vertical, first, end)
            self.dataChanged.emit(self.index(first, 0), self.index(end, self.columnCount() - 1))


@lru_cache(maxsize=16)
def tint_tables(colormap: str, base: tuple[int, int, int]) -> tuple[list[tuple], list[tuple]]:
    """(tints, text colours) as RGBA for each entry of the colour map, over a table's base.

    On a light base the tint is the colour map's entry at TINT_ALPHA. On a dark base
    that would wash the pale middle of a diverging map into grey and its pale ends into
    brown: there a cell is opaque, the base mixed toward the colour map's end on the
    value's side in proportion to |value| — zero stays the base, the extremes are the
    map's own saturated colours. (A map with a dark middle, greyscale, is shown as is.)
    The text is black or white, whichever reads better on what is painted. Computed
    once per colour map and theme, so painting a cell costs a table look-up.
    """
    lut = theme.colormap_for("values", colormap).astype(float)
    base_rgb = np.asarray(base, float)
    dark = theme.contrast_ratio(base_rgb, (0, 0, 0)) < theme.contrast_ratio(base_rgb, (255,) * 3)
    top = len(lut) - 1
    pale_middle = theme.contrast_ratio(lut[top // 2], (0, 0, 0)) > 10
    tints, texts = [], []
    for i, rgb in enumerate(lut):
        if not dark:
            a = TINT_ALPHA / 255.0
            shown = (1 - a) * base_rgb + a * rgb
            tint = (*(int(c) for c in rgb), TINT_ALPHA)
        else:
            if pale_middle:
                side = (i - top / 2) / (top / 2)  # −1 … 1
                end = lut[0] if side < 0 else lut[top]
                shown = base_rgb + DARK_TINT_STRENGTH * abs(side) * (end - base_rgb)
            else:
                shown = rgb
            tint = (*(int(round(c)) for c in shown), 255)
        black = theme.contrast_ratio(shown, (0, 0, 0))
        white = theme.contrast_ratio(shown, (255, 255, 255))
        tints.append(tint)
        texts.append((0, 0, 0, 255) if black >= white else (255, 255, 255, 255))
    return tints, texts
