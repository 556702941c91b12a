"""The main window's menus: every action, its text, shortcut and objectName.

Building only: each action calls a method of the window's parts (`window.files`,
`window.edits`), of the window itself (main_window.py) or changes a display setting. The View menu's check
marks follow the DisplaySettings, so they are right however a setting changes.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu

from mha_gui import theme
from mha_gui.engine.layer.presets import PRESETS
from mha_gui.engine.models.families import family_titles
from mha_gui.views.accessibility.panes import install_accessibility
from mha_gui.views.dialogs.open_model_dialog import open_model
from mha_gui.views.editors.formula_names import typeset_formula_names
from mha_gui.views.window import registry

THEME_LABELS = (
    ("system", "&System"),
    ("light", "&Light"),
    ("dark", "&Dark"),
    ("high-contrast-light", "&High contrast light"),
    ("high-contrast-dark", "High &contrast dark"),
)
WEIGHTS_RANGE_LABELS = (
    ("fixed", "&Fixed, 0 to 1"),
    ("head", "Divided by the &head's largest weight"),
    ("row", "Divided by the &row's largest weight"),
)


def add_action(window, menu, text, slot, shortcut=None, name=None) -> QAction:
    """A menu entry owned by the window, calling `slot` when chosen."""
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if name:
        action.setObjectName(name)
    action.triggered.connect(slot)
    menu.addAction(action)
    return action


def build_menus(window) -> None:
    build_file_menu(window)
    build_edit_menu(window)
    build_view_menu(window)
    build_help_menu(window)


def build_file_menu(window) -> None:
    file_menu = window.menuBar().addMenu("&File")
    file_menu.setObjectName("menu.file")
    new_menu = file_menu.addMenu("&New from preset")
    new_menu.setObjectName("menu.new")
    for name in [p for p in PRESETS if p != "random"] + ["random"]:
        action = QAction(f"{name}  —  {PRESETS[name].summary}", window)
        action.setObjectName(f"action.new.{name}")
        action.triggered.connect(lambda _=False, n=name: window.files.new_from_preset(n))
        new_menu.addAction(action)
    add_action(
        window,
        file_menu,
        "&Open…",
        window.files.open_dialog,
        QKeySequence.StandardKey.Open,
        "action.open",
    )
    model = add_action(
        window,
        file_menu,
        "Open &model…",
        lambda: open_model(window),
        "Ctrl+Shift+O",
        "action.openModel",
    )
    model.setStatusTip(f"Open a layer of {family_titles()} on a sentence")
    window.files.build_recent_menu(file_menu)
    file_menu.addSeparator()
    add_action(
        window, file_menu, "&Save", window.files.save, QKeySequence.StandardKey.Save, "action.save"
    )
    save_as_keys = QKeySequence.StandardKey.SaveAs
    if QKeySequence(save_as_keys).isEmpty():
        save_as_keys = "Ctrl+Shift+S"
    add_action(window, file_menu, "Save &As…", window.files.save_as, save_as_keys, "action.saveAs")
    file_menu.addSeparator()
    window.export_menu = file_menu.addMenu("&Export")
    window.export_menu.setObjectName("menu.export")
    file_menu.addSeparator()
    quit_action = add_action(window, file_menu, "&Quit", window.close, "Ctrl+Q", "action.quit")
    quit_action.setMenuRole(QAction.MenuRole.QuitRole)


def build_edit_menu(window) -> None:
    edit_menu = window.menuBar().addMenu("&Edit")
    edit_menu.setObjectName("menu.edit")
    stack = window.document.undo_stack
    undo = stack.createUndoAction(window, "&Undo")
    undo.setObjectName("action.undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = stack.createRedoAction(window, "&Redo")
    redo.setObjectName("action.redo")
    # the platform's redo keys, plus Ctrl+Y that Windows users type everywhere
    redo_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)
    if QKeySequence("Ctrl+Y") not in redo_keys:
        redo_keys.append(QKeySequence("Ctrl+Y"))
    redo.setShortcuts(redo_keys)
    edit_menu.addAction(undo)
    edit_menu.addAction(redo)
    edit_menu.addSeparator()
    add_action(
        window, edit_menu, "&Copy", window.edits.copy, QKeySequence.StandardKey.Copy, "action.copy"
    )
    add_action(
        window,
        edit_menu,
        "&Paste",
        window.edits.paste,
        QKeySequence.StandardKey.Paste,
        "action.paste",
    )
    edit_menu.addSeparator()
    add_action(
        window, edit_menu, "Randomize &weights…", window.edits.randomize, None, "action.randomize"
    )
    add_action(
        window, edit_menu, "Reset &example", window.edits.reset_example, None, "action.reset"
    )
    window.clear_mask_action = add_action(
        window, edit_menu, "Clear &mask", window.edits.clear_mask, None, "action.clearMask"
    )
    window.clear_mask_action.setStatusTip(
        "Open every pair blocked by Ctrl+click (the causal mask stays as it is)"
    )


def build_view_menu(window) -> None:
    display = window.display
    view_menu = window.menuBar().addMenu("&View")
    view_menu.setObjectName("menu.view")
    theme_menu = view_menu.addMenu("&Theme")
    theme_menu.setObjectName("menu.theme")
    window.theme_actions = _choices(window, theme_menu, "theme", THEME_LABELS, window.set_theme)
    colormap_menu = view_menu.addMenu("&Colormap")
    colormap_menu.setObjectName("menu.colormap")
    labels = [(key, label) for key, (label, _values, _weights) in theme.COLORMAP_CHOICES.items()]
    window.colormap_actions = _choices(
        window, colormap_menu, "colormap", labels, window.set_colormap
    )
    range_menu = view_menu.addMenu("&Weights colour range")
    range_menu.setObjectName("menu.weightsRange")
    window.weights_range_actions = _choices(
        window, range_menu, "weights_range", WEIGHTS_RANGE_LABELS, window.set_weights_range
    )
    show_values = QAction("Show &values in cells", window, checkable=True)
    show_values.setObjectName("action.showValues")
    # triggered, not toggled: only the user's click saves; the check mark follows the
    # setting without calling back into it
    show_values.triggered.connect(window.set_show_values)
    view_menu.addAction(show_values)
    window.show_values_action = show_values
    display.follow("show_values", show_values.setChecked)
    view_menu.addSeparator()
    add_action(
        window,
        view_menu,
        "Zoom &in",
        window.zoom_in,
        QKeySequence.StandardKey.ZoomIn,
        "action.zoomIn",
    ).setShortcuts([QKeySequence("Ctrl++"), QKeySequence("Ctrl+=")])
    add_action(
        window,
        view_menu,
        "Zoom &out",
        window.zoom_out,
        QKeySequence.StandardKey.ZoomOut,
        "action.zoomOut",
    ).setShortcuts([QKeySequence("Ctrl+-")])
    add_action(
        window, view_menu, "&Actual size", lambda: window.set_zoom(1.0), "Ctrl+0", "action.zoom1"
    )
    view_menu.addSeparator()
    panels = view_menu.addMenu("&Panels")
    panels.setObjectName("menu.panels")
    for dock in window.docks.values():
        panels.addAction(dock.toggleViewAction())
    # W^Q, W_O: the dock tabs and these entries typeset (a style, as Qt draws plain text)
    typeset_formula_names(window, [panels])
    view_menu.addSeparator()
    install_accessibility(window, view_menu)  # F6 / Shift+F6 between panes; names


def _choices(window, menu, setting: str, labels, choose) -> dict[str, QAction]:
    """Exclusive checkable entries, one per value of a display setting; the check mark
    follows the stored value (so View ▸ Theme ▸ System stays checked on a dark system)."""
    group = QActionGroup(window)
    actions: dict[str, QAction] = {}
    for key, label in labels:
        action = QAction(label, window, checkable=True)
        action.setObjectName(f"action.{_camel(setting)}.{key}")
        action.triggered.connect(lambda _=False, k=key: choose(k))
        group.addAction(action)
        menu.addAction(action)
        actions[key] = action

    def check(name: str, value) -> None:
        if name == setting:
            actions[value].setChecked(True)

    window.display.changed.connect(check)
    check(setting, window.display.value(setting))
    return actions


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


def build_help_menu(window) -> None:
    help_menu = window.menuBar().addMenu("&Help")
    help_menu.setObjectName("menu.help")
    add_action(
        window,
        help_menu,
        "&Formulas and shapes",
        window.show_formulas,
        QKeySequence.StandardKey.HelpContents,
        "action.formulas",
    )
    add_action(window, help_menu, "&About mha-gui", window.about, None, "action.about")


def add_registered_actions(window) -> None:
    """Every action in views/window/registry.py, at the end of its menu (Edit, View or Tools;
    Tools is made, before Help, for the first action that asks for it)."""
    bar = window.menuBar()
    for spec in registry.actions():
        name = f"menu.{spec.menu.lower()}"
        menu = window.findChild(QMenu, name)
        if menu is None:
            menu = QMenu(f"&{spec.menu}", bar)
            menu.setObjectName(name)
            bar.insertMenu(window.findChild(QMenu, "menu.help").menuAction(), menu)
        action = add_action(
            window,
            menu,
            spec.text,
            lambda _=False, s=spec: s.trigger(window),
            spec.shortcut,
            spec.object_name,
        )
        action.setCheckable(spec.checkable)
        if spec.tip:
            action.setStatusTip(spec.tip)
            action.setToolTip(spec.tip)
