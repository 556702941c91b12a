"""The model view: every layer × head of the opened model on the same sentence, live,
each head labelled by its role.

When the session is a layer of a real model (File ▸ Open model…, `mha-gui --model`), the
canvas computes the attention weights of every layer in one pass through the blocks, on a
worker thread with its progress shown, and draws them as a grid (export/figures/model_grid.py).
Then a second job measures each head's role (engine/teaching/model_roles.py: previous, first, self
on the sentence; duplicate and induction on it or on a repeated-tokens probe; agreement
and antecedent for the built-in model) and the grid labels each map with its strongest
role — the maps come first, the labels a moment later, never the UI thread's work.
"Show:" above the grid highlights the heads that play one role. A click on a map opens
that layer in the window — after the save prompt, as a new session — with that head
inspected. Without a model, the view says how to open one.
`mha-gui export --model DIR --text ... --view model --out grid.png` writes the figure.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from mha_gui.engine.models.families import family_titles
from mha_gui.engine.teaching.model_roles import GRAMMAR_SENTENCES, grid_roles
from mha_gui.export.figures.message import MessageDrawing
from mha_gui.export.figures.model_grid import ModelGridDrawing
from mha_gui.views.docks.model.model_job import ModelJob
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.window.registry import ViewSpec, register_view

NO_MODEL = (
    "The session open now is not a layer of a real model. File ▸ Open model… "
    f"(Ctrl+Shift+O) opens the built-in classroom model or a layer of {family_titles()} "
    "from a folder on this computer (or from the Hugging Face cache) on a sentence you "
    "type; this view then shows the attention weights of every layer × head on that "
    "sentence, each head labelled with its role. Click a map to open its layer."
)
MEASURING = "measuring each head's role…"
# the grid is laid out for the dock's own height down to this (a bottom dock at 720p
# leaves ~150 px): drawn at full size, so chips, layer and head labels read at 13–14 px
FIT_MIN_HEIGHT = 140


def _key(origin) -> tuple:
    """What the maps depend on: the folder and the sentence (not the layer)."""
    return (origin.path, origin.text, origin.token_ids)


class ModelCanvas(DrawingWidget):
    """The grid on screen. Owns the two jobs (maps, then roles) of the document's model."""

    max_scale = 1.25
    rolesChanged = Signal()  # new roles (or none): the "Show:" choices follow

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.setObjectName("modelCanvas")
        self.maps = None  # the ModelAttention of `self.maps_key`
        self.maps_key: tuple | None = None
        self.job: ModelJob | None = None
        self.job_key: tuple | None = None
        self.progress = (0, 0)
        self.error: tuple[tuple, str] | None = None  # (key, reason) of the last failure
        self.roles = None  # the GridRoles of `self.maps`
        self.roles_job: ModelJob | None = None
        self.roles_error: str = ""
        self.show_role: str | None = None  # "Show:" — None for every head
        self.follow(("fileStateChanged", "viewChanged"), settings)
        self.hitClicked.connect(self._clicked)

    # ------------------------------------------------------------------ maps --------
    def grid(self, fit=None) -> ModelGridDrawing:
        origin = self.document.model_origin
        note = self.roles_error or (MEASURING if self.roles_job is not None else "")
        return ModelGridDrawing(
            self.maps,
            origin.layer,
            self.document.view.head,
            hint=fit is not None,
            fit=fit,
            roles=self.roles,
            show=self.show_role,
            roles_note=note,
        )

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
            return self.grid(fit=(max(self.width(), 480), max(self.height(), FIT_MIN_HEIGHT)))
        if self.error is not None and self.error[0] == key:
            return MessageDrawing(
                "Cannot compute the attention maps", self.error[1], error=True, rich=False
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
        job.reports_to(
            self,
            progress=lambda done, total: self._on_progress(job, done, total),
            done=lambda maps: self._on_done(job, key, maps),
            failed=lambda reason: self._on_failed(job, key, reason),
        ).start()

    def _on_progress(self, job, done: int, total: int) -> None:
        if job is self.job:
            self.progress = (done, total)
            self.refresh()

    def _on_done(self, job, key, maps) -> None:
        if job is self.job:
            self.job = None
            self.maps, self.maps_key = maps, key
            self._start_roles(maps, key[0])
            self.refresh()

    def _on_failed(self, job, key, reason: str) -> None:
        if job is self.job:
            self.job = None
            self.error = (key, reason)
            self.refresh()

    # ----------------------------------------------------------------- roles --------
    def _start_roles(self, maps, path) -> None:
        """Measure the roles of the new maps' heads (the old labels go at once)."""
        if self.roles_job is not None:
            self.roles_job.cancel()
        self.roles, self.roles_error = None, ""
        job = self.roles_job = ModelJob(lambda progress: grid_roles(maps, path, progress=progress))
        job.reports_to(
            self,
            done=lambda roles: self._on_roles(job, maps, roles, ""),
            failed=lambda reason: self._on_roles(job, maps, None, reason),
        ).start()
        self.rolesChanged.emit()

    def _on_roles(self, job, maps, roles, reason: str) -> None:
        if job is self.roles_job:
            self.roles_job = None
            if maps is self.maps:
                self.roles = roles
                self.roles_error = (
                    f"the heads' roles could not be measured: {reason}" if reason else ""
                )
                self.rolesChanged.emit()
                self.refresh()

    def set_show(self, role: str | None) -> None:
        """Highlight the heads that play `role` (None: every head as it is)."""
        if role != self.show_role:
            self.show_role = role
            self.refresh()

    @property
    def computing(self) -> bool:
        return self.job is not None or self.roles_job is not None

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
        if self.maps is None or origin is None or _key(origin) != self.maps_key:
            return self.make_drawing()
        return self.grid()

    def closeEvent(self, event) -> None:
        for job in (self.job, self.roles_job):
            if job is not None:
                job.cancel()
        super().closeEvent(event)


class ModelView(QWidget):
    """The dock: "Show: all heads / previous / induction / …" above the grid."""

    def __init__(self, document, settings=None, parent=None):
        super().__init__(parent)
        self.document = document
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(2)
        bar = QHBoxLayout()
        self.show_label = QLabel("&Show:", self)
        self.show_combo = QComboBox(self)
        self.show_combo.setObjectName("modelRoleFilter")
        self.show_combo.setAccessibleName("Show the heads that play a role")
        self.show_combo.setToolTip(
            "Highlight the heads that score at least 0.40 on one role (the others are "
            "veiled); each chip then shows that role's score. The choice stays while "
            "you open other sentences and layers."
        )
        self.show_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.show_label.setBuddy(self.show_combo)
        bar.addWidget(self.show_label)
        bar.addWidget(self.show_combo)
        bar.addStretch(1)
        self.status = QLabel(self)
        self.status.setObjectName("modelRoleStatus")
        # its own line under the selector, wrapped: never clipped, and it never widens
        # the dock (a long "where the roles were measured" reads in full at 1280 px)
        self.status.setWordWrap(True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addLayout(bar)
        layout.addWidget(self.status)
        self.canvas = ModelCanvas(document, settings, self)
        self.scroll = QScrollArea(self)  # scrolls in a dock narrower than the grid reads
        self.scroll.setObjectName("modelView.scroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.canvas)
        layout.addWidget(self.scroll, 1)
        self.wanted: str | None = None  # the user's choice, kept across grids
        self.show_combo.currentIndexChanged.connect(self._chosen)
        self.canvas.rolesChanged.connect(self.fill)
        document.fileStateChanged.connect(self.fill)  # e.g. a preset: no roles to show
        self.fill()

    @property
    def drawing(self):
        return self.canvas.drawing

    @property
    def maps(self):
        return self.canvas.maps

    @property
    def roles(self):
        return self.canvas.roles

    @property
    def computing(self) -> bool:
        return self.canvas.computing

    def fill(self) -> None:
        """The roles this grid measured, each with how many heads play it; the user's
        choice stays selected (disabled while no head plays it). Nothing to choose from
        while the session is not a model's layer."""
        modelled = self.document.model_origin is not None
        roles = self.canvas.roles if modelled else None
        with QSignalBlocker(self.show_combo):
            self.show_combo.clear()
            self.show_combo.addItem("all heads", None)
            for role in roles.measured if roles is not None else ():
                count = roles.count(role)
                self.show_combo.addItem(f"{role} ({count} head{'s' * (count != 1)})", role)
                if not count:
                    item = self.show_combo.model().item(self.show_combo.count() - 1)
                    item.setEnabled(False)
            index = self.show_combo.findData(self.wanted)
            self.show_combo.setCurrentIndex(max(index, 0))
        self.show_combo.setEnabled(roles is not None)
        shown = self.show_combo.currentData()
        playing = roles is not None and shown is not None and roles.count(shown) > 0
        self.canvas.set_show(shown if playing else None)
        self.status.setText(self._status(roles))
        self.status.setToolTip(self.status.text())

    def _status(self, roles) -> str:
        """Where the labels come from, short (the exported figure's note says it in full;
        the figure in the dock leaves it to this line)."""
        if self.canvas.maps is None or self.document.model_origin is None:
            return ""
        if roles is None:
            return self.canvas.roles_error or MEASURING
        where = (
            "roles on this text"
            if roles.repeats_on == "text"
            else "duplicate, induction on a repeated-tokens probe (few repeats in this text)"
        )
        if roles.grammar:
            where += f"; agreement, antecedent on {GRAMMAR_SENTENCES} classroom sentences each"
        return where

    def _chosen(self, _index: int) -> None:
        self.wanted = self.show_combo.currentData()
        self.canvas.set_show(self.wanted)

    def set_show(self, role: str | None) -> bool:
        """Choose "Show: `role`" as a user would; False when the grid offers no such role."""
        index = self.show_combo.findData(role)
        item = self.show_combo.model().item(index) if index >= 0 else None
        if item is None or not item.isEnabled():
            return False
        self.show_combo.setCurrentIndex(index)
        return True


register_view(
    ViewSpec(
        "model", ModelView, "modelView", "Model: every layer × head", figure="model", area="bottom"
    )
)

__all__ = ["ModelCanvas", "ModelGridDrawing", "ModelView"]
