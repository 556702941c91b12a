"""Saving a large layer without freezing the window: File ▸ Save of a 2048-token layer
writes ~43 MB of JSON, about two seconds of work.

`BackgroundSave` is a part the Document owns (`document.saver`): it writes the session
to files, given a callable that returns the document's session, one that the document
calls when a file becomes its own (`adopt(path, clean)`) and one for every background
save that ends (`finished(path, error)`: the document's saveFinished). `start(path)`
takes a shared snapshot of the numbers (no copy: the document asks `reads` before an
edit and moves to a copy first) and writes it on a writer thread (row by row,
`write_session_gently`), one save at a time and in order. When the file is on disk the
document takes it as its own (its name, Open Recent) and counts as saved only if its
numbers are still those written: an edit made during the write keeps it modified; a
file written for a session since closed is not adopted. `save(path)` writes at once,
after the writes under way, so an older background write never lands on top of it.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from mha_gui.engine.layer.session import Session, save_session, write_session_gently

# Sessions holding more numbers than this are saved on the writer thread by File ▸ Save
# (n = 2048, d_model 768, 12 heads: 3.5 M numbers); smaller ones at once (a BERT-base
# layer on 128 tokens, 2.5 M numbers, writes in ~1 s: on the thread too).
BACKGROUND_SAVE_NUMBERS = 1_000_000


class _Written(QObject):
    """Carries a finished write from the writer thread to the UI thread: its own slot is
    the receiver, so the call is queued to the thread this object lives in."""

    done = Signal(object)  # (done callable, error or "")

    def __init__(self, parent: QObject):
        super().__init__(parent)
        self.done.connect(self._deliver)

    def _deliver(self, item) -> None:
        done, error = item
        done(error)


class BackgroundSave:
    """Writes the session to files, at once or on a writer thread, and lends out shared
    snapshots of the numbers (see the module docstring). `parent` owns the messenger
    that brings a finished write back to the UI thread."""

    def __init__(
        self,
        parent: QObject,
        session: Callable[[], Session],
        *,
        adopt: Callable[[Path, bool], object],
        finished: Callable[[str, str], object],
    ):
        self._session, self._adopt, self._finished = session, adopt, finished
        self._generation = 0  # sessions opened since: a write for an older one is not adopted
        self._writer: ThreadPoolExecutor | None = None
        self._writes: list[Future] = []
        self._written = _Written(parent)
        self._readers: list[Session] = []  # shared snapshots being written
        self._readers_lock = threading.Lock()

    # ------------------------------------------------------- shared snapshots ---
    def shared_snapshot(self) -> Session:
        """The session as it is now, for a writer thread, without copying its numbers: a
        new Session over the same arrays (tokens, view and mask are replaced whole on
        every change, never written in place). Until `release(snapshot)`, `reads` says
        so and the document moves to a copy of its arrays before its next edit. At
        n = 2048 a copy costs ~50 ms of page faults on the UI thread; most writes see no
        edit."""
        s = self._session()
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

    def reads(self, params) -> bool:
        """Does a shared snapshot read these parameter arrays?"""
        with self._readers_lock:
            return any(r.params is params for r in self._readers)

    # ----------------------------------------------------------------- writing ---
    @property
    def saving(self) -> bool:
        """Is a background save still being written?"""
        return any(not f.done() for f in self._writes)

    def wants_background(self) -> bool:
        """Is the session large enough to be written on the writer thread?"""
        params = self._session().params.as_dict().values()
        return sum(a.size for a in params) > BACKGROUND_SAVE_NUMBERS

    def opened(self) -> None:
        """The document started over on another session: writes under way are not its."""
        self._generation += 1

    def save(self, target: Path) -> None:
        """Write the session to `target` now (after the background writes under way)."""
        self.wait()
        save_session(self._session(), target)
        self._adopt(target, True)

    def start(self, target: Path) -> None:
        """Write the session to `target` on the writer thread."""
        snapshot = self.shared_snapshot()
        written, generation = self._written, self._generation

        def done(error: str) -> None:
            if not error and generation == self._generation:  # still the session written
                self._adopt(target, snapshot.same_contents(self._session()))
            self._finished(str(target), error)

        def write() -> None:
            try:
                write_session_gently(snapshot, target)
                error = ""
            except (OSError, ValueError) as exc:
                error = str(exc) or type(exc).__name__
            finally:
                self.release(snapshot)
            written.done.emit((done, error))

        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="mha-gui-save")
        self._writes = [f for f in self._writes if not f.done()]
        self._writes.append(self._writer.submit(write))

    def wait(self) -> None:
        """Until every background save asked for is on disk (before a synchronous save
        or closing the window)."""
        for future in self._writes:
            future.result()
        self._writes = []
