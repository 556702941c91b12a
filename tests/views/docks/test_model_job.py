"""A model job that ends after its dock or dialog was deleted calls nothing of it.

Before `ModelJob.reports_to`, a lambda connected to the job's `done` called into the
deleted model view ("Signal source has been deleted" in the next test's event loop).
"""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QWidget

from mha_gui.views.docks.model.model_job import ModelJob


def test_a_job_reports_to_its_receiver_while_it_exists(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    got = []
    job = ModelJob(lambda progress: 42).reports_to(widget, done=got.append)
    job.start()
    qtbot.waitUntil(lambda: job.finished)
    assert got == [42]


def test_a_job_that_ends_after_its_receiver_was_deleted_calls_nothing(qtbot):
    gate = threading.Event()
    widget = QWidget()
    got = []

    def work(_progress):
        gate.wait(10)
        return "late"

    job = ModelJob(work).reports_to(widget, done=got.append, failed=got.append)
    job.start()
    widget.deleteLater()
    qtbot.waitUntil(lambda: not _alive(widget))
    gate.set()
    qtbot.waitUntil(lambda: job.finished)
    assert got == []


def test_a_callback_for_a_signal_the_job_does_not_have_is_refused(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    try:
        ModelJob(lambda progress: None).reports_to(widget, finished=print)
    except TypeError as exc:
        assert "finished" in str(exc)
    else:
        raise AssertionError("an unknown callback was accepted")


def _alive(widget) -> bool:
    from shiboken6 import isValid

    return isValid(widget)


def test_a_job_whose_signals_went_with_the_application_ends_quietly():
    """The application quit while a job ran: its signals' QObject is gone, and every
    emit from the pool's thread raised "Signal source has been deleted" (a traceback on
    quitting with the model dock's roles still computing). It stops at the next block."""
    import shiboken6

    blocks = []

    def work(progress):
        for k in range(5):
            blocks.append(k)
            progress(k, 5)
        return "never read"

    job = ModelJob(work)
    shiboken6.delete(job.signals)
    job.run()  # in this thread: nothing raises
    assert blocks == [0, 1]  # the first report found nobody listening: it stopped
