"""The undo commands of the Document: every user edit is one of these on its QUndoStack
(the Edit menu names them), and undoing restores exactly what was there."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtGui import QUndoCommand

from mha_gui.engine.session import Session, ViewState

if TYPE_CHECKING:
    from mha_gui.document.document import Document


class SetValuesCommand(QUndoCommand):
    """Write a block of one matrix. Successive scrub steps on one cell merge into one."""

    MERGE_ID = 0x4D4841

    def __init__(
        self, doc: Document, name: str, index: tuple, new: np.ndarray, text: str, merge_key=None
    ):
        super().__init__(text)
        self.doc, self.name, self.index = doc, name, index
        self.old = np.array(doc.session.params.as_dict()[name][index], copy=True)
        self.new = np.array(new, dtype=np.float64, copy=True)
        self.merge_key = merge_key

    def id(self) -> int:
        return self.MERGE_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetValuesCommand) or other.merge_key != self.merge_key:
            return False
        if other.name != self.name or other.index != self.index:
            return False
        self.new = other.new
        return True

    def redo(self) -> None:
        self.doc._write(self.name, self.index, self.new)

    def undo(self) -> None:
        self.doc._write(self.name, self.index, self.old)


class ReplaceSessionCommand(QUndoCommand):
    """Swap the whole session (dimension change, randomize, reset, tokens added)."""

    def __init__(self, doc: Document, new: Session, text: str):
        super().__init__(text)
        self.doc = doc
        self.old = doc.session.copy(trusted=True)
        self.new = new.copy()

    def redo(self) -> None:
        self.doc._replace(self._keeping_view(self.new))

    def undo(self) -> None:
        self.doc._replace(self._keeping_view(self.old))

    def _keeping_view(self, session: Session) -> Session:
        """Undo/redo change the numbers, not the stage, head or query being looked at."""
        s = session.copy()
        v = self.doc.view
        s.view = ViewState(v.stage, min(v.head, s.config.h - 1), min(v.query, s.config.n - 1))
        return s


class SetTokensCommand(QUndoCommand):
    def __init__(self, doc: Document, tokens: list[str], text: str):
        super().__init__(text)
        self.doc = doc
        self.old = list(doc.session.tokens)
        self.new = list(tokens)

    def redo(self) -> None:
        self.doc._set_tokens(self.new)

    def undo(self) -> None:
        self.doc._set_tokens(self.old)
