"""What a lesson step opens and shows, applied through the window's usual paths.

A preset, a session file or a model's layer is opened with the window's save prompt
(Cancel keeps the student where they are); the stage, head and query go through the
document's view methods and the docks through their dock widgets — none of which is an
undo step. `StepOpener(document, panel, message)` remembers what the lesson opened last
(so a step that names nothing keeps the student's edits) and runs a model's layer once
per lesson.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDockWidget, QMessageBox, QWidget

from mha_gui.engine.lessons import Lesson, Step
from mha_gui.engine.lessons.check import model_folder, open_source, query_position
from mha_gui.engine.lessons.lesson import Source


def dock_of(widget: QWidget) -> QDockWidget | None:
    """The dock widget that holds `widget`, if any."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QDockWidget):
        parent = parent.parentWidget()
    return parent


class StepOpener:
    def __init__(self, document, panel: QWidget, message):
        self.document = document
        self.panel = panel  # the lesson panel: its window, its dock, dialogs' parent
        self.message = message  # says a sentence in the window's status bar
        self.opened: tuple[Source, int] | None = None  # what the lesson opened, when
        self.models: dict[Source, object] = {}  # a model's layer runs once per lesson

    def restart(self, models: dict | None = None) -> None:
        """A new lesson (or step 1 again): nothing of it is open yet."""
        self.opened = None
        if models is not None:
            self.models = models

    @staticmethod
    def source_for(lesson: Lesson, index: int) -> Source | None:
        """What step `index` shows its numbers from: its own source or the last before it."""
        for step in reversed(lesson.steps[: index + 1]):
            if step.show.source is not None:
                return step.show.source
        return None

    def open_for(self, lesson: Lesson, index: int) -> bool:
        """A step that names what it opens opens it afresh (unless it is open and
        unedited); a step that names nothing keeps the numbers the lesson opened last,
        with the student's edits, and opens them again only if something else was
        opened meanwhile. False when the save prompt was cancelled or it cannot open."""
        source = self.source_for(lesson, index)
        doc = self.document
        if source is None:
            return True
        ours = self.opened == (source, doc.opened_count)
        declared = lesson.steps[index].show.source is not None
        if ours and not (declared and doc.is_modified):
            return True
        window = self.panel.window()
        try:
            if source.kind == "preset" and hasattr(window, "new_from_preset"):
                ok = window.new_from_preset(source.name)
            elif source.kind == "session" and hasattr(window, "open_path"):
                ok = window.open_path(str(self._path(lesson, source.name)))
            else:
                ok = self._open_session(lesson, source)
        except (ValueError, OSError) as exc:
            QMessageBox.critical(self.panel, "Cannot open what the lesson shows", str(exc))
            return False
        if ok:
            self.opened = (source, doc.opened_count)
        return ok

    @staticmethod
    def _path(lesson: Lesson, name: str) -> Path:
        path = Path(name).expanduser()
        folder = lesson.folder
        return path if path.is_absolute() or folder is None else folder / path

    def _open_session(self, lesson: Lesson, source: Source) -> bool:
        """A model's layer (or, without a window, any source): save prompt, then open."""
        window = self.panel.window()
        if hasattr(window, "maybe_save") and not window.maybe_save():
            return False
        session = self.models.get(source)
        if session is None:
            session = open_source(source, lesson.folder)
            self.models[source] = session
        origin = None
        if source.kind == "model":
            from mha_gui.engine.models.origin import ModelOrigin  # only for a model's layer

            origin = ModelOrigin.make(
                model_folder(source.name, lesson.folder), source.layer, source.text
            )
        self.document.open_session(session, origin=origin)  # copies: the cache stays clean
        return True

    def show(self, step: Step) -> None:
        """The step's stage, head, query, docks and colour range: view state only."""
        show, doc = step.show, self.document
        if show.stage is not None:
            doc.set_stage(show.stage)
        if show.head is not None:
            doc.set_head(show.head)
        if show.query is not None:
            try:
                doc.set_query(query_position(show.query, doc.tokens))
            except ValueError as exc:
                self.message(f"The lesson's query: {exc}")
        window = self.panel.window()
        docks = getattr(window, "docks", {})
        for name in show.docks:
            dock = docks.get(name)
            if dock is not None:
                dock.show()
                dock.raise_()
        if show.weights_range is not None and hasattr(window, "set_weights_range"):
            window.set_weights_range(show.weights_range, save=False)
        own = dock_of(self.panel)
        if own is not None and show.docks:
            own.raise_()  # the lesson stays readable beside what it opened
