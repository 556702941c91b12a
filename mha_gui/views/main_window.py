"""The main window: stage bar, attention view and query strip in the centre; the
matrix editors and the configuration in dock widgets; menus, title, status bar.

Window geometry, dock layout, theme, zoom, "show values" and recent files are kept in
QSettings("mha-gui", "mha-gui").
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QDateTime, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFrame,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from mha_gui import theme
from mha_gui.engine.presets import PRESETS
from mha_gui.engine.session import load_session, save_session
from mha_gui.engine.stages import STAGES, formula_for, shapes_line
from mha_gui.views import autosave
from mha_gui.views.attention_view import AttentionView
from mha_gui.views.config_panel import ConfigPanel
from mha_gui.views.export_actions import install_export_actions
from mha_gui.views.matrix_editor import MatrixEditor, MatrixTable
from mha_gui.views.query_strip import QueryStrip
from mha_gui.views.stage_bar import StageBar

SESSION_FILTER = "mha-gui sessions (*.json);;All files (*)"
MAX_RECENT = 8
ZOOM_STEPS = (0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5)
STATE_VERSION = 2  # 2: every dock on the left (1 had the weights on the right)
DOCK_WIDTH = 300
# Short dock titles: they are the tabs of one narrow column.
WEIGHT_DOCKS = (("W_Q", "W^Q"), ("W_K", "W^K"), ("W_V", "W^V"), ("W_O", "W_O"))
MESSAGE_MS = 10000
AUTOSAVE_MS = 30000

# What the application looked like before any theme or zoom was applied ("system").
_system_palette: QPalette | None = None
_base_point_size: float | None = None


def settings() -> QSettings:
    return QSettings("mha-gui", "mha-gui")


def autosave_folder() -> Path:
    """Beside the settings file (so tests, which move the settings, never touch home)."""
    return Path(settings().fileName()).parent


def autosave_path() -> Path:
    """This running copy's autosave (its process id is in the name)."""
    return autosave.data_path(autosave_folder())


def qpalette(p: theme.Palette) -> QPalette:
    """A QPalette from one of the shared theme palettes (window and figures match)."""
    pal = QPalette()
    C = QPalette.ColorRole  # noqa: N806
    text, muted = QColor(p.text), QColor(p.muted)
    pal.setColor(C.Window, QColor(p.panel))
    pal.setColor(C.WindowText, text)
    pal.setColor(C.Base, QColor(p.background))
    pal.setColor(C.AlternateBase, QColor(p.panel))
    pal.setColor(C.Text, text)
    pal.setColor(C.Button, QColor(p.panel))
    pal.setColor(C.ButtonText, text)
    pal.setColor(C.ToolTipBase, QColor(p.background))
    pal.setColor(C.ToolTipText, text)
    pal.setColor(C.PlaceholderText, muted)
    pal.setColor(C.BrightText, QColor("#ff5252"))
    pal.setColor(C.Highlight, QColor("#2f6fd0" if p.name == "light" else "#4a8ef0"))
    pal.setColor(C.HighlightedText, QColor("#ffffff"))
    pal.setColor(C.Link, QColor("#1a5fb4" if p.name == "light" else "#8ab4f8"))
    grid = QColor(p.grid)
    pal.setColor(C.Mid, grid)
    pal.setColor(C.Midlight, grid.lighter(110))
    pal.setColor(C.Dark, grid.darker(130))
    pal.setColor(C.Light, QColor(p.background).lighter(110))
    pal.setColor(C.Shadow, QColor("#000000"))
    for role in (C.WindowText, C.Text, C.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, muted)
    return pal


