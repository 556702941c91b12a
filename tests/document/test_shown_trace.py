"""A large layer's views show the last consistent trace: nothing they read on the UI
thread recomputes it there, and File ▸ Open of a large file reads it on a thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from mha_gui.document import Document
from mha_gui.document import files as files_module
from mha_gui.document import recompute as recompute_module
from mha_gui.document.later import while_turning
from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.layer.session import save_session


@pytest.fixture
def large(monkeypatch, qtbot):
    """A document whose layer counts as large (recomputed on the worker)."""
    monkeypatch.setattr(recompute_module, "ASYNC_CELLS", 0)
    doc = Document(random_session(seed=5, tokens=9, d_model=8, heads=2))
    qtbot.waitUntil(lambda: not doc.computing, timeout=20_000)
    yield doc
    qtbot.waitUntil(lambda: not doc.busy, timeout=20_000)
    doc.deleteLater()


def test_the_shown_trace_is_the_last_reported_until_the_next(large, qtbot):
    doc = large
    before = doc.shown_trace().weights.copy()
    count = doc.recompute_count
    with qtbot.waitSignal(doc.traceChanged, timeout=20_000):
        doc.set_value("W_Q", (0, 1, 1), 2.5)
        shown = doc.shown_trace()  # the edit is waiting: not recomputed here
        assert doc.recompute_count == count
        np.testing.assert_array_equal(shown.weights, before)
    qtbot.waitUntil(lambda: not doc.computing, timeout=20_000)
    np.testing.assert_allclose(doc.shown_trace().weights, doc.session.run().weights, atol=1e-12)
    assert not np.array_equal(doc.shown_trace().weights[0], before[0])


def test_a_view_handling_a_report_reads_its_trace_not_a_recompute(large, qtbot):
    """An edit made while the worker computes waits; a view reading the trace while the
    report is handled gets the reported one, and the edit is recomputed on the worker."""
    doc = large
    gate = threading.Event()
    engine = doc.recompute.engine
    refresh = engine.refresh

    def gated():
        assert gate.wait(20), "the test never opened the gate"
        return refresh()

    engine.refresh = gated
    seen = []

    def on_trace(_change):
        count = doc.recompute_count
        doc.trace()
        seen.append(doc.recompute_count - count)

    doc.traceChanged.connect(on_trace)
    doc.set_value("W_Q", (0, 0, 0), 1.5)
    qtbot.waitUntil(lambda: doc.busy, timeout=20_000)
    doc.set_value("W_Q", (1, 0, 0), -1.5)  # while the worker computes the first
    gate.set()
    qtbot.waitUntil(lambda: len(seen) >= 2 and not doc.computing, timeout=20_000)
    assert seen[:2] == [0, 0]
    engine.refresh = refresh
    np.testing.assert_allclose(doc.trace().output, doc.session.run().output, atol=1e-12)


def test_while_turning_keeps_the_event_loop_turning(qapp):
    ticked = threading.Event()
    QTimer.singleShot(0, ticked.set)  # runs only if the loop turns while work waits
    assert while_turning(lambda: ticked.wait(10)) is True


def test_while_turning_raises_the_works_error_here(qapp):
    def fail():
        raise ValueError("no such file")

    with pytest.raises(ValueError, match="no such file"):
        while_turning(fail)


def test_a_large_file_opens_from_a_thread_as_it_would_at_once(tmp_path, qtbot, monkeypatch):
    monkeypatch.setattr(files_module, "READ_ON_A_THREAD_BYTES", 0)
    session = random_session(seed=8, tokens=5, d_model=4, heads=2)
    path = save_session(session, tmp_path / "layer.json")
    doc = Document()
    doc.open_file(path)
    assert doc.path == path and doc.session.same_contents(session)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        doc.open_file(tmp_path / "bad.json")
    assert doc.path == path  # nothing changed
    doc.deleteLater()
