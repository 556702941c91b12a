"""Autosave and crash recovery: unsaved work is written beside the settings
AUTOSAVE_MS after the last edit (debounced: every edit restarts the countdown), and
offered back after a crash.

The numbers are not copied: the writer reads the document's arrays through a shared
snapshot, and an edit made meanwhile moves the document to a copy first (so a 2048-token
layer's autosave costs the window nothing unless it is edited during the ~2 s write).
They are serialised and written on a worker thread, row by row so that the window keeps the
interpreter's lock between rows; writes go to a temporary file renamed into place, one
at a time and in order, so a crash mid-write leaves the previous autosave whole.

Files — one per running copy of the app, each remembering its original file:

    <settings folder>/mha-gui-autosave-<pid>.json     the session (a normal session file)
    <settings folder>/mha-gui-autosave-<pid>.origin   {"path": "/where/it/came/from.json"}

The process id in the name keeps two running copies from overwriting each other's work.
After a crash, the newest autosave whose process is no longer running is "orphaned" and
offered back, with its original path (so Save writes where the user expects). An
autosave of this very process id also counts as orphaned: it can only come from an
earlier run whose id the system has reused.

The file functions need no Qt; `Recovery(window, document, say, recovered)` is the main
window's part (the countdown, the writer thread and the prompt).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QDateTime, QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox

from mha_gui.engine.layer.session import load_session, write_session_gently
from mha_gui.views.settings.display_settings import qsettings

AUTOSAVE_MS = 3000  # after the last edit
PREFIX = "mha-gui-autosave"
LEGACY_NAME = f"{PREFIX}.json"  # before per-process names: treated as orphaned
_NAME = re.compile(rf"^{PREFIX}-(\d+)\.json$")


@dataclass(frozen=True)
class Autosave:
    data: Path  # the session file
    pid: int | None  # None for the legacy single file
    origin: Path | None  # the file the work was opened from / saved to, if any

    @property
    def sidecar(self) -> Path:
        return self.data.with_suffix(".origin")

    def remove(self) -> None:
        for p in (self.data, self.sidecar):
            with contextlib.suppress(OSError):
                p.unlink(missing_ok=True)


def data_path(folder: Path, pid: int | None = None) -> Path:
    return Path(folder) / f"{PREFIX}-{os.getpid() if pid is None else pid}.json"


def write_origin(data: Path, origin: Path | None) -> None:
    """Record beside the autosave which file the work belongs to (None: never saved)."""
    text = json.dumps({"path": str(origin) if origin is not None else None})
    Path(data).with_suffix(".origin").write_text(text, encoding="utf-8")


def read_origin(data: Path) -> Path | None:
    try:
        value = json.loads(Path(data).with_suffix(".origin").read_text(encoding="utf-8"))
        path = value.get("path") if isinstance(value, dict) else None
    except (OSError, ValueError):
        return None
    return Path(path) if isinstance(path, str) and path else None


def pid_running(pid: int) -> bool:
    """True if a process with this id exists (another copy of the app, most likely)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        try:
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        finally:
            kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


def orphaned(folder: Path) -> list[Autosave]:
    """Autosaves nobody running owns, newest first."""
    folder = Path(folder)
    found: list[tuple[float, Autosave]] = []
    if not folder.is_dir():
        return []
    for data in folder.glob(f"{PREFIX}*.json"):
        match = _NAME.match(data.name)
        if match:
            pid = int(match.group(1))
            if pid != os.getpid() and pid_running(pid):
                continue  # another running copy's work in progress
        elif data.name == LEGACY_NAME:
            pid = None
        else:
            continue
        try:
            mtime = data.stat().st_mtime
        except OSError:
            continue
        found.append((mtime, Autosave(data, pid, read_origin(data))))
    found.sort(key=lambda item: item[0], reverse=True)
    return [a for _, a in found]


class _Reporter(QObject):
    failed = Signal(str)  # from the writer thread, queued to the window


def autosave_folder() -> Path:
    """Beside the settings file (so tests, which move the settings, never touch home)."""
    return Path(qsettings().fileName()).parent


def autosave_path() -> Path:
    """This running copy's autosave (its process id is in the name)."""
    return data_path(autosave_folder())