class FormulasDialog(QDialog):
    """Help ▸ Formulas and shapes: every stage's formula and operand shapes, for the
    current configuration."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("formulasDialog")
        self.setWindowTitle("Formulas and shapes — mha-gui")
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("formulasText")
        layout.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.resize(760, 520)
        document.configChanged.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        c = self.document.config
        rows = []
        for s in STAGES:
            rows.append(
                "<tr>"
                f"<td valign='top'><b>{s.index}. {html.escape(s.title)}</b></td>"
                f"<td valign='top'><span style='white-space:pre; font-size:large'>"
                f"{html.escape(formula_for(s, c))}</span><br>"
                f"<span style='white-space:pre'>{html.escape(shapes_line(s, c))}</span><br>"
                f"<i>{html.escape(s.what)}</i></td></tr>"
            )
        summary = (
            f"n = {c.n} tokens, d_model = {c.d_model}, h = {c.h} query heads, "
            f"{c.h_kv} K/V head(s) ({c.variant}), d_k = {c.d_k}, d_v = {c.d_v}, "
            f"scale = {c.effective_scale:.4g}"
            + (" (1/√d_k)" if c.scale is None else " (custom)")
            + (", causal mask" if c.causal else "")
            + (", biases on" if c.bias else "")
        )
        self.browser.setHtml(
            f"<p>{html.escape(summary)}</p>"
            "<table cellspacing='0' cellpadding='6' border='0'>" + "".join(rows) + "</table>"
        )

    def text(self) -> str:
        return self.browser.toPlainText()


class MainWindow(QMainWindow):
    themeChanged = Signal(str)  # "light" or "dark"
    showValuesChanged = Signal(bool)
    zoomChanged = Signal(float)
    colormapChanged = Signal(str)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        global _system_palette, _base_point_size
        app = QApplication.instance()
        if _system_palette is None:
            _system_palette = QPalette(app.palette())
        if _base_point_size is None:
            _base_point_size = app.font().pointSizeF()
        self.document = document
        document.setParent(self)
        self.setObjectName("mainWindow")
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        s = settings()
        self._theme_setting = str(s.value("view/theme", "light"))
        if self._theme_setting not in ("light", "dark", "system"):
            self._theme_setting = "light"
        self._zoom = _to_float(s.value("view/zoom", 1.0), 1.0)
        self._show_values = _to_bool(s.value("view/showValues", True))
        self._colormap = str(s.value("view/colormap", theme.DEFAULT_COLORMAP))
        if self._colormap not in theme.COLORMAP_CHOICES:
            self._colormap = theme.DEFAULT_COLORMAP
        self._apply_pyqtgraph_colors()

        self._build_central()
        self._build_docks()
        self._build_menus()
        install_export_actions(self, self.document)
        self._build_status()

        self._autosave_timer = QTimer(self)
        self._autosave_timer.setInterval(AUTOSAVE_MS)
        self._autosave_timer.timeout.connect(self.autosave)
        self._autosave_timer.start()

        document.fileStateChanged.connect(self._update_title)
        document.fileStateChanged.connect(self._drop_autosave_if_clean)
        document.configChanged.connect(self._update_summary)
        self._update_title()
        self._update_summary()

        self.resize(1280, 720)
        geometry = s.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = s.value("window/state")
        if state is not None:
            self.restoreState(state, STATE_VERSION)
        self.set_theme(self._theme_setting, save=False)
        self.set_zoom(self._zoom, save=False)
        self.set_show_values(self._show_values, save=False)
        self.set_colormap(self._colormap, save=False)

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
        dock = QDockWidget(title, self)
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
        width = round(DOCK_WIDTH * max(1.0, self._zoom) ** 0.5)
        self.resizeDocks([self.docks["X"]], [width], Qt.Orientation.Horizontal)
        config_height = self.config_panel.sizeHint().height() + 8
        self.resizeDocks(
            [self.docks["X"], self.docks["config"]], [300, config_height], Qt.Orientation.Vertical
        )

    def _action(self, menu, text, slot, shortcut=None, name=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if name:
            action.setObjectName(name)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        # File
        file_menu = bar.addMenu("&File")
        file_menu.setObjectName("menu.file")
        new_menu = file_menu.addMenu("&New from preset")
        new_menu.setObjectName("menu.new")
        names = [p for p in PRESETS if p != "random"] + ["random"]
        for name in names:
            action = QAction(f"{name}  —  {PRESETS[name].summary}", self)
            action.setObjectName(f"action.new.{name}")
            action.triggered.connect(lambda _=False, n=name: self.new_from_preset(n))
            new_menu.addAction(action)
        self._action(
            file_menu, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open, "action.open"
        )
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("menu.recent")
        self._recent_actions: list[QAction] = []
        self._recent_empty = QAction("(no recent files)", self)
        self._recent_empty.setEnabled(False)
        self.recent_menu.addAction(self._recent_empty)
        self._recent_end = self.recent_menu.addSeparator()
        self._recent_clear = QAction("Clear list", self)
        self._recent_clear.triggered.connect(self._clear_recent)
        self.recent_menu.addAction(self._recent_clear)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        file_menu.addSeparator()
        self._action(file_menu, "&Save", self.save, QKeySequence.StandardKey.Save, "action.save")
        self._action(
            file_menu,
            "Save &As…",
            self.save_as,
            QKeySequence.StandardKey.SaveAs
            if not QKeySequence(QKeySequence.StandardKey.SaveAs).isEmpty()
            else "Ctrl+Shift+S",
            "action.saveAs",
        )
        file_menu.addSeparator()
        self.export_menu = file_menu.addMenu("&Export")
        self.export_menu.setObjectName("menu.export")
        file_menu.addSeparator()
        quit_action = self._action(file_menu, "&Quit", self.close, "Ctrl+Q", "action.quit")
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)

        # Edit
        edit_menu = bar.addMenu("&Edit")
        edit_menu.setObjectName("menu.edit")
        stack = self.document.undo_stack
        undo = stack.createUndoAction(self, "&Undo")
        undo.setObjectName("action.undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = stack.createRedoAction(self, "&Redo")
        redo.setObjectName("action.redo")
        # the platform's redo keys, plus Ctrl+Y that Windows users type everywhere
        redo_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)
        if QKeySequence("Ctrl+Y") not in redo_keys:
            redo_keys.append(QKeySequence("Ctrl+Y"))
        redo.setShortcuts(redo_keys)
        edit_menu.addAction(undo)
        edit_menu.addAction(redo)
        edit_menu.addSeparator()
        self._action(edit_menu, "&Copy", self.copy, QKeySequence.StandardKey.Copy, "action.copy")
        self._action(
            edit_menu, "&Paste", self.paste, QKeySequence.StandardKey.Paste, "action.paste"
        )
        edit_menu.addSeparator()
        self._action(edit_menu, "Randomize &weights…", self.randomize, None, "action.randomize")
        self._action(edit_menu, "Reset &example", self.reset_example, None, "action.reset")
        self.clear_mask_action = self._action(
            edit_menu, "Clear &mask", self.clear_mask, None, "action.clearMask"
        )
        self.clear_mask_action.setStatusTip(
            "Open every pair blocked by Ctrl+click (the causal mask stays as it is)"
        )
        self.document.traceChanged.connect(self._update_clear_mask)
        self.document.configChanged.connect(self._update_clear_mask)
        self._update_clear_mask()

        # View
        view_menu = bar.addMenu("&View")
        view_menu.setObjectName("menu.view")
        theme_menu = view_menu.addMenu("&Theme")
        theme_menu.setObjectName("menu.theme")
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for key, label in (("light", "&Light"), ("dark", "&Dark"), ("system", "&System")):
            action = QAction(label, self, checkable=True)
            action.setObjectName(f"action.theme.{key}")
            action.triggered.connect(lambda _=False, k=key: self.set_theme(k))
            group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[key] = action
        colormap_menu = view_menu.addMenu("&Colormap")
        colormap_menu.setObjectName("menu.colormap")
        colormaps = QActionGroup(self)
        self.colormap_actions: dict[str, QAction] = {}
        for key, (label, _signed, _weights) in theme.COLORMAP_CHOICES.items():
            action = QAction(label, self, checkable=True)
            action.setObjectName(f"action.colormap.{key}")
            action.triggered.connect(lambda _=False, k=key: self.set_colormap(k))
            colormaps.addAction(action)
            colormap_menu.addAction(action)
            self.colormap_actions[key] = action
        self.show_values_action = QAction("Show &values in cells", self, checkable=True)
        self.show_values_action.setObjectName("action.showValues")
        self.show_values_action.toggled.connect(self.set_show_values)
        view_menu.addAction(self.show_values_action)
        view_menu.addSeparator()
        self._action(
            view_menu, "Zoom &in", self.zoom_in, QKeySequence.StandardKey.ZoomIn, "action.zoomIn"
        ).setShortcuts([QKeySequence("Ctrl++"), QKeySequence("Ctrl+=")])
        self._action(
            view_menu,
            "Zoom &out",
            self.zoom_out,
            QKeySequence.StandardKey.ZoomOut,
            "action.zoomOut",
        ).setShortcuts([QKeySequence("Ctrl+-")])
        self._action(
            view_menu, "&Actual size", lambda: self.set_zoom(1.0), "Ctrl+0", "action.zoom1"
        )
        view_menu.addSeparator()
        panels = view_menu.addMenu("&Panels")
        panels.setObjectName("menu.panels")
        for dock in self.docks.values():
            panels.addAction(dock.toggleViewAction())

        # Help
        help_menu = bar.addMenu("&Help")
        help_menu.setObjectName("menu.help")
        self._action(
            help_menu,
            "&Formulas and shapes",
            self.show_formulas,
            QKeySequence.StandardKey.HelpContents,
            "action.formulas",
        )
        self._action(help_menu, "&About mha-gui", self.about, None, "action.about")

    def _build_status(self) -> None:
        self.summary_label = QLabel(self)
        self.summary_label.setObjectName("configSummary")
        self.statusBar().addPermanentWidget(self.summary_label)

    # ------------------------------------------------------------------ status ------
    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, MESSAGE_MS)

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.document.display_name}[*] — mha-gui")
        self.setWindowModified(self.document.is_modified)

    def _update_summary(self) -> None:
        c = self.document.config
        self.summary_label.setText(
            f"n={c.n}  d_model={c.d_model}  h={c.h} ({c.variant})  d_k={c.d_k}  d_v={c.d_v}"
            + ("  causal" if c.causal else "")
        )

    # --------------------------------------------------------------- settings -------
    def theme_name(self) -> str:
        """The effective theme, "light" or "dark" ("system" resolves to one of them)."""
        if self._theme_setting in ("light", "dark"):
            return self._theme_setting
        base = (_system_palette or QApplication.instance().palette()).color(
            QPalette.ColorRole.Window
        )
        return "dark" if base.lightness() < 128 else "light"

    def show_values(self) -> bool:
        return self._show_values

    def zoom(self) -> float:
        return self._zoom

    def _apply_pyqtgraph_colors(self) -> None:
        p = theme.palette(self.theme_name())
        pg.setConfigOptions(background=p.background, foreground=p.text, antialias=True)

    def set_theme(self, name: str, save: bool = True) -> None:
        if name not in ("light", "dark", "system"):
            raise ValueError(f"unknown theme {name!r}")
        self._theme_setting = name
        app = QApplication.instance()
        if name == "system":
            app.setPalette(QPalette(_system_palette))
        else:
            app.setPalette(qpalette(theme.palette(name)))
        self._apply_pyqtgraph_colors()
        self.theme_actions[name].setChecked(True)
        effective = self.theme_name()
        for view in (self.stage_bar, self.attention_view, self.query_strip):
            if hasattr(view, "set_theme"):
                view.set_theme(effective)
        if save:
            settings().setValue("view/theme", name)
        self.themeChanged.emit(effective)

    def colormap(self) -> str:
        return self._colormap

    def set_colormap(self, name: str, save: bool = True) -> None:
        """View ▸ Colormap: heatmaps, query strip, editor tints and exported figures."""
        theme.check_colormap(name)
        self._colormap = name
        self.colormap_actions[name].setChecked(True)
        for view in (self.attention_view, self.query_strip, *self.editors.values()):
            view.set_colormap(name)
        if save:
            settings().setValue("view/colormap", name)
        self.colormapChanged.emit(name)

    def set_show_values(self, on: bool, save: bool = True) -> None:
        on = bool(on)
        self._show_values = on
        if self.show_values_action.isChecked() != on:
            self.show_values_action.setChecked(on)  # re-enters once, harmless
            return
        for view in (self.attention_view, self.query_strip):
            if hasattr(view, "set_show_values"):
                view.set_show_values(on)
        if save:
            settings().setValue("view/showValues", on)
        self.showValuesChanged.emit(on)

    def set_zoom(self, factor: float, save: bool = True) -> None:
        factor = max(ZOOM_STEPS[0], min(ZOOM_STEPS[-1], float(factor)))
        self._zoom = factor
        app = QApplication.instance()
        font = app.font()
        font.setPointSizeF(max(1.0, (_base_point_size or 10.0) * factor))
        app.setFont(font)
        for view in (self.stage_bar, self.attention_view, self.query_strip):
            if hasattr(view, "set_zoom"):
                view.set_zoom(factor)
        if save:
            settings().setValue("view/zoom", factor)
            self.show_message(f"Zoom {round(factor * 100)} %")
        self.zoomChanged.emit(factor)

    def zoom_in(self) -> None:
        bigger = [z for z in ZOOM_STEPS if z > self._zoom + 1e-9]
        self.set_zoom(bigger[0] if bigger else ZOOM_STEPS[-1])

    def zoom_out(self) -> None:
        smaller = [z for z in ZOOM_STEPS if z < self._zoom - 1e-9]
        self.set_zoom(smaller[-1] if smaller else ZOOM_STEPS[0])

    # ------------------------------------------------------------------ files -------
    def maybe_save(self) -> bool:
        """True if it is fine to drop the current state (saved, discarded or unchanged)."""
        if not self.document.is_modified:
            return True
        answer = QMessageBox.warning(
            self,
            "Unsaved changes",
            f"{self.document.display_name} has changes that are not saved.\n"
            "Save them before continuing?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_from_preset(self, name: str) -> bool:
        if not self.maybe_save():
            return False
        try:
            self.document.open_preset(name)
        except (ValueError, OSError) as exc:
            QMessageBox.critical(self, "Cannot open preset", str(exc))
            return False
        self.show_message(f"New session from preset {name!r}: {PRESETS[name].summary}")
        return True

    def open_dialog(self) -> bool:
        if not self.maybe_save():
            return False
        start = str(self.document.path.parent) if self.document.path else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open session", start, SESSION_FILTER)
        if not path:
            return False
        return self.open_path(path, ask=False)

    def open_path(self, path, ask: bool = True) -> bool:
        """Open a session file; on error say why and change nothing."""
        if ask and not self.maybe_save():
            return False
        try:
            self.document.open_file(path)
        except (ValueError, OSError) as exc:
            QMessageBox.critical(self, "Cannot open session", f"{path}:\n{exc}")
            return False
        self._add_recent(path)
        self.show_message(f"Opened {path}")
        return True

    def save(self) -> bool:
        if self.document.path is None:
            return self.save_as()
        return self._save_to(self.document.path)

    def save_as(self) -> bool:
        if self.document.path is not None:
            start = str(self.document.path)
        else:
            start = self.document.display_name.split(" ")[0] + ".json"
        path, _ = QFileDialog.getSaveFileName(self, "Save session as", start, SESSION_FILTER)
        if not path:
            return False
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(".json")
        return self._save_to(path)

    def _save_to(self, path) -> bool:
        try:
            saved = self.document.save(path)
        except (ValueError, OSError) as exc:
            QMessageBox.critical(self, "Cannot save session", f"{path}:\n{exc}")
            return False
        self._add_recent(saved)
        self.show_message(f"Saved {saved}")
        return True

    def recent_files(self) -> list[str]:
        value = settings().value("recentFiles", [])
        if value is None:
            return []
        if isinstance(value, str):
            return [value] if value else []
        return [str(v) for v in value]

    def _add_recent(self, path) -> None:
        path = str(Path(path).resolve())
        recent = [p for p in self.recent_files() if p != path]
        settings().setValue("recentFiles", [path, *recent][:MAX_RECENT])
        self._fill_recent()

    def _fill_recent(self) -> None:
        # Actions are reused rather than deleted with QMenu.clear(): deleting wrapped
        # actions from C++ while Python holds them is how PySide apps crash.
        recent = self.recent_files()
        actions = self._recent_actions
        while len(actions) < MAX_RECENT:
            action = QAction(self)
            action.triggered.connect(self._open_recent)
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

    def _open_recent(self) -> None:
        action = self.sender()
        if isinstance(action, QAction) and action.data():
            self.open_path(str(action.data()))

    def _clear_recent(self) -> None:
        settings().setValue("recentFiles", [])
        self._fill_recent()

    # ------------------------------------------------------------------- edit -------
    def focused_table(self) -> MatrixTable | None:
        widget = QApplication.focusWidget()
        while widget is not None and not isinstance(widget, MatrixTable):
            widget = widget.parentWidget()
        return widget

    def copy(self) -> None:
        table = self.focused_table()
        if table is None:
            self.show_message("Copy: click a cell of a matrix editor first")
            return
        table.copy_selection()

    def paste(self) -> None:
        table = self.focused_table()
        if table is None:
            self.show_message("Paste: click the cell of a matrix editor to paste at")
            return
        table.paste()

    def randomize(self) -> None:
        seed, ok = QInputDialog.getInt(
            self,
            "Randomize weights",
            "Seed (the same seed always gives the same weights; X is kept):",
            0,
            0,
            2**31 - 1,
        )
        if ok:
            self.document.randomize(seed)
            self.show_message(f"Weights randomized with seed {seed} (Undo brings them back)")

    def clear_mask(self) -> None:
        """Edit ▸ Clear mask: drop the extra mask (one undo step); causal stays."""
        mask = self.document.session.mask
        if mask is None or not mask.any():
            return
        self.document.set_mask(None, "Clear mask")
        self.show_message("Extra mask cleared (Undo brings it back)")

    def _update_clear_mask(self, *_args) -> None:
        mask = self.document.session.mask
        self.clear_mask_action.setEnabled(mask is not None and bool(mask.any()))

    def reset_example(self) -> None:
        self.document.reset_to_preset()
        self.show_message("Example reset (Undo brings your numbers back)")

    # ------------------------------------------------------------------- help -------
    def show_formulas(self) -> FormulasDialog:
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

    # --------------------------------------------------------------- autosave -------
    def autosave(self) -> Path | None:
        """Write unsaved work beside the settings, so a crash loses at most a few seconds.

        The file name carries this process's id (two running copies never share one) and
        a small `.origin` file beside it remembers which file the work belongs to.
        """
        if not self.document.is_modified:
            return None
        path = autosave_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            autosave.write_origin(path, self.document.path)
            return save_session(self.document.session, path)
        except (OSError, ValueError) as exc:
            self.show_message(f"Autosave failed: {exc}")
            return None

    def _drop_autosave(self) -> None:
        autosave.Autosave(autosave_path(), os.getpid(), None).remove()

    def _drop_autosave_if_clean(self) -> None:
        if not self.document.is_modified:
            self._drop_autosave()

    def offer_recovery(self) -> bool:
        """After a crash: offer the newest orphaned autosave back. True if recovered.

        Autosaves of copies of the app that are still running are left alone. The
        recovered work keeps its original file name (Save writes there) and stays
        marked as modified.
        """
        found = autosave.orphaned(autosave_folder())
        if not found:
            return False
        lost = found[0]
        when = QDateTime.fromSecsSinceEpoch(int(lost.data.stat().st_mtime)).toString(
            "yyyy-MM-dd hh:mm"
        )
        what = f"your changes to {lost.origin.name}" if lost.origin else "some changes"
        answer = QMessageBox.question(
            self,
            "Recover unsaved work",
            f"mha-gui was closed without saving {what} (autosaved {when}).\nRecover them?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes,
        )
        if answer != QMessageBox.StandardButton.Yes:
            lost.remove()
            return False
        try:
            session = load_session(lost.data)
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot recover", f"{lost.data}:\n{exc}")
            lost.remove()
            return False
        self.document.open_session(session, path=lost.origin)
        self.document.undo_stack.resetClean()  # recovered work is not saved anywhere yet
        self._update_title()
        self.autosave()  # now this process's autosave holds it …
        if lost.data != autosave_path():
            lost.remove()  # … and the orphan can go
        where = f" of {lost.origin}" if lost.origin else ""
        self.show_message(f"Recovered the autosaved work{where}: save it to keep it")
        return True

    # ---------------------------------------------------------------- closing -------
    def save_settings(self) -> None:
        s = settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(STATE_VERSION))

    def closeEvent(self, event) -> None:  # noqa: N802
        if not self.maybe_save():
            event.ignore()
            return
        self.save_settings()
        self._autosave_timer.stop()
        self._drop_autosave()
        event.accept()


def _to_bool(value) -> bool:
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes", "on")
    return bool(value)


def _to_float(value, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default
