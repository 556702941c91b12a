"""File ▸ Export, Edit ▸ Copy figure and the head panels' right-click menu.

Everything goes through `mha_gui.export.files.export_to`, the same function as
`mha-gui export`, so a figure exported from the window is the CLI's figure. Errors show
in a message box; the export writes through a temporary file, so nothing already on
disk is overwritten by a failed export.

The main window calls `install_export_actions(self, self.document)` once, after its
menus exist (it looks for the QMenus named `menu.export` and `menu.edit`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QMenu,
    QMessageBox,
    QSpinBox,
)

from mha_gui.engine.layer.values import to_tsv
from mha_gui.engine.panels.stages import STAGES
from mha_gui.export.figure import DEFAULT_PNG_WIDTH, render_image
from mha_gui.export.files import WIDTH_RANGE, export_to
from mha_gui.export.latex import matrix_bmatrix
from mha_gui.theme import COLORMAP_CHOICES, DEFAULT_COLORMAP
from mha_gui.views.settings.display_settings import qsettings

FIGURE_FILTER = "PNG image (*.png);;SVG vector figure (*.svg);;PDF vector figure (*.pdf)"
FILTER_SUFFIX = {"PNG": ".png", "SVG": ".svg", "PDF": ".pdf", "GIF": ".gif", "LaTeX": ".tex"}


class FigureOptionsDialog(QDialog):
    """Width, theme, heads and query of a figure export, prefilled from the window."""

    def __init__(self, parent, defaults: dict, suffix: str, config, tokens):
        super().__init__(parent)
        self.setWindowTitle("Figure options")
        form = QFormLayout(self)
        self.width = QSpinBox(self)
        self.width.setRange(*WIDTH_RANGE)
        self.width.setSingleStep(100)
        self.width.setSuffix(" px")
        self.width.setValue(int(defaults.get("width") or DEFAULT_PNG_WIDTH))
        self.width.setEnabled(suffix in (".png", ".gif"))
        form.addRow("Width", self.width)
        self.theme = QComboBox(self)
        self.theme.addItems(["light", "dark"])
        self.theme.setCurrentText(defaults.get("theme", "light"))
        form.addRow("Theme", self.theme)
        self.colormap = QComboBox(self)
        for key, (label, _signed, _weights) in COLORMAP_CHOICES.items():
            self.colormap.addItem(label, key)
        self.colormap.setCurrentIndex(
            max(0, self.colormap.findData(defaults.get("colormap", DEFAULT_COLORMAP)))
        )
        form.addRow("Colormap", self.colormap)
        self.head = QComboBox(self)
        self.head.addItem("All heads (inspected head framed)", None)
        for i in range(config.h):
            self.head.addItem(f"Head {i} only", i)
        self.head.setCurrentIndex(0 if defaults.get("head") is None else defaults["head"] + 1)
        form.addRow("Heads", self.head)
        self.query = QComboBox(self)
        self.query.addItem("No query highlighted", None)
        for j, tok in enumerate(tokens):
            self.query.addItem(f"{j}: {tok}", j)
        q = defaults.get("query")
        self.query.setCurrentIndex(0 if q is None else q + 1)
        form.addRow("Query row", self.query)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> dict:
        return {
            "width": self.width.value() if self.width.isEnabled() else None,
            "theme": self.theme.currentText(),
            "colormap": self.colormap.currentData(),
            "head": self.head.currentData(),
            "query": self.query.currentData(),
        }


def ask_figure_options(parent, defaults: dict, suffix: str, config, tokens) -> dict | None:
    """The options dialog; None when cancelled. (Tests replace this function.)"""
    dialog = FigureOptionsDialog(parent, defaults, suffix, config, tokens)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.values()
    finally:
        dialog.deleteLater()


def exec_menu(menu: QMenu, global_pos) -> None:
    """Show a context menu and wait for the choice. (Tests replace this function.)"""
    menu.exec(global_pos)


class ExportActions(QObject):
    def __init__(self, window, document):
        super().__init__(window)
        self.window, self.document = window, document
        self.actions: dict[str, QAction] = {}
        menu = window.findChild(QMenu, "menu.export")
        if menu is None:
            menu = window.menuBar().addMenu("&Export")
            menu.setObjectName("menu.export")
        self.menu = menu
        self._add(menu, "exportFigure", "&Figure (PNG, SVG, PDF)…", self.export_figure, "Ctrl+E")
        self._add(menu, "exportGif", "&Walkthrough (GIF)…", self.export_gif)
        self._add(menu, "exportHandout", "&Handout (PDF)…", self.export_handout)
        self._add(menu, "exportLatex", "&LaTeX of this stage…", self.export_latex)
        self._add(menu, "exportNpz", "&Arrays (.npz)…", self.export_npz)
        edit = window.findChild(QMenu, "menu.edit")
        if edit is not None:
            edit.addSeparator()
            self._add(edit, "copyFigure", "Copy &figure", self.copy_figure, "Ctrl+Shift+C")
        view = getattr(window, "attention_view", None)
        if view is not None and hasattr(view, "panelContextMenuRequested"):
            view.panelContextMenuRequested.connect(self.show_panel_menu)

    # ------------------------------------------------------------------ helpers ----
    def _add(self, menu, name, text, slot, shortcut=None) -> QAction:
        action = QAction(text, self.window)
        action.setObjectName(f"action.{name}")
        if shortcut:
            action.setShortcut(shortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        self.actions[name] = action
        return action

    def _window(self, getter: str, default: str) -> str:
        """A display setting as the window shows it (`default` for a bare parent widget)."""
        get = getattr(self.window, getter, None)
        return get() if callable(get) else default

    def theme(self) -> str:
        return self._window("theme_name", "light")

    def colormap(self) -> str:
        return self._window("colormap", DEFAULT_COLORMAP)

    def weights_range(self) -> str:
        return self._window("weights_range", "fixed")

    def defaults(self) -> dict:
        v = self.document.view
        return {
            "stage": STAGES[v.stage].name,
            "head": None,
            "query": v.query,
            "theme": self.theme(),
            "colormap": self.colormap(),
        }

    def _export(self, path: Path, **options) -> Path | None:
        """export_to with the window's weights colour range: a file looks like the window."""
        options.setdefault("weights_range", self.weights_range())
        return self._write(path, **options)

    def _ask_path(self, title: str, name: str, filters: str) -> Path | None:
        settings = qsettings()
        folder = str(settings.value("export/folder", str(Path.home())))
        path, chosen = QFileDialog.getSaveFileName(
            self.window, title, str(Path(folder) / name), filters
        )
        if not path:
            return None
        p = Path(path)
        if not p.suffix:
            for key, suffix in FILTER_SUFFIX.items():
                if chosen.startswith(key):
                    p = p.with_suffix(suffix)
                    break
        settings.setValue("export/folder", str(p.parent))
        return p

    def _write(self, path: Path, **options) -> Path | None:
        try:
            out = export_to(self.document.snapshot(), path, **options)
        except Exception as exc:
            QMessageBox.critical(self.window, "Export failed", f"{path.name}: {exc}")
            return None
        status = getattr(self.window, "statusBar", None)
        if callable(status):
            status().showMessage(f"Exported {out}", 5000)
        return out

    def _base_name(self) -> str:
        return f"attention-{STAGES[self.document.view.stage].name}"

    # ------------------------------------------------------------------ actions ----
    def export_figure(self, head=None) -> Path | None:
        path = self._ask_path("Export figure", self._base_name() + ".png", FIGURE_FILTER)
        if path is None:
            return None
        defaults = self.defaults()
        defaults["head"] = head
        options = ask_figure_options(
            self.window,
            defaults,
            path.suffix.lower(),
            self.document.config,
            self.document.tokens,
        )
        if options is None:
            return None
        options = {"colormap": defaults["colormap"], **options}  # the window's, unless chosen
        return self._export(path, stage=defaults["stage"], **options)

    def export_gif(self) -> Path | None:
        path = self._ask_path("Export walkthrough", "attention-walkthrough.gif", "GIF (*.gif)")
        if path is None:
            return None
        d = self.defaults()
        return self._export(path, query=d["query"], theme=d["theme"], colormap=d["colormap"])

    def export_handout(self) -> Path | None:
        path = self._ask_path("Export handout", "attention-handout.pdf", "PDF handout (*.pdf)")
        if path is None:
            return None
        return self._export(
            path,
            handout=True,
            query=self.document.view.query,
            theme="light",
            colormap=self.colormap(),
        )

    def export_latex(self) -> Path | None:
        path = self._ask_path("Export LaTeX", self._base_name() + ".tex", "LaTeX (*.tex)")
        if path is None:
            return None
        return self._export(path, stage=self.defaults()["stage"])

    def export_npz(self) -> Path | None:
        path = self._ask_path("Export arrays", "attention-arrays.npz", "NumPy arrays (*.npz)")
        if path is None:
            return None
        return self._export(path)

    def figure_image(self, head=None):
        d = self.defaults()
        return render_image(
            self.document.snapshot(),
            d["stage"],
            head=head,
            query=d["query"],
            theme_name=d["theme"],
            colormap=d["colormap"],
            trace=self.document.trace(),
            weights_range=self.weights_range(),
        )

    def copy_figure(self, head=None) -> None:
        QGuiApplication.clipboard().setImage(self.figure_image(head))

    # ------------------------------------------------------------ panel menu -------
    def panel_menu(self, stage_name: str, head: int, pair: tuple[int, int] | None = None) -> QMenu:
        """The right-click menu of one panel (head -1: the stage's X, H or Y panel).

        `pair` (query, key): the cell right-clicked on an n×n panel (scores, weights),
        which the menu offers to block or open."""
        one = None if head is None or head < 0 else head
        menu = QMenu(self.window)
        menu.setObjectName("menu.panel")
        view = getattr(self.window, "attention_view", None)
        if pair is not None and stage_name in ("scores", "weights") and view is not None:
            self._add_block_entry(menu, view, *pair)
            menu.addSeparator()
        label = "this panel" if one is not None else "this figure"
        menu.addAction(f"Export {label}…", lambda: self.export_figure(head=one)).setObjectName(
            "action.exportPanel"
        )
        menu.addAction(f"Copy {label}", lambda: self.copy_figure(head=one)).setObjectName(
            "action.copyPanel"
        )
        if view is not None and hasattr(view, "panel_matrix"):
            menu.addSeparator()
            menu.addAction(
                "Copy matrix as LaTeX", lambda: self.copy_matrix(stage_name, head, "latex")
            ).setObjectName("action.copyLatex")
            menu.addAction(
                "Copy matrix as TSV", lambda: self.copy_matrix(stage_name, head, "tsv")
            ).setObjectName("action.copyTsv")
        if getattr(view, "hides_cells", False):  # an exercise: the numbers stay hidden
            for action in menu.actions():
                if action.objectName() != "action.toggleBlocked" and not action.isSeparator():
                    action.setEnabled(False)
                    action.setToolTip("not during an exercise: it would show the hidden cells")
            menu.setToolTipsVisible(True)
        return menu

    def _add_block_entry(self, menu: QMenu, view, query: int, key: int) -> None:
        tokens = self.document.tokens
        mask = self.document.mask
        blocked = mask is not None and bool(mask[query, key])
        pair = f"“{tokens[query]}” → “{tokens[key]}”"
        if view.causal_blocks(query, key):
            text = f"Unblock this key for this query ({pair}: causal mask)"
        elif blocked:
            text = f"Unblock this key for this query ({pair})"
        else:
            text = f"Block this key for this query ({pair})"
        action = menu.addAction(text.replace("&", "&&"), lambda: view.toggle_blocked(query, key))
        action.setObjectName("action.toggleBlocked")
        action.setToolTip("Ctrl+click a cell does the same; every head shares the mask")

    def show_panel_menu(self, stage_name: str, head: int, global_pos) -> None:
        view = getattr(self.window, "attention_view", None)
        menu = self.panel_menu(stage_name, head, getattr(view, "menu_pair", None))
        try:
            exec_menu(menu, global_pos)
        finally:
            menu.deleteLater()

    def copy_matrix(self, stage_name: str, head: int, fmt: str) -> str:
        matrix, rows, cols, symbol = self.window.attention_view.panel_matrix(stage_name, head)
        if fmt == "latex":
            text = f"% {symbol}\n" + matrix_bmatrix(matrix, 2, rows, cols)
        else:
            text = to_tsv(matrix)
        QGuiApplication.clipboard().setText(text)
        return text


def install_export_actions(window, document) -> ExportActions:
    """Fill File ▸ Export and Edit ▸ Copy figure, connect the panels' context menu."""
    existing = getattr(window, "export_actions", None)
    if isinstance(existing, ExportActions):
        return existing  # idempotent: a second call must not duplicate the menu
    actions = ExportActions(window, document)
    window.export_actions = actions
    return actions
