"""What the File menu does: the save prompt, New from preset, Open, Save, Save As and the
Open Recent list (kept in QSettings, newest first).

The main window makes one `FileActions(window, document, say)`: `window` is the parent
of its dialogs and actions, `say(text)` the status bar. A failure is said in a dialog
and changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from mha_gui.engine.layer.presets import PRESETS
from mha_gui.views.settings.display_settings import qsettings

SESSION_FILTER = "mha-gui sessions (*.json);;All files (*)"
MAX_RECENT = 8
RECENT_KEY = "recentFiles"


class FileActions:
    """The File menu's work for one window: `maybe_save`, `new_from_preset`,
    `open_dialog`, `open_path`, `save`, `save_as`, `recent_files` and Open Recent."""

    def __init__(self, window, document, say):
        self.window = window
        self.document = document
        self.say = say  # a sentence in the status bar
        self.recent_menu: QMenu | None = None  # File ▸ Open Recent, made by build_recent_menu
        self._recent_actions: list[QAction] = []  # reused, one per entry shown

    # ------------------------------------------------------------ save prompt -------
    def maybe_save(self) -> bool:
        """True if it is fine to drop the current state (saved, discarded or unchanged)."""
        if not self.document.is_modified:
            return True
        answer = QMessageBox.warning(
            self.window,
            "Unsaved changes",
            f"{self.document.display_name} has changes that are not saved.\n"
            "Save them before continuing?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save(wait=True)  # what comes next drops this session
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------ new / open --------
    def new_from_preset(self, name: str) -> bool:
        if not self.maybe_save():
            return False
        try:
            self.document.open_preset(name)
        except (ValueError, OSError) as exc:
            QMessageBox.critical(self.window, "Cannot open preset", str(exc))
            return False
        self.say(f"New session from preset {name!r}: {PRESETS[name].summary}")
        return True

    def open_dialog(self) -> bool:
        if not self.maybe_save():
            return False
        start = str(self.document.path.parent) if self.document.path else ""
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", start, SESSION_FILTER)
        if not path:
            return False
        return self.open_path(path, ask=False)

    def open_path(self, path, ask: bool = True) -> bool:
        """Open a session file; on error say why and change nothing."""
        if ask and not self.maybe_save():
            return False
        return self._file_step(self.document.open_file, path, "Cannot open session", "Opened")

    # ------------------------------------------------------------------ save --------
    def save(self, *, wait: bool = False) -> bool:
        """File ▸ Save. A large layer is written on a writer thread (the window goes on;
        the status bar says when it is on disk) unless `wait`."""
        if self.document.path is None:
            return self.save_as(wait=wait)
        return self._save_to(self.document.path, wait)

    def save_as(self, *, wait: bool = False) -> bool:
        if self.document.path is not None:
            start = str(self.document.path)
        else:
            start = self.document.display_name.split(" ")[0] + ".json"
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session as", start, SESSION_FILTER)
        if not path:
            return False
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(".json")
        return self._save_to(path, wait)

    def _save_to(self, path, wait: bool = False) -> bool:
        doc = self.document
        if wait or not doc.wants_background_save():
            return self._file_step(doc.save, path, "Cannot save session", "Saved")
        target = doc.start_save(path)
        self.say(f"Saving {target}… (the window stays usable)")
        return True

    def saved_in_background(self, path: str, error: str) -> None:
        """A save on the writer thread ended (the document's saveFinished)."""
        if error:
            QMessageBox.critical(self.window, "Cannot save session", f"{path}:\n{error}")
            return
        self._add_recent(path)
        modified = " (edited since: still unsaved changes)" if self.document.is_modified else ""
        self.say(f"Saved {path}{modified}")

    def _file_step(self, step, path, failure: str, done: str) -> bool:
        """Open or save: on success the file goes to the top of Open Recent; on failure
        a dialog says why (the document is unchanged)."""
        try:
            result = step(path)
        except (ValueError, OSError) as exc:
            QMessageBox.critical(self.window, failure, f"{path}:\n{exc}")
            return False
        path = result if result is not None else path  # save returns where it wrote
        self._add_recent(path)
        self.say(f"{done} {path}")
        return True

    # ---------------------------------------------------------- recent files --------
    def build_recent_menu(self, parent: QMenu) -> QMenu:
        """File ▸ Open Recent: up to MAX_RECENT files, then "Clear list"."""
        self.recent_menu = parent.addMenu("Open &Recent")
        self.recent_menu.setObjectName("menu.recent")
        self._recent_empty = QAction("(no recent files)", self.window)
        self._recent_empty.setEnabled(False)
        self.recent_menu.addAction(self._recent_empty)
        self._recent_end = self.recent_menu.addSeparator()
        self._recent_clear = QAction("Clear list", self.window)
        self._recent_clear.triggered.connect(self._clear_recent)
        self.recent_menu.addAction(self._recent_clear)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        return self.recent_menu

    def recent_files(self) -> list[str]:
        value = qsettings().value(RECENT_KEY, [])
        if value is None:
            return []
        if isinstance(value, str):
            return [value] if value else []
        return [str(v) for v in value]

    def _add_recent(self, path) -> None:
        path = str(Path(path).resolve())
        recent = [p for p in self.recent_files() if p != path]
        qsettings().setValue(RECENT_KEY, [path, *recent][:MAX_RECENT])
        self._fill_recent()

    def _fill_recent(self) -> None:
        # Actions are reused rather than deleted with QMenu.clear(): deleting wrapped
        # actions from C++ while Python holds them is how PySide apps crash.
        if self.recent_menu is None:
            return
        recent = self.recent_files()
        actions = self._recent_actions
        while len(actions) < MAX_RECENT:
            action = QAction(self.window)
            action.triggered.connect(lambda _=False, a=action: self._open_recent(a))
            actions.append(action)
            self.recent_menu.insertAction(self._recent_end, action)
        for i, action in enumerate(actions):
            if i < len(recent):
                action.setText(f"&{i + 1}  {Path(recent[i]).name.replace('&', '&&')}")
                action.setData(recent[i])
                action.setStatusTip(recent[i])
                action.setToolTip(recent[i])
            action.setVisible(i < len(recent))
        self._recent_empty.setVisible(not recent)
        self._recent_clear.setVisible(bool(recent))

    def _open_recent(self, action: QAction) -> None:
        if action.data():
            self.open_path(str(action.data()))

    def _clear_recent(self) -> None:
        qsettings().setValue(RECENT_KEY, [])
        self._fill_recent()
