"""Entry points of the desktop app.

`create_main_window` builds the window (not shown) inside an existing QApplication —
what tests, scripts and `run_app` use. `run_app` is what `mha-gui [FILE] [--preset]`
calls: it makes the QApplication, shows the window and runs the event loop.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mha_gui.engine.layer.presets import DEFAULT_PRESET, load_preset
from mha_gui.engine.layer.session import Session, load_session


def create_main_window(preset: str = DEFAULT_PRESET, session=None):
    """The main window on `session` (a Session or a session file path) or on `preset`.

    Raises ValueError / OSError for an unknown preset or a bad file, before any widget
    exists.
    """
    path: Path | None = None
    if session is None:
        loaded, preset_name = load_preset(preset), str(preset).strip().lower()
    elif isinstance(session, Session):
        loaded, preset_name = session, None
    else:
        path = Path(session)
        loaded, preset_name = load_session(path), None
    return _build_window(loaded, path, preset_name)


def _build_window(session: Session, path: Path | None, preset_name: str | None, origin=None):
    from mha_gui.document import Document
    from mha_gui.views.window.main_window import MainWindow

    # a validated copy (the caller keeps `session`), computed once
    document = Document(session.copy(), path=path, preset=preset_name, origin=origin)
    return MainWindow(document)


def run_app(session_path=None, preset=None, session: Session | None = None, origin=None) -> int:
    """Open the app on a session file, a preset or a Session (e.g. a real model's layer,
    with its ModelOrigin for the model view); the exit status of the event loop.

    A bad file or preset name: one line on stderr, exit status 2, no window.
    """
    name = str(preset or DEFAULT_PRESET).strip().lower()
    from_preset = session is None and not session_path
    try:
        if session is not None:
            path = None
        elif session_path:
            session, path = load_session(session_path), Path(session_path)
        else:
            session, path = load_preset(name), None
    except (ValueError, OSError) as exc:
        print(f"mha-gui: error: {exc}", file=sys.stderr)
        return 2

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName("mha-gui")
    app.setApplicationName("mha-gui")
    app.setApplicationDisplayName("mha-gui")
    app.setDesktopFileName("io.github.mha_gui")  # Wayland matches the window to its launcher
    app.setStyle("Fusion")  # honours the light/dark palettes on every platform
    from PySide6.QtGui import QIcon

    from mha_gui.resources import icon_path

    app.setWindowIcon(QIcon(icon_path()))
    window = _build_window(session, path, name if from_preset else None, origin)
    window.show()
    from PySide6.QtCore import QTimer

    QTimer.singleShot(0, window.offer_recovery)  # after a crash, offer the autosaved work
    return app.exec()