class Recovery:
    """Autosave and crash recovery for one window: `start_autosave()` once it is built,
    `stop_autosave()` on a clean close, `autosave()` and `offer_recovery()`.

    `window` parents the timer and the prompt, `say(text)` is its status bar and
    `recovered()` is called once recovered work is the document's (the title shows it)."""

    def __init__(self, window, document, say, recovered):
        self.window = window
        self.document = document
        self.say = say
        self.recovered = recovered
        self.timer: QTimer | None = None  # the countdown, made by start_autosave
        self._autosave_writer: ThreadPoolExecutor | None = None
        self._autosave_pending: Future | None = None

    def start_autosave(self) -> None:
        # one countdown, restarted by every edit, undo and redo: written AUTOSAVE_MS
        # after the last one
        self.timer = QTimer(self.window)
        self.timer.setSingleShot(True)
        self.timer.setInterval(AUTOSAVE_MS)
        self.timer.timeout.connect(self.autosave_in_background)
        self.document.undo_stack.indexChanged.connect(lambda _index: self.timer.start())
        self.document.fileStateChanged.connect(self._drop_autosave_if_clean)
        self._autosave_writer = ThreadPoolExecutor(1, thread_name_prefix="mha-gui-autosave")
        self._autosave_reporter = _Reporter(self.window)
        self._autosave_reporter.failed.connect(self.say)

    def stop_autosave(self) -> None:
        """The work is saved or discarded: no more autosaves, and this one goes."""
        self.timer.stop()
        self._autosave_writer.shutdown(wait=True)  # a write under way ends first
        self._drop_autosave()

    def autosave_in_background(self) -> Future | None:
        """Copy the numbers now and write them on the autosave thread (the window goes on).

        Writes run one at a time, in order; the returned future ends when this one is
        on disk."""
        if not self.document.is_modified:
            return None
        doc = self.document
        snapshot, origin, path = doc.shared_snapshot(), doc.path, autosave_path()
        reporter = self._autosave_reporter

        def write() -> Path | None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_origin(path, origin)
                return write_session_gently(snapshot, path)
            except (OSError, ValueError) as exc:
                reporter.failed.emit(f"Autosave failed: {exc}")
                return None
            finally:
                doc.release(snapshot)

        try:
            self._autosave_pending = self._autosave_writer.submit(write)
        except RuntimeError:  # shut down: the window is closing
            doc.release(snapshot)
            return None
        return self._autosave_pending

    def wait_for_autosave(self) -> None:
        """Until the autosave thread has written everything asked of it (tests, close)."""
        pending = self._autosave_pending
        if pending is not None:
            pending.result()

    def autosave(self) -> Path | None:
        """Write unsaved work beside the settings now (waiting for it), so a crash loses
        at most a few seconds. None if there is nothing unsaved or the write failed.

        The file name carries this process's id (two running copies never share one) and
        a small `.origin` file beside it remembers which file the work belongs to.
        """
        pending = self.autosave_in_background()
        return None if pending is None else pending.result()

    def _drop_autosave(self) -> None:
        self.timer.stop()
        self.wait_for_autosave()  # or a write finishing later would bring it back
        Autosave(autosave_path(), os.getpid(), None).remove()

    def _drop_autosave_if_clean(self) -> None:
        if not self.document.is_modified:
            self._drop_autosave()

    def offer_recovery(self) -> bool:
        """After a crash: offer the newest orphaned autosave back. True if recovered.

        Autosaves of copies of the app that are still running are left alone. The
        recovered work keeps its original file name (Save writes there) and stays
        marked as modified.
        """
        found = orphaned(autosave_folder())
        if not found:
            return False
        lost = found[0]
        when = QDateTime.fromSecsSinceEpoch(int(lost.data.stat().st_mtime)).toString(
            "yyyy-MM-dd hh:mm"
        )
        what = f"your changes to {lost.origin.name}" if lost.origin else "some changes"
        answer = QMessageBox.question(
            self.window,
            "Recover unsaved work",
            f"mha-gui was closed without saving {what} (autosaved {when}).\nRecover them?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes,
        )
        if answer != QMessageBox.StandardButton.Yes:
            lost.remove()
            return False
        try:
            session = load_session(lost.data)
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self.window, "Cannot recover", f"{lost.data}:\n{exc}")
            lost.remove()
            return False
        self.document.open_session(session, path=lost.origin, owned=True)
        self.document.undo_stack.resetClean()  # recovered work is not saved anywhere yet
        self.recovered()
        self.autosave()  # now this process's autosave holds it …
        if lost.data != autosave_path():
            lost.remove()  # … and the orphan can go
        where = f" of {lost.origin}" if lost.origin else ""
        self.say(f"Recovered the autosaved work{where}: save it to keep it")
        return True
