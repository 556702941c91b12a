"""The tokens of a layer as a list model, for the query selector.

Filling a QComboBox item by item costs two Python→Qt calls per token (its text and its
tooltip): ~5 ms per fill at n = 2048, and a layer opening refilled it three times. A model
is replaced in one reset, and Qt asks only for the rows it shows.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from mha_gui.views.widgets.never_raises import never_raises


class TokenListModel(QAbstractListModel):
    """Row i shows token i's label; its tooltip says "token i"."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._tokens: list[str] = []

    def set_tokens(self, tokens) -> None:
        """Show these labels (nothing happens when they are the ones shown)."""
        tokens = list(tokens)
        if tokens == self._tokens:
            return
        self.beginResetModel()
        self._tokens = tokens
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._tokens)

    @never_raises()
    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ):
        row = index.row()
        if not index.isValid() or not 0 <= row < len(self._tokens):
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._tokens[row]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"token {row}"
        return None
