"""Work done once on the next event-loop turn, however often it is asked for in this one.

The document coalesces every edit of a turn into one recompute this way, and views
coalesce the signals of a turn into one rebuild: any number of `schedule()` calls before
control returns to the event loop cost one call of the slot. `while_turning` is the
other way round: work the caller waits for, done on a thread while the loop turns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QEventLoop, QObject, Qt, QTimer, Signal

T = TypeVar("T")


class Later:
    """`slot()` on the next event-loop turn, once per turn (`schedule`), or not (`cancel`).

    The timer belongs to `parent`: it stops with it, so a slot never runs on a deleted
    widget."""

    def __init__(self, parent: QObject, slot: Callable[[], object]):
        self._timer = QTimer(parent)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(slot)

    def schedule(self) -> None:
        """Run the slot on the next turn (already asked for this turn: nothing more)."""
        if not self._timer.isActive():
            self._timer.start()

    def cancel(self) -> None:
        self._timer.stop()

    @property
    def pending(self) -> bool:
        return self._timer.isActive()


class _Done(QObject):
    finished = Signal()


def while_turning(work: Callable[[], T]) -> T:
    """`work()` on a thread of its own while this (the UI) thread's event loop keeps
    turning — painting, timers, the recompute's and savers' messages — but holds back
    the user's input until it ends; then its result, or its exception raised here.

    For work of a fraction of a second that the caller must have before it goes on
    (File ▸ Open reading a 60 MB session: ~0.2 s), so that the window neither freezes
    nor takes a click that the caller's next step would overtake."""
    box: list = []
    done = _Done()
    loop = QEventLoop()
    done.finished.connect(loop.quit, Qt.ConnectionType.QueuedConnection)

    def run() -> None:
        try:
            box.append((work(), None))
        except BaseException as exc:  # handed to the caller, raised there
            box.append((None, exc))
        done.finished.emit()

    thread = threading.Thread(target=run, name="mha-gui-load", daemon=True)
    thread.start()
    if not box:  # (finished already: its queued quit would come after exec's start anyway)
        loop.exec(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
    thread.join()
    value, error = box[0]
    if error is not None:
        raise error
    return value
