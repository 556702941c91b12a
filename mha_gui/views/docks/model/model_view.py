"""The model view: every layer × head of the opened model on the same sentence, live.

When the session is a layer of a real model (File ▸ Open model…, `mha-gui --model`), the
view computes the attention weights of every layer in one pass through the blocks, on a
worker thread with its progress shown, and draws them as a grid (export/figures/model_grid.py).
A click on a map opens that layer in the window — after the save prompt, as a new
session — with that head inspected. Without a model, the view says how to open one.
`mha-gui export --model DIR --text ... --view model --out grid.png` writes the figure
(export/figures/model_grid.py `model_drawing`).
"""

from __future__ import annotations

from mha_gui.engine.models.families import family_titles
from mha_gui.export.figures.message import MessageDrawing
from mha_gui.export.figures.model_grid import ModelGridDrawing
from mha_gui.views.docks.model.model_job import ModelJob
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.window.registry import ViewSpec, register_view

NO_MODEL = (
    "The session open now is not a layer of a real model. File ▸ Open model… "
    f"(Ctrl+Shift+O) opens a layer of {family_titles()} from a folder on "
    "this computer (or from the Hugging Face cache) on a sentence you type; this view then "
    "shows the attention weights of every layer × head on that sentence. Click a map to "
    "open its layer."
)


def _key(origin) -> tuple:
    """What the maps depend on: the folder and the sentence (not the layer)."""
    return (origin.path, origin.text, origin.token_ids)


class ModelView(DrawingWidget):
    max_scale = 1.25

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.maps = None  # the ModelAttention of `self.maps_key`
        self.maps_key: tuple | None = None
        self.job: ModelJob | None = None
        self.job_key: tuple | None = None
        self.progress = (0, 0)
        self.error: tuple[tuple, str] | None = None  # (key, reason) of the last failure
        self.follow(("fileStateChanged", "viewChanged"), settings)
        self.hitClicked.connect(self._clicked)

    # ------------------------------------------------------------------ maps --------
    def make_drawing(self):
        origin = self.document.model_origin
        if origin is None:
            source = self.document.session.source
            text = NO_MODEL
            if source:  # e.g. a saved session of a model's layer
                text = (
                    f"This session came from {source}, but the model's folder and sentence "
                    f"are not open in this window. " + NO_MODEL.split(". ", 1)[1]
                )
            return MessageDrawing("Model view: every layer × head", text, rich=False)
        key = _key(origin)
        if self.maps is not None and self.maps_key == key:
            fit = (max(self.width(), 480), max(self.height(), 320))
            return ModelGridDrawing(
                self.maps, origin.layer, self.document.view.head, hint=True, fit=fit
            )
        if self.error is not None and self.error[0] == key:
            reason = self.error[1]
            return MessageDrawing(
                "Cannot compute the attention maps", reason, error=True, rich=False
            )
        if self.job_key != key:
            self._start(origin)
        done, total = self.progress
        counted = f": block {done} of {total}" if total else ""
        return MessageDrawing(
            "Computing the attention maps…",
            f"Running every layer of {origin.path.name} on the sentence{counted}.",
            rich=False,
        )

    def _start(self, origin) -> None:
        if self.job is not None:
            self.job.cancel()
        key = _key(origin)
        self.job, self.job_key, self.progress = ModelJob(origin.maps), key, (0, 0)
        job = self.job
        job.signals.progress.connect(lambda done, total: self._on_progress(job, done, total))
        job.signals.done.connect(lambda maps: self._on_done(job, key, maps))
        job.signals.failed.connect(lambda reason: self._on_failed(job, key, reason))
        job.start()

    def _on_progress(self, job, done: int, total: int) -> None:
        if job is self.job:
            self.progress = (done, total)
            self.refresh()

    def _on_done(self, job, key, maps) -> None:
        if job is self.job:
            self.job = None
            self.maps, self.maps_key = maps, key
            self.refresh()

    def _on_failed(self, job, key, reason: str) -> None:
        if job is self.job:
            self.job = None
            self.error = (key, reason)
            self.refresh()

    @property
    def computing(self) -> bool:
        return self.job is not None

    # ---------------------------------------------------------------- clicking ------
    def _clicked(self, item) -> None:
        _kind, layer, head = item
        self.open_layer(layer, head)

    def open_layer(self, layer: int, head: int) -> bool:
        """Open `layer` of the grid's model in the window (a new session after the save
        prompt) with `head` inspected."""
        origin = self.document.model_origin
        if self.maps is None or origin is None or _key(origin) != self.maps_key:
            return False
        window = self.window()
        if hasattr(window, "maybe_save") and not window.maybe_save():
            return False
        session = self.maps.session(layer)
        self.document.open_session(session, origin=origin.at_layer(layer))
        self.document.set_head(head)
        if hasattr(window, "show_message"):
            window.show_message(f"Opened {session.source}, head {head}")
        return True

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if isinstance(self.drawing, ModelGridDrawing):
            self.refresh()  # the maps fill the dock at its new size

    def export_drawing(self, vector: bool):
        """Export figure: the grid at the figure's own size, not the dock's."""
        origin = self.document.model_origin
        if self.maps is None or origin is None:
            return self.make_drawing()
        return ModelGridDrawing(self.maps, origin.layer, self.document.view.head)

    def closeEvent(self, event) -> None:
        if self.job is not None:
            self.job.cancel()
        super().closeEvent(event)


register_view(
    ViewSpec("model", ModelView, "modelView", "Model: every layer × head", "model", "bottom")
)

__all__ = ["ModelView"]
