"""The main window: stage bar, attention view and query strip in the centre; the
matrix editors and the configuration in dock widgets; menus, title, status bar.

This module assembles; the jobs live beside it, each an object the window makes and
keeps in a field: `self.files` (file_actions.py: save prompt, open, save, recent files),
`self.edits` (edit_actions.py: copy, paste, randomize, clear mask), `self.recovery`
(autosave.py: autosave and crash recovery), and `self.display` (display_settings.py:
theme, colour map, zoom, show values — a model the views follow). menus.py builds every
action and shortcut; appearance.py makes the application palette and font follow the
display settings.

Window geometry and dock layout are kept in QSettings("mha-gui", "mha-gui") on close.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from mha_gui.engine.panels.notation import rich_text, unicode_text
from mha_gui.views.editors.config_panel import ConfigPanel
from mha_gui.views.editors.matrix_editor import MatrixEditor
from mha_gui.views.settings.display_settings import DisplaySettings, next_zoom, qsettings
from mha_gui.views.stage.attention_view import AttentionView
from mha_gui.views.stage.query_strip import QueryStrip
from mha_gui.views.stage.stage_bar import StageBar
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.window import appearance, registry
from mha_gui.views.window.autosave import Recovery, autosave_folder, autosave_path
from mha_gui.views.window.edit_actions import EditActions
from mha_gui.views.window.export_actions import install_export_actions
from mha_gui.views.window.file_actions import FileActions
from mha_gui.views.window.menus import add_registered_actions, build_menus

__all__ = ["MainWindow", "autosave_folder", "autosave_path"]

STATE_VERSION = 2  # 2: every dock on the left (1 had the weights on the right)
DOCK_WIDTH = 300
# Short dock titles: they are the tabs of one narrow column.
WEIGHT_DOCKS = (("W_Q", "W^Q"), ("W_K", "W^K"), ("W_V", "W^V"), ("W_O", "W_O"))
MESSAGE_MS = 10000


class MainWindow(QMainWindow):
    # the display settings' signals, forwarded (theme: the effective "light" / "dark")
    themeChanged = Signal(str)
    showValuesChanged = Signal(bool)
    zoomChanged = Signal(float)
    colormapChanged = Signal(str)

    def __init__(self, document, parent=None, display: DisplaySettings | None = None):
        super().__init__(parent)
        self.document = document
        document.setParent(self)
        self.display = display if display is not None else DisplaySettings(self)
        appearance.follow(self.display)  # palette, plot colours and font before any view
        self.setObjectName("mainWindow")
        self.files = FileActions(self, document, self.show_message)
        self.edits = EditActions(self, document, self.show_message)
        self.recovery = Recovery(self, document, self.show_message, self._update_title)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )

        self._build_central()
        self._build_docks()
        self._build_registered_views()
        self._size_docks()
        build_menus(self)
        add_registered_actions(self)
        self.edits.follow_mask(self.clear_mask_action)
        install_export_actions(self, self.document)
        self._build_status()
        self._bind_display()
        self.recovery.start_autosave()

        document.fileStateChanged.connect(self._update_title)
        document.saveFinished.connect(self.files.saved_in_background)
        document.configChanged.connect(self._update_summary)
        document.fileStateChanged.connect(self._update_summary)  # a model layer's source
        self._update_title()
        self._update_summary()

        self.resize(1280, 720)
        s = qsettings()
        geometry = s.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = s.value("window/state")
        if state is not None:
            self.restoreState(state, STATE_VERSION)

    # ---------------------------------------------------------------- building ------
    def _build_central(self) -> None:
        central = QWidget(self)
        central.setObjectName("centralArea")
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        self.stage_bar = StageBar(self.document, central)
        self.attention_view = AttentionView(self.document, central)
        self.query_strip = QueryStrip(self.document, central)
        layout.addWidget(self.stage_bar)
        layout.addWidget(self.attention_view, 1)
        layout.addWidget(self.query_strip)
        self.setCentralWidget(central)

    def _dock(self, name: str, title: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(unicode_text(title), self)  # its tab and View ▸ Panels entry
        dock.setObjectName(f"dock.{name}")
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        self.docks[name] = dock
        return dock

    def _build_docks(self) -> None:
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        self.docks: dict[str, QDockWidget] = {}
        doc = self.document
        self.editors: dict[str, MatrixEditor] = {
            "X": MatrixEditor(doc, "X"),
            "W_Q": MatrixEditor(doc, "W_Q", bias="b_Q"),
            "W_K": MatrixEditor(doc, "W_K", bias="b_K"),
            "W_V": MatrixEditor(doc, "W_V", bias="b_V"),
            "W_O": MatrixEditor(doc, "W_O", bias="b_O"),
        }
        self.config_panel = ConfigPanel(doc)
        for editor in self.editors.values():
            editor.message.connect(self.show_message)
        self.attention_view.message.connect(self.show_message)
        self.config_panel.message.connect(self.show_message)

        # One column on the left, so the attention view gets the width of a projector:
        # the editors share a tabbed group (drag a tab out to see two side by side),
        # the configuration sits below them (scrolling when the window is short).
        config_scroll = QScrollArea()
        config_scroll.setObjectName("configScroll")
        config_scroll.setWidget(self.config_panel)
        config_scroll.setWidgetResizable(True)
        config_scroll.setFrameShape(QFrame.Shape.NoFrame)
        config_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._dock("X", "X", self.editors["X"], left)
        self._dock("config", "Configuration", config_scroll, left)
        for name, title in WEIGHT_DOCKS:
            self._dock(name, title, self.editors[name], left)
            self.tabifyDockWidget(self.docks["X"], self.docks[name])
        self.docks["X"].raise_()

    def _size_docks(self) -> None:
        """The editor column's first size (a saved layout replaces it)."""
        width = round(DOCK_WIDTH * max(1.0, self.display.zoom) ** 0.5)
        self.resizeDocks([self.docks["X"]], [width], Qt.Orientation.Horizontal)
        config_height = self.config_panel.sizeHint().height() + 8
        self.resizeDocks(
            [self.docks["X"], self.docks["config"]], [300, config_height], Qt.Orientation.Vertical
        )

    def _build_registered_views(self) -> None:
        """A dock for every view in views/window/registry.py, on the side its spec names.

        They start hidden (View ▸ Panels shows them; the layout is then remembered): at
        1280×720 a column of them beside the editors leaves the stages too little room.
        """
        areas = {
            "left": Qt.DockWidgetArea.LeftDockWidgetArea,
            "right": Qt.DockWidgetArea.RightDockWidgetArea,
            "bottom": Qt.DockWidgetArea.BottomDockWidgetArea,
        }
        self.views: dict[str, QWidget] = {}
        for spec in registry.views():
            widget = spec.create(self.document, self.display)
            content = widget
            if isinstance(widget, DrawingWidget):  # scrolls in a dock narrower than it reads
                content = QScrollArea()
                content.setObjectName(f"{spec.object_name}.scroll")
                content.setWidgetResizable(True)
                content.setFrameShape(QFrame.Shape.NoFrame)
                content.setWidget(widget)
            self._dock(spec.name, spec.title, content, areas[spec.area]).hide()
            self.views[spec.name] = widget

    def _bind_display(self) -> None:
        """Every view follows the display settings (current values now, changes later)."""
        display = self.display
        for view in (self.stage_bar, self.attention_view, self.query_strip):
            view.bind_display(display)
        for editor in self.editors.values():
            editor.bind_display(display)
        display.themeChanged.connect(self.themeChanged)
        display.showValuesChanged.connect(self.showValuesChanged)
        display.zoomChanged.connect(self.zoomChanged)
        display.colormapChanged.connect(self.colormapChanged)

    def _build_status(self) -> None:
        self.summary_label = QLabel(self)
        self.summary_label.setObjectName("configSummary")
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.statusBar().addPermanentWidget(self.summary_label)
        # a refusal ("not a number") is out of date once an edit succeeds: clear it then
        # (messages an edit itself shows come after its undo step, so they stay)
        self.document.undo_stack.indexChanged.connect(self.statusBar().clearMessage)
        # the undo history keeps a byte budget (document/commands.py): say when the
        # oldest steps went, until the history starts again (a file opened)
        self.trimmed_label = QLabel(self)
        self.trimmed_label.setObjectName("undoTrimmed")
        self.trimmed_label.hide()
        self.statusBar().addPermanentWidget(self.trimmed_label)
        self.document.undo_stack.trimmed.connect(self._undo_trimmed)

    def _undo_trimmed(self, steps: int) -> None:
        if not steps:  # a new history (a file opened)
            self.trimmed_label.hide()
            return
        budget = self.document.undo_stack.budget / 2**20
        self.trimmed_label.setText("undo history trimmed")
        self.trimmed_label.setToolTip(
            f"The oldest undo steps were dropped ({steps} just now): the history keeps at "
            f"most {budget:.0f} MB of numbers, and the steps of a large layer hold whole "
            "matrices."
        )
        self.trimmed_label.show()

    # ------------------------------------------------- what other views ask -------
    # The lesson player, the model view and the Open model dialog open sessions through
    # the window (save prompt first); app.py offers recovery after a crash.
    def maybe_save(self) -> bool:
        return self.files.maybe_save()

    def new_from_preset(self, name: str) -> bool:
        return self.files.new_from_preset(name)

    def open_path(self, path, ask: bool = True) -> bool:
        return self.files.open_path(path, ask)

    def offer_recovery(self) -> bool:
        return self.recovery.offer_recovery()

    # ------------------------------------------------------------------ status ------
    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, MESSAGE_MS)

    def _update_title(self) -> None:
        source = self.document.session.source  # "gpt2 · layer 5 of 12" for a model layer
        where = f" — {source}" if source else ""
        self.setWindowTitle(f"{self.document.display_name}[*]{where} — mha-gui")
        self.setWindowModified(self.document.is_modified)

    def _update_summary(self) -> None:
        c = self.document.config
        parts = [f"n={c.n}", f"d_model={c.d_model}", f"h={c.h} ({c.variant})"]
        parts += [f"d_k={c.d_k}", f"d_v={c.d_v}"] + ["causal"] * c.causal
        parts += [f"RoPE θ={c.rope_theta:g}"] * c.rope
        source = self.document.session.source
        # typeset (d_model with its subscript), as every formula of the window
        self.summary_label.setText(
            "&ensp;".join(rich_text(part) for part in parts)
            + (f"&ensp;· {html.escape(source)}" if source else "")
        )

    # ------------------------------------------------------- display settings -------
    # `save=True` is a user's choice (written to QSettings); False only applies it.
    def theme_name(self) -> str:
        """The effective theme, "light" or "dark" ("system" resolves to one of them)."""
        return self.display.theme_name()

    def set_theme(self, name: str, save: bool = True) -> None:
        self.display.set("theme", name, save)

    def colormap(self) -> str:
        return self.display.colormap

    def set_colormap(self, name: str, save: bool = True) -> None:
        """View ▸ Colormap: heatmaps, query strip, editor tints and exported figures."""
        self.display.set("colormap", name, save)

    def show_values(self) -> bool:
        return self.display.show_values

    def set_show_values(self, on: bool, save: bool = True) -> None:
        self.display.set("show_values", bool(on), save)

    def weights_range(self) -> str:
        return self.display.weights_range

    def set_weights_range(self, name: str, save: bool = True) -> None:
        """View ▸ Weights colour range: "fixed" (0–1), or per "head" / "row" maximum."""
        self.display.set("weights_range", name, save)

    def zoom(self) -> float:
        return self.display.zoom

    def set_zoom(self, factor: float, save: bool = True) -> None:
        self.display.set("zoom", factor, save)
        if save:
            self.show_message(f"Zoom {round(self.display.zoom * 100)} %")

    def zoom_in(self) -> None:
        self.set_zoom(next_zoom(self.display.zoom, +1))

    def zoom_out(self) -> None:
        self.set_zoom(next_zoom(self.display.zoom, -1))

    # ------------------------------------------------------------------- help -------
    def show_formulas(self):
        """The Formulas dialog (its module is imported on first use, not at start)."""
        from mha_gui.views.dialogs.formulas_dialog import FormulasDialog

        dialog = self.findChild(FormulasDialog)
        if dialog is None:
            dialog = FormulasDialog(self.document, self)
        dialog.refresh()
        dialog.show()
        dialog.raise_()
        return dialog

    def about(self) -> None:
        QMessageBox.about(
            self,
            "About mha-gui",
            "<b>mha-gui</b> — a teaching simulator of multi-head attention.<br><br>"
            "Edit every number of X, W<sub>i</sub><sup>Q</sup>, W<sub>i</sub><sup>K</sup>, "
            "W<sub>i</sub><sup>V</sup> and W<sub>O</sub> and watch every stage update, "
            "head by head and query by query.<br><br>"
            "Alt+drag or middle-drag a cell to scrub its value; Ctrl+wheel nudges it.<br>"
            "Ctrl+click a score or weight to block that key for that query (again to open "
            "it); Edit ▸ Clear mask opens them all.",
        )

    # ---------------------------------------------------------------- closing -------
    def save_settings(self) -> None:
        s = qsettings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(STATE_VERSION))

    def closeEvent(self, event) -> None:
        if not self.files.maybe_save():
            event.ignore()
            return
        self.document.wait_for_saves()  # a background save under way ends first
        self.save_settings()
        self.recovery.stop_autosave()
        event.accept()
