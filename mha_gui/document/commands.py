"""The undo commands of the Document: every user edit is one of these on its QUndoStack
(the Edit menu names them), and undoing restores exactly what was there.

Each command holds what it changes — the old and the new numbers, tokens, mask or
ablated heads, never more — and applies them through the document's public `write_*`
methods (`replace_session` for a whole new session). Only a change of dimensions,
randomize and reset replace the session: a mask cell or a head switch changes that
alone, and the document recomputes only what it touched.

The stack is an `UndoHistory`: QUndoStack.setUndoLimit counts commands, but one command
of an n = 4096, d_model = 768 layer holds two whole sessions (~90 MB) and one of a cell
a few bytes, so the history keeps its commands' bytes (`Command.nbytes`) within a budget
and drops the oldest beyond it, saying so (`trimmed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from mha_gui.engine.layer.session import Session, ViewState

if TYPE_CHECKING:
    from mha_gui.document.document import Document

# What the undo history may hold (the commands' own numbers), the newest step always kept.
UNDO_BUDGET_BYTES = 512 * 1024 * 1024


def held_bytes(value) -> int:
    """The bytes of the numbers `value` holds: arrays, sessions, and tuples or lists of
    them (tokens count their characters)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, Session):
        arrays = sum(int(a.nbytes) for a in value.params.as_dict().values())
        return arrays + held_bytes(value.mask) + held_bytes(value.tokens)
    if isinstance(value, tuple | list):
        return sum(held_bytes(v) for v in value)
    if isinstance(value, str):
        return len(value)
    return 0


class Command(QUndoCommand):
    """An undo step that holds `old` and `new` and applies one of them (`apply`). While
    its history is being rebuilt (UndoHistory._drop_oldest) it does nothing: the numbers
    it would write are those already there."""

    replaying = False  # set on the class while an UndoHistory rebuilds itself

    old: object
    new: object

    def apply(self, value) -> None:
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        return held_bytes(self.old) + held_bytes(self.new)

    def redo(self) -> None:
        if not Command.replaying:
            self.apply(self.new)

    def undo(self) -> None:
        if not Command.replaying:
            self.apply(self.old)


def command_bytes(command: QUndoCommand) -> int:
    """What one step of the stack holds: a command's numbers, a macro's children's."""
    own = command.nbytes if isinstance(command, Command) else 0
    return own + sum(command_bytes(command.child(i)) for i in range(command.childCount()))


def _copy_command(command: QUndoCommand, parent: QUndoCommand | None = None) -> QUndoCommand:
    """A new command doing what `command` does, sharing its numbers (the stack deletes
    the ones it clears)."""
    twin = type(command).__new__(type(command))
    QUndoCommand.__init__(twin, command.text(), parent)
    twin.__dict__.update(getattr(command, "__dict__", {}))
    for i in range(command.childCount()):
        _copy_command(command.child(i), twin)
    return twin


class UndoHistory(QUndoStack):
    """A QUndoStack whose commands hold at most `budget` bytes (the newest is kept
    whatever it holds). `trimmed(steps)` says how many of the oldest steps went, and
    `trimmed(0)` that the history starts again (cleared: a file opened)."""

    trimmed = Signal(int)

    def __init__(self, parent=None, budget: int = UNDO_BUDGET_BYTES):
        super().__init__(parent)
        self.budget = budget
        self._macros = 0  # open beginMacro calls: a step is trimmed only once whole

    def clear(self) -> None:
        super().clear()
        self.trimmed.emit(0)

    def history_bytes(self) -> int:
        return sum(command_bytes(self.command(i)) for i in range(self.count()))

    def push(self, command: QUndoCommand) -> None:
        super().push(command)
        if not self._macros:
            self._trim()

    def beginMacro(self, text: str) -> None:
        self._macros += 1
        super().beginMacro(text)

    def endMacro(self) -> None:
        super().endMacro()
        self._macros = max(0, self._macros - 1)
        if not self._macros:
            self._trim()

    def _trim(self) -> None:
        sizes = [command_bytes(self.command(i)) for i in range(self.count())]
        total, drop = sum(sizes), 0
        # only steps below the current one are dropped (a push has just removed the
        # ones above it; an endMacro may leave some to redo, which stay)
        while drop < self.index() - 1 and total > self.budget:
            total -= sizes[drop]
            drop += 1
        if drop:
            self._drop_oldest(drop)
            self.trimmed.emit(drop)

    def _drop_oldest(self, drop: int) -> None:
        """QUndoStack cannot take commands off its bottom: clear it and push again (doing
        nothing: the document already holds what they did) copies of the rest, with the
        current step and the saved ("clean") step where they were."""
        index, clean = self.index(), self.cleanIndex()
        kept = [_copy_command(self.command(i)) for i in range(drop, self.count())]
        Command.replaying = True
        try:
            super().clear()
            for at, command in enumerate(kept, start=drop):
                if at == clean:
                    self.setClean()
                super().push(command)
            if clean == self.count() + drop:
                self.setClean()
            elif clean < drop:
                self.resetClean()  # the saved state is no longer reachable
            self.setIndex(index - drop)
        finally:
            Command.replaying = False


class SetValuesCommand(Command):
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
        if self.merge_key is None or Command.replaying:
            return -1
        return self.MERGE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetValuesCommand) or other.merge_key != self.merge_key:
            return False
        if other.name != self.name or other.index != self.index:
            return False
        self.new = other.new
        return True

    def apply(self, value) -> None:
        self.doc.write_values(self.name, self.index, value)


class SetMaskCommand(Command):
    """Replace the extra block mask (None: no extra mask). Both masks are the command's
    own copies: the document's arrays may be overwritten later (a worker's buffers)."""

    def __init__(self, doc: Document, new: np.ndarray | None, text: str):
        super().__init__(text)
        self.doc = doc
        old = doc.mask
        self.old = None if old is None else np.array(old, dtype=bool)
        self.new = None if new is None else np.array(new, dtype=bool)

    def apply(self, value) -> None:
        self.doc.write_mask(value)


class SetAblatedCommand(Command):
    """Switch off exactly a set of query heads (the others on)."""

    def __init__(self, doc: Document, heads, text: str):
        super().__init__(text)
        self.doc = doc
        self.old = tuple(doc.config.ablate)
        self.new = tuple(sorted(heads))

    def apply(self, value) -> None:
        self.doc.write_ablation(value)


class ReplaceSessionCommand(Command):
    """Swap the whole session (dimension change, randomize, reset, tokens added)."""

    def __init__(self, doc: Document, new: Session, text: str):
        super().__init__(text)
        self.doc = doc
        self.old = doc.snapshot()
        self.new = new.copy()

    def apply(self, value) -> None:
        self.doc.replace_session(self._keeping_view(value))

    def _keeping_view(self, session: Session) -> Session:
        """Undo/redo change the numbers, not the stage, head or query being looked at. A
        copy: the document edits its session in place, this command keeps its own."""
        s = session.copy()
        v = self.doc.view
        s.view = ViewState(v.stage, min(v.head, s.config.h - 1), min(v.query, s.config.n - 1))
        return s


class SetTokensCommand(Command):
    def __init__(self, doc: Document, tokens: list[str], text: str):
        super().__init__(text)
        self.doc = doc
        self.old = doc.tokens
        self.new = list(tokens)

    def apply(self, value) -> None:
        self.doc.write_tokens(value)
