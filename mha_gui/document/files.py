"""Where the document's session comes from and goes to: opening sessions, files and
presets (each a fresh start: the undo history is cleared), and where a save writes.

`Files` is a part the Document owns (`document.files`); the document's `open_*`,
`save*` and `start_save` methods are its, under the names the window uses. It changes
the document only through what the document gives every part: `replace_session`, the
undo stack, and the fields that say where the session came from (`path`,
`preset_name`, `model_origin`, `opened_count`). The writing itself is `document.saver`'s
(saving.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mha_gui.document.later import while_turning
from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.layer.session import Session, load_session

if TYPE_CHECKING:
    from mha_gui.document.document import Document

# Session files larger than this are read on a thread while the window turns (a 2048-token
# layer's 63 MB: ~0.2 s); smaller ones at once.
READ_ON_A_THREAD_BYTES = 4 * 1024 * 1024


class Files:
    """Opens sessions into `document` and says where its saves write (module docstring)."""

    def __init__(self, document: Document):
        self._doc = document

    def open_session(
        self,
        session: Session,
        path: Path | None = None,
        preset: str | None = None,
        origin=None,
        *,
        owned: bool = False,
    ) -> None:
        """Start over on another session: a new file, so the undo history is cleared.
        `origin`: the ModelOrigin of a real model's layer (File ▸ Open model…).
        `owned=True`: the caller hands `session` over (made for this call, e.g. just read
        from a file, and kept by nobody else): it is checked again but not copied, which
        at n = 2048 spares the window a 28 MB copy."""
        # (a caller's n = 2048 session costs ~80 ms of page faults to copy here; copied on
        # a thread while the event loop turned, the open measured 415–435 ms stalls in
        # two of three runs against 61–77 ms: the copy stays on this thread)
        fresh = session.checked() if owned else session.copy()  # refused: nothing changes
        self._start_over(fresh, path, preset, origin)

    def open_file(self, path) -> None:
        """Open a session file (ValueError, nothing changed, if it cannot be). A large
        file is read and checked on a thread while the window keeps painting."""
        try:
            large = Path(path).stat().st_size > READ_ON_A_THREAD_BYTES
        except OSError:
            large = False  # load_session says why
        session = while_turning(lambda: load_session(path)) if large else load_session(path)
        self._start_over(session, Path(path), None, None)  # load_session checked it

    def open_preset(self, name: str) -> None:
        self.open_session(load_preset(name), preset=name, owned=True)

    def _start_over(self, fresh: Session, path, preset, origin) -> None:
        """Open `fresh`, a checked session the document may keep and edit."""
        doc = self._doc
        doc.opened_count += 1
        doc.saver.opened()
        doc.model_origin = origin
        doc.undo_stack.clear()
        doc.replace_session(fresh)
        doc.path = Path(path) if path is not None else None
        doc.preset_name = preset
        doc.undo_stack.setClean()
        doc.fileStateChanged.emit()

    def save_target(self, path=None) -> Path:
        """Where a save writes: `path`, or the session's own file."""
        target = Path(path) if path is not None else self._doc.path
        if target is None:
            raise ValueError("no file name: use Save As")
        return target

    def save(self, path=None) -> Path:
        """Write the session to `path` (default: its file) now; returns the path."""
        target = self.save_target(path)
        self._doc.saver.save(target)
        return target

    def start_save(self, path=None) -> Path:
        """Write the session to `path` (default: its file) on the writer thread; returns
        the path. `saveFinished(path, error)` comes when it is on disk; the document then
        counts as saved only if its numbers are still those written. Raises ValueError at
        once if there is no file name."""
        target = self.save_target(path)
        self._doc.saver.start(target)
        return target

    def saved_as(self, target: Path, clean: bool) -> None:
        """The file on disk is the document's now (clean: with its current numbers)."""
        doc = self._doc
        doc.path = target
        doc.preset_name = None
        if clean:
            doc.undo_stack.setClean()
        doc.fileStateChanged.emit()
