"""The undo commands of the Document: every user edit is one of these on its QUndoStack
(the Edit menu names them), and undoing restores exactly what was there.

Each command holds what it changes — the old and the new numbers, tokens, mask or
ablated heads, never more — and applies them through the document's public `write_*`
methods (`replace_session` for a whole new session). Only a change of dimensions,
randomize and reset replace the session: a mask cell or a head switch changes that
alone, and the document recomputes only what it touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtGui import QUndoCommand

from mha_gui.engine.layer.session import Session, ViewState

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
        self.old = doc.values_at(name, index)
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
        self.doc.write_values(self.name, self.index, self.new)

    def undo(self) -> None:
        self.doc.write_values(self.name, self.index, self.old)


class SetMaskCommand(QUndoCommand):
    """Replace the extra block mask (None: no extra mask). Both masks are the command's
    own copies: the document's arrays may be overwritten later (a worker's buffers)."""

    def __init__(self, doc: Document, new: np.ndarray | None, text: str):
        super().__init__(text)
        self.doc = doc
        old = doc.mask
        self.old = None if old is None else np.array(old, dtype=bool)
        self.new = None if new is None else np.array(new, dtype=bool)

    def redo(self) -> None:
        self.doc.write_mask(self.new)

    def undo(self) -> None:
        self.doc.write_mask(self.old)


class SetAblatedCommand(QUndoCommand):
    """Switch off exactly a set of query heads (the others on)."""

    def __init__(self, doc: Document, heads, text: str):
        super().__init__(text)
        self.doc = doc
        self.old = tuple(doc.config.ablate)
        self.new = tuple(sorted(heads))

    def redo(self) -> None:
        self.doc.write_ablation(self.new)

    def undo(self) -> None:
        self.doc.write_ablation(self.old)


class ReplaceSessionCommand(QUndoCommand):
    """Swap the whole session (dimension change, randomize, reset, tokens added)."""

    def __init__(self, doc: Document, new: Session, text: str):
        super().__init__(text)
        self.doc = doc
        self.old = doc.snapshot()
        self.new = new.copy()

    def redo(self) -> None:
        self.doc.replace_session(self._keeping_view(self.new))

    def undo(self) -> None:
        self.doc.replace_session(self._keeping_view(self.old))

    def _keeping_view(self, session: Session) -> Session:
        """Undo/redo change the numbers, not the stage, head or query being looked at. A
        copy: the document edits its session in place, this command keeps its own."""
        s = session.copy()
        v = self.doc.view
        s.view = ViewState(v.stage, min(v.head, s.config.h - 1), min(v.query, s.config.n - 1))
        return s


class SetTokensCommand(QUndoCommand):
    def __init__(self, doc: Document, tokens: list[str], text: str):
        super().__init__(text)
        self.doc = doc
        self.old = doc.tokens
        self.new = list(tokens)

    def redo(self) -> None:
        self.doc.write_tokens(self.new)

    def undo(self) -> None:
        self.doc.write_tokens(self.old)
