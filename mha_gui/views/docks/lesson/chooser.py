"""Help ▸ Lessons…: the built-in lessons (with where the student is in each) and
Open lesson file…. Not modal: the window stays usable while it is open."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
)

from mha_gui.engine.lessons import LessonError, builtin_lessons
from mha_gui.views.settings.display_settings import qsettings

LESSON_FILTER = "mha-gui lessons (*.toml);;All files (*)"


class LessonChooser(QDialog):
    def __init__(self, window):
        super().__init__(window)
        self.setObjectName("lessonChooser")
        self.setWindowTitle("Lessons")
        self.window_ = window
        intro = QLabel(
            "Choose a lesson. Each walks through the computation in the window and checks "
            "what you do; your place in each lesson is remembered.",
            wordWrap=True,
        )
        self.list = QListWidget(objectName="lessonChooser.list")
        self.list.setAccessibleName("Built-in lessons")
        self.list.itemActivated.connect(lambda _item: self.start())
        self.start_button = QPushButton("&Start", objectName="lessonChooser.start")
        self.start_button.setAccessibleName("Start the chosen lesson")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.open_button = QPushButton("&Open lesson file…", objectName="lessonChooser.open")
        self.open_button.setAccessibleName("Open lesson file")
        self.open_button.clicked.connect(self.open_file)
        close = QPushButton("&Close", objectName="lessonChooser.close")
        close.setAccessibleName("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.resize(560, 380)
        self.fill()

    def fill(self) -> None:
        self.list.clear()
        try:
            entries = builtin_lessons()
        except LessonError as exc:  # a broken installation: say so, offer the files
            self.list.addItem(f"The built-in lessons cannot be read: {exc}")
            return
        settings = qsettings()
        for e in entries:
            step = settings.value(f"lessons/{e.name}/step")
            where = (
                f" — at step {int(step) + 1}" if step is not None and str(step).isdigit() else ""
            )
            item = QListWidgetItem(f"{e.title}  ({e.steps} steps){where}\n{e.summary}")
            item.setData(Qt.ItemDataRole.UserRole, e.name)
            item.setToolTip(e.summary)
            self.list.addItem(item)
        self.list.setCurrentRow(0)

    def _panel(self):
        from mha_gui.views.docks.lesson.lesson_panel import lesson_panel

        return lesson_panel(self.window_)

    def start(self) -> bool:
        item = self.list.currentItem()
        panel = self._panel()
        if item is None or panel is None or item.data(Qt.ItemDataRole.UserRole) is None:
            return False
        if panel.start_named(item.data(Qt.ItemDataRole.UserRole)):
            self.close()
            return True
        return False

    def open_file(self) -> bool:
        path, _ = QFileDialog.getOpenFileName(self, "Open lesson", "", LESSON_FILTER)
        panel = self._panel()
        if not path or panel is None:
            return False
        if panel.start_named(path):
            self.close()
            return True
        return False


def show_chooser(window) -> LessonChooser | None:
    """Help ▸ Lessons…: one chooser per window, shown and raised."""
    if window is None:
        return None
    dialog = window.findChild(LessonChooser)
    if dialog is None:
        dialog = LessonChooser(window)
    else:
        dialog.fill()
    dialog.show()
    dialog.raise_()
    return dialog


__all__ = ["LessonChooser", "show_chooser"]
