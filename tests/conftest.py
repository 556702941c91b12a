"""Shared test setup: offscreen Qt, throw-away settings, no real dialogs, no leaked windows."""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

QT_FIXTURES = ("qtbot", "qapp", "window")

# How long a wait for a condition may take before the test fails, unless the test says.
# A wait ends as soon as its condition holds, so this cap costs a passing test nothing; it
# only decides when a condition that never comes is given up. pytest-qt's own 5 s failed
# right tests on a shared two-core machine at load 8 (150 training steps took longer).
PATIENCE_MS = 60_000


def _patient(wait):
    def patient_wait(self, *args, timeout=PATIENCE_MS, **kwargs):
        return wait(self, *args, timeout=timeout, **kwargs)

    patient_wait.__doc__ = wait.__doc__
    return patient_wait


def pytest_configure(config):
    from pytestqt.qtbot import QtBot

    for name in ("waitUntil", "waitSignal", "waitSignals", "waitCallback"):
        setattr(QtBot, name, _patient(getattr(QtBot, name)))


def _uses_qt(request) -> bool:
    return any(name in request.fixturenames for name in QT_FIXTURES)


@pytest.fixture(autouse=True)
def _temporary_settings(request, tmp_path):
    """QSettings of every test live in its own folder, never in the real home."""
    if not _uses_qt(request):
        yield None
        return
    from PySide6.QtCore import QSettings

    folder = tmp_path / "settings"
    folder.mkdir()
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))
    yield folder


class Dialogs:
    """Stand-ins for modal dialogs: they record what was asked and answer at once.

    Set `answer` (a QMessageBox.StandardButton) for Save/Discard/Cancel prompts,
    `open_path` / `save_path` for file dialogs and `text` / `integer` for input dialogs.
    A dialog nobody set an answer for fails the test instead of blocking it.
    """

    def __init__(self):
        from PySide6.QtWidgets import QMessageBox

        self.calls: list[tuple[str, str]] = []
        self.answer = QMessageBox.StandardButton.Discard
        self.open_path: str | None = None
        self.save_path: str | None = None
        self.text: str | None = None
        self.integer: int | None = None

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


@pytest.fixture(autouse=True)
def dialogs(request, monkeypatch):
    if not _uses_qt(request):
        yield None
        return
    from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QMessageBox

    d = Dialogs()

    def prompt(kind):
        def ask(parent, title, text, *args, **kwargs):
            d.calls.append((kind, f"{title}: {text}"))
            return d.answer

        return ask

    def note(kind):
        def tell(parent, title, text, *args, **kwargs):
            d.calls.append((kind, f"{title}: {text}"))
            return QMessageBox.StandardButton.Ok

        return tell

    def open_name(*args, **kwargs):
        d.calls.append(("open", ""))
        if d.open_path is None:
            pytest.fail("unexpected Open dialog (set dialogs.open_path)")
        return d.open_path, ""

    def save_name(*args, **kwargs):
        d.calls.append(("save", ""))
        if d.save_path is None:
            pytest.fail("unexpected Save dialog (set dialogs.save_path)")
        return d.save_path, ""

    def get_text(parent, title, label, *args, **kwargs):
        d.calls.append(("text", f"{title}: {label}"))
        if d.text is None:
            pytest.fail("unexpected text input dialog (set dialogs.text)")
        return d.text, True

    def get_int(parent, title, label, *args, **kwargs):
        d.calls.append(("int", f"{title}: {label}"))
        if d.integer is None:
            pytest.fail("unexpected number input dialog (set dialogs.integer)")
        return d.integer, True

    def no_exec(self, *args, **kwargs):
        pytest.fail(f"a modal {type(self).__name__} would block the test")

    monkeypatch.setattr(QMessageBox, "warning", staticmethod(prompt("warning")))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(prompt("question")))
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(note("critical")))
    monkeypatch.setattr(QMessageBox, "information", staticmethod(note("information")))
    monkeypatch.setattr(QMessageBox, "about", staticmethod(note("about")))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(open_name))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(get_text))
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(get_int))
    monkeypatch.setattr(QDialog, "exec", no_exec)
    yield d


@pytest.fixture(autouse=True)
def _no_leaked_windows(request):
    """Fail a test that leaves a top-level widget alive (napari does the same).

    Runs after pytest-qt has closed and deleted the widgets registered with qtbot;
    also puts back the application palette and font a test may have changed.
    """
    if not _uses_qt(request):
        yield
        return
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    before = set(app.topLevelWidgets())
    palette, font = app.palette(), app.font()
    yield
    gc.collect()  # pyqtgraph plot items own parentless control widgets until collected
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
    leaked = [
        w
        for w in app.topLevelWidgets()
        if w not in before and type(w).__name__ not in ("QTipLabel",)
    ]
    app.setPalette(palette)
    app.setFont(font)
    if leaked:
        names = ", ".join(f"{type(w).__name__}({w.objectName()!r})" for w in leaked)
        for w in leaked:
            w.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        pytest.fail(f"top-level widgets leaked: {names}")


@pytest.fixture
def window(qtbot):
    """The main window on the toy preset, registered so pytest-qt closes and deletes it."""
    from mha_gui.app import create_main_window

    w = create_main_window("toy")
    qtbot.addWidget(w)
    return w


@pytest.fixture
def show_widget(qtbot):
    """Show a view at a given size, exposed, and close it after the test."""
    shown = []

    def show(widget, width, height):
        qtbot.addWidget(widget)
        widget.resize(width, height)
        widget.show()
        qtbot.waitExposed(widget)
        shown.append(widget)
        return widget

    yield show
    for widget in shown:
        widget.close()


@pytest.fixture
def rich_texts(monkeypatch) -> list[str]:
    """Every rich text a figure or page draws from now on (figure.draw_rich), in order."""
    from mha_gui.export import figure

    drawn: list[str] = []
    real = figure.draw_rich

    def spy(painter, x, y, text, *a, **k):
        drawn.append(text)
        return real(painter, x, y, text, *a, **k)

    monkeypatch.setattr(figure, "draw_rich", spy)
    return drawn
