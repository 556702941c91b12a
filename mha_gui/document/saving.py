"""Saving a large layer without freezing the window: File ▸ Save of a 2048-token layer
writes ~43 MB of JSON, about two seconds of work.

A mixin of Document. `start_save(path)` takes a shared snapshot of the numbers (no copy:
an edit made during the write moves the document to a copy first) and writes it on a
writer thread (row by row, `write_session_gently`), one save at a time and in order;
when the file is on disk, `saveFinished(path, error)` comes on the UI thread. The
document then takes the file as its own (its name, Open Recent) and counts as saved
only if its numbers are still those written: an edit made during the write keeps it
modified. A synchronous `save()` waits for the writes under way first, so an older
background write never lands on top of it.
"""

from __future__ import annotations

import copy
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from mha_gui.engine.session import Session, write_session_gently

# Sessions holding more numbers than this are saved on the writer thread by File ▸ Save
# (n = 2048, d_model 768, 12 heads: 3.5 M numbers); smaller ones at once (a BERT-base
# layer on 128 tokens, 2.5 M numbers, writes in ~1 s: on the thread too).
BACKGROUND_SAVE_NUMBERS = 1_000_000


class _Written(QObject):
    """Carries a finished write from the writer thread to the UI thread (queued)."""

    done = Signal(object)  # (path, snapshot, the document's opened_count, error or "")


class BackgroundSave:
    """The background saving of Document (which provides session, path, undo_stack,
    preset_name, opened_count — how many sessions it has opened — and the signals
    saveFinished and fileStateChanged)."""

    def _init_saving(self) -> None:
        self._writer: ThreadPoolExecutor | None = None
        self._writes: list[Future] = []
        self._written = _Written(self)
        self._written.done.connect(self._write_done)
        self._readers: list[Session] = []  # shared snapshots being written
        self._readers_lock = threading.Lock()

    # ------------------------------------------------------- shared snapshots ---
    def shared_snapshot(self) -> Session:
        """The session as it is now, for a writer thread, without copying its numbers: a
        new Session over the same arrays (tokens, view and mask are replaced whole on
        every change, never written in place). Until `release(snapshot)`, the document
        moves to a copy of its arrays before its next edit (`_before_write`). At n = 2048
        a copy costs ~50 ms of page faults on the UI thread; most writes see no edit."""
        s = self.session
        snapshot = copy.copy(s)
        snapshot.tokens = list(s.tokens)
        snapshot.view = s.view.copy()
        with self._readers_lock:
            self._readers.append(snapshot)
        return snapshot

    def release(self, snapshot: Session) -> None:
        """A shared snapshot is written (any thread may say so)."""
        with self._readers_lock:
            self._readers = [r for r in self._readers if r is not snapshot]

    def _numbers_read_elsewhere(self, params=None) -> bool:
        """Does a shared snapshot read these parameter arrays (default: the document's)?"""
        params = self.session.params if params is None else params
        with self._readers_lock:
            return any(r.params is params for r in self._readers)

    def save_target(self, path=None) -> Path:
        """Where a save writes: `path`, or the session's own file."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("no file name: use Save As")
        return target

    @property
    def saving(self) -> bool:
        """Is a background save still being written?"""
        return any(not f.done() for f in self._writes)

    def wants_background_save(self) -> bool:
        return sum(a.size for a in self.session.params.as_dict().values()) > (
            BACKGROUND_SAVE_NUMBERS
        )

    def start_save(self, path=None) -> Path:
        """Write the session to `path` (default: its file) on the writer thread; returns
        the path. Raises ValueError at once if there is no file name."""
        target = self.save_target(path)
        snapshot = self.shared_snapshot()
        written, opened = self._written, self.opened_count

        def write() -> None:
            try:
                write_session_gently(snapshot, target)
                error = ""
            except (OSError, ValueError) as exc:
                error = str(exc) or type(exc).__name__
            finally:
                self.release(snapshot)
            written.done.emit((target, snapshot, opened, error))

        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="mha-gui-save")
        self._writes = [f for f in self._writes if not f.done()]
        self._writes.append(self._writer.submit(write))
        return target

    def wait_for_saves(self) -> None:
        """Until every background save asked for is on disk (before a synchronous save
        or closing the window)."""
        for future in self._writes:
            future.result()
        self._writes = []

    def _write_done(self, item) -> None:
        target, snapshot, opened, error = item
        if not error and opened == self.opened_count:  # still the session it wrote
            self.path = target
            self.preset_name = None
            if snapshot.same_contents(self.session):
                self.undo_stack.setClean()
            self.fileStateChanged.emit()
        self.saveFinished.emit(str(target), error)
