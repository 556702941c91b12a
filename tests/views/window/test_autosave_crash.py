"""Lose nothing: an edit is autosaved within a few seconds, a kill -9 after that brings it
back on the next start; the countdown restarts with every edit; the file is written off
the UI thread and is the same JSON a Save writes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox, QTableView

from mha_gui.app import create_main_window
from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.layer.session import load_session, save_session
from mha_gui.views.window import autosave

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

CRASHING_APP = textwrap.dedent(
    """
    import os
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QTableView
    app = QApplication([])
    app.setOrganizationName("mha-gui")
    app.setApplicationName("mha-gui")
    from mha_gui.app import create_main_window
    w = create_main_window("toy")
    w.show()
    model = w.findChild(QTableView, "editor.X").model()
    assert model.setData(model.index(0, 0), "7.5")
    QTimer.singleShot(3500, lambda: os.kill(os.getpid(), 9))  # no clean close
    app.exec()
    """
)


def test_kill_9_three_seconds_after_an_edit_keeps_it(qtbot, dialogs, _temporary_settings, tmp_path):
    # the crashing copy keeps its settings (and so its autosave) where this test's are
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(_temporary_settings))
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_APP], env=env, capture_output=True, timeout=120
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]
    found = autosave.orphaned(autosave.autosave_folder())
    assert len(found) == 1
    # the next start offers it back
    w = create_main_window("toy")
    qtbot.addWidget(w)
    dialogs.answer = QMessageBox.StandardButton.Yes
    assert w.offer_recovery() is True
    assert w.document.matrix("X")[0, 0] == 7.5
    assert w.isWindowModified()
    w.document.undo_stack.setClean()


def test_the_countdown_restarts_with_every_edit(window, qtbot):
    timer = window.recovery.timer
    assert timer.isSingleShot() and timer.interval() == autosave.AUTOSAVE_MS <= 3000
    assert not timer.isActive()  # nothing edited, nothing to write
    model = window.findChild(QTableView, "editor.X").model()
    assert model.setData(model.index(0, 0), "3")
    assert timer.isActive()
    timer.stop()  # as if it had run out …
    assert model.setData(model.index(0, 1), "4")
    assert timer.isActive()  # … the next edit starts the countdown again
    path = autosave.autosave_path()
    assert not path.exists()
    timer.stop()
    timer.timeout.emit()  # the countdown ends: written on the autosave thread
    window.recovery.wait_for_autosave()
    assert load_session(path).params.X[0, 1] == 4
    window.document.undo_stack.setClean()
    assert not path.exists()  # saved (clean): the autosave goes


def test_the_background_writer_writes_what_save_writes(tmp_path):
    session = load_preset("causal-6x16")
    session.mask = np.eye(6, dtype=bool)
    a = save_session(session, tmp_path / "a.json")
    b = autosave.write_session_gently(session, tmp_path / "b.json")
    assert a.read_text() == b.read_text()
    assert not list(tmp_path.glob("*.part"))
