"""File ▸ Save of a large layer is written on a writer thread: the window goes on, the
status bar says when the file is on disk, and the document counts as saved only if its
numbers are still the ones written."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from mha_gui.document import saving
from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.layer.session import load_session

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def large(monkeypatch):
    """Every layer counts as large enough to be saved in the background."""
    monkeypatch.setattr(saving, "BACKGROUND_SAVE_NUMBERS", 0)


@pytest.fixture
def held(monkeypatch):
    """The writer waits at the start of each write until `release` is set."""
    release = threading.Event()
    write = saving.write_session_gently

    def slow(session, path):
        release.wait(10)
        return write(session, path)

    monkeypatch.setattr(saving, "write_session_gently", slow)
    yield release
    release.set()


def finished(qtbot, doc):
    qtbot.waitUntil(lambda: not doc.saving, timeout=10_000)
    QApplication.processEvents()  # the queued "written" reaches the window


def test_save_returns_at_once_and_the_file_equals_the_document(
    qtbot, window, dialogs, tmp_path, large, held
):
    doc = window.document
    doc.open_session(random_session(seed=1, tokens=6, d_model=8, heads=2), owned=True)
    doc.set_value("X", (1, 1), 0.625)
    target = tmp_path / "layer.json"
    dialogs.save_path = str(target)
    with qtbot.waitSignal(doc.saveFinished, timeout=10_000) as signal:
        assert window.files.save() is True  # returns while the writer still waits
        assert doc.saving and doc.is_modified and not target.exists()
        assert "Saving" in window.statusBar().currentMessage()
        held.set()
    assert signal.args == [str(target), ""]
    finished(qtbot, doc)
    assert not doc.is_modified and doc.path == target and "layer.json" in window.windowTitle()
    assert window.statusBar().currentMessage() == f"Saved {target}"
    assert window.files.recent_files()[0] == str(target.resolve())
    back = load_session(target)
    assert back.tokens == doc.tokens and back.config == doc.config
    for name, array in doc.snapshot().params.as_dict().items():
        np.testing.assert_array_equal(back.params.as_dict()[name], array)


def test_an_edit_during_the_write_keeps_the_document_modified(
    qtbot, window, dialogs, tmp_path, large, held
):
    doc = window.document
    doc.set_value("X", (0, 0), 1.5)
    dialogs.save_path = str(tmp_path / "early.json")
    window.files.save()
    doc.set_value("X", (0, 0), 2.5, merge_key="scrub")  # while the writer waits
    doc.set_value("X", (0, 0), 3.5, merge_key="scrub")  # merged: the undo index stays
    held.set()
    finished(qtbot, doc)
    assert doc.is_modified and doc.path == tmp_path / "early.json"
    assert load_session(tmp_path / "early.json").params.X[0, 0] == 1.5
    assert "still unsaved changes" in window.statusBar().currentMessage()


def test_a_failed_write_says_why_and_changes_nothing(qtbot, window, dialogs, tmp_path, large):
    doc = window.document
    doc.set_value("X", (0, 0), 1.5)
    dialogs.save_path = str(tmp_path / "no such folder" / "x.json")
    window.files.save()
    finished(qtbot, doc)
    assert dialogs.kinds() == ["save", "critical"]
    assert "Cannot save session" in dialogs.calls[-1][1]
    assert doc.is_modified and doc.path is None


def test_saving_before_closing_waits_and_an_older_write_never_lands_last(
    qtbot, window, dialogs, tmp_path, large, held
):
    doc = window.document
    target = tmp_path / "s.json"
    dialogs.save_path = str(target)
    doc.set_value("X", (0, 0), 1.5)
    window.files.save()  # in the background, held
    doc.set_value("X", (0, 0), 2.5)
    threading.Timer(0.3, held.set).start()
    dialogs.answer = dialogs.answer.Save
    assert window.maybe_save() is True  # saves at once, after the older write
    assert load_session(target).params.X[0, 0] == 2.5
    finished(qtbot, doc)
    assert not doc.is_modified


def test_small_layers_still_save_at_once(window, dialogs, tmp_path):
    doc = window.document
    doc.set_value("X", (0, 0), 1.5)
    dialogs.save_path = str(tmp_path / "toy.json")
    assert window.files.save() is True
    assert not doc.saving and not doc.is_modified and (tmp_path / "toy.json").exists()
