"""Work done once on the next event-loop turn, however often it is asked for in this one.

The document coalesces every edit of a turn into one recompute this way, and views
coalesce the signals of a turn into one rebuild: any number of `schedule()` calls before
control returns to the event loop cost one call of the slot.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


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
