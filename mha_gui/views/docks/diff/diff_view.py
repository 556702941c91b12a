"""A/B snapshot: pin the current numbers, then see "now − snapshot" for the stage shown.

Edit ▸ Pin snapshot (`action.snapshot`, Ctrl+Alt+P) keeps a copy of the session beside
the document. Pinning changes no number, so it is not an undo step. The dock `diffView`
then draws, for the stage the slider shows, every panel of that stage as now − snapshot
on a diverging colour scale, each titled with its largest change (the figure is
export/figures/difference.py; the same drawing is `mha-gui export --view diff --against
OTHER.json`). With nothing pinned it says how to pin; a snapshot of other dimensions is
explained, not subtracted.
The snapshot survives opening another file, so two files can be compared.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from mha_gui.engine.layer.session import Session
from mha_gui.engine.teaching.difference import shape_problem
from mha_gui.export.figures.difference import difference_figure
from mha_gui.export.figures.message import MessageDrawing
from mha_gui.views.docks.dock_width import widen_on_show
from mha_gui.views.widgets.drawing_widget import (
    NUMBER_SIGNALS,
    DrawingWidget,
    follow_numbers,
    save_drawing_as,
)
from mha_gui.views.window.registry import ActionSpec, ViewSpec, register_action, register_view

SHORTCUT = "Ctrl+Alt+P"
STORE_NAME = "snapshotStore"


class SnapshotStore(QObject):
    """The pinned copy of one document's session (a child of the document)."""

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName(STORE_NAME)
        self.session: Session | None = None
        self.pinned_at: datetime | None = None
        self.label = ""

    def pin(self, session: Session, label: str = "") -> None:
        self.session = session.copy()
        self.pinned_at = datetime.now()
        self.label = label
        self.changed.emit()

    def clear(self) -> None:
        if self.session is not None:
            self.session = None
            self.pinned_at = None
            self.label = ""
            self.changed.emit()


def snapshot_store(document) -> SnapshotStore:
    """The document's snapshot holder, created on first use."""
    store = document.findChild(SnapshotStore, STORE_NAME)
    if store is None:
        store = SnapshotStore(document)
    return store


def pin_snapshot(document) -> SnapshotStore:
    """Pin the document's current numbers (no number changes, no undo step)."""
    store = snapshot_store(document)
    last = document.undo_stack.undoText()
    store.pin(document.snapshot(), f"after “{last}”" if last else "as opened")
    return store


class DiffView(DrawingWidget):
    """now − snapshot for the current stage (dock `diffView`)."""

    # never smaller than 3/4 of the figure: its labels then read like the other docks'
    # (~10 px), and a low bottom dock scrolls instead of shrinking the colour bar away
    min_scale = 0.75

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.store = snapshot_store(document)
        self.store.changed.connect(self.refresh)
        self.follow((*NUMBER_SIGNALS, "viewChanged"), settings)

    def minimumSizeHint(self):
        """At least 240 px tall (readable when its dock first opens), and never below
        min_scale of the figure: a fixed minimum height would let it shrink further."""
        hint = super().minimumSizeHint()
        hint.setHeight(max(hint.height(), 240))
        return hint

    def showEvent(self, event) -> None:
        super().showEvent(event)
        hint = self.sizeHint
        widen_on_show(self, lambda: hint().width(), lambda: hint().height())

    # ------------------------------------------------------------------ drawing ----
    def message(self) -> str | None:
        """Why there is no difference to draw (None when there is one)."""
        snap = self.store.session
        if snap is None:
            return "none"
        return shape_problem(self.document.config, snap.config)

    def make_drawing(self):
        doc = self.document
        snap = self.store.session
        if snap is None:
            return MessageDrawing(
                "No snapshot pinned",
                [
                    f"Edit ▸ Pin snapshot ({SHORTCUT}) keeps a copy of the numbers as they "
                    "are now. Pinning changes nothing and is not an undo step.",
                    "Then edit anything — a weight, the mask, the scale, a head switched off — "
                    "and this view shows now − snapshot for the stage the slider shows, with "
                    "the largest change of every matrix in its title.",
                ],
            )
        problem = shape_problem(doc.config, snap.config)
        if problem is not None:
            return MessageDrawing(
                "The snapshot has other dimensions",
                [
                    problem[0].upper() + problem[1:] + ".",
                    "Undo the change of dimensions to compare again, or pin a new snapshot "
                    f"({SHORTCUT}) to start from the numbers as they are now.",
                ],
            )
        v = doc.view
        return difference_figure(
            doc, snap, v.stage, marked_head=v.head, query=v.query, then_label="snapshot"
        )

    # ------------------------------------------------------------- context menu ---
    def contextMenuEvent(self, event):
        menu = self.build_menu()
        menu.exec(event.globalPos())

    def build_menu(self) -> QMenu:
        menu = QMenu(self)
        pin = menu.addAction(f"Pin snapshot now\t{SHORTCUT}")
        pin.setObjectName("diff.pin")
        pin.triggered.connect(lambda: pin_snapshot(self.document))
        clear = menu.addAction("Clear snapshot")
        clear.setObjectName("diff.clear")
        clear.setEnabled(self.store.session is not None)
        clear.triggered.connect(self.store.clear)
        menu.addSeparator()
        export = menu.addAction("Export figure (PNG, SVG, PDF)…")
        export.setObjectName("diff.export")
        export.setEnabled(self.message() is None)
        export.triggered.connect(self.export_figure)
        return menu

    def export_figure(self) -> str | None:
        """Ask for a file name and write the figure there; the written path or None."""
        if self.message() is not None:
            return None
        v = self.document.view

        def drawing(vector: bool):
            return difference_figure(
                self.document,
                self.store.session,
                v.stage,
                marked_head=v.head,
                query=v.query,
                vector=vector,
            )

        return save_drawing_as(
            self,
            "Export now − snapshot",
            f"difference-stage{v.stage}.png",
            drawing,
            self.theme_name,
            self.colormap,
        )


def _trigger_pin(window) -> None:
    store = pin_snapshot(window.document)
    view = window.findChild(QWidget, "diffView")
    if view is not None:
        dock = view.parent()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parent()
        if dock is not None:
            dock.show()
            dock.raise_()
    status = getattr(window, "statusBar", None)
    if status is not None:
        status().showMessage(
            f"Snapshot pinned ({store.label}): the “Now − snapshot” panel shows every change "
            "from here on",
            10000,
        )


def _trigger_clear(window) -> None:
    snapshot_store(window.document).clear()


register_view(ViewSpec("diff", DiffView, "diffView", "Now − snapshot", "diff", "bottom"))
register_action(
    ActionSpec(
        menu="Edit",
        text="Pin &snapshot (A/B)",
        object_name="action.snapshot",
        trigger=_trigger_pin,
        shortcut=SHORTCUT,
        tip="Keep a copy of the numbers as they are now; the “Now − snapshot” panel then "
        "shows what every later edit changed",
    )
)
register_action(
    ActionSpec(
        menu="Edit",
        text="Clear snapshot",
        object_name="action.snapshot.clear",
        trigger=_trigger_clear,
        tip="Forget the pinned snapshot",
    )
)

__all__ = [
    "DiffView",
    "SnapshotStore",
    "follow_numbers",
    "pin_snapshot",
    "save_drawing_as",
    "snapshot_store",
]
