"""Later: any number of requests in one event-loop turn run the work once, next turn."""

from __future__ import annotations

from PySide6.QtCore import QObject

from mha_gui.document import Later


def test_requests_of_one_turn_run_once_on_the_next(qapp, qtbot):
    owner = QObject()
    calls = []
    later = Later(owner, lambda: calls.append(len(calls)))
    for _ in range(5):
        later.schedule()
    assert calls == [] and later.pending  # not now: on the next turn
    qtbot.waitUntil(lambda: calls == [0])
    assert not later.pending
    later.schedule()
    qtbot.waitUntil(lambda: calls == [0, 1])


def test_a_cancelled_request_never_runs(qapp, qtbot):
    owner = QObject()
    calls = []
    later = Later(owner, lambda: calls.append("ran"))
    later.schedule()
    later.cancel()
    other = Later(owner, lambda: calls.append("other"))
    other.schedule()
    qtbot.waitUntil(lambda: calls == ["other"])  # a later turn: the cancelled one did not run
