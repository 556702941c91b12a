"""The main window builds a dock for every registered view and a menu entry for every
registered action (views/window/registry.py): adding a view touches no window code."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from mha_gui.views.window import registry


def test_every_registered_view_has_a_hidden_dock_and_a_panels_toggle(window):
    panels = window.findChild(QMenu, "menu.panels")
    toggles = {a.text() for a in panels.actions()}
    for spec in registry.views():
        widget = window.findChild(QWidget, spec.object_name)
        assert widget is not None, spec.object_name
        dock = window.findChild(QDockWidget, f"dock.{spec.name}")
        content = dock.widget()
        scrolled = getattr(content, "widget", lambda: None)()
        assert widget in (content, scrolled) and dock.isHidden()
        assert spec.title in toggles


def test_every_registered_action_is_in_its_menu(window):
    for spec in registry.actions():
        menu = window.findChild(QMenu, f"menu.{spec.menu.lower()}")
        action = window.findChild(QAction, spec.object_name)
        assert menu is not None and action in menu.actions(), spec.object_name
        assert action.text() == spec.text
    bar = [a.menu().objectName() for a in window.menuBar().actions()]
    assert bar[-1] == "menu.help"
