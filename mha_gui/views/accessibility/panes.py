"""F6 / Shift+F6 between the window's panes, and names for its unnamed containers.

Panes, in order: the matrix editor shown, the configuration, the stage bar, the stage's
heatmaps, the query strip, then every other dock shown. F6 moves the focus to the next
pane's first control (Shift+F6: the previous one) and the status bar names the pane, so
a keyboard user crosses the window in a few keys instead of dozens of Tabs.

`name_unnamed` gives every focusable widget that has no accessible name one made of its
dock's title (a scroll area around a figure, a plot), so a screen reader never says
just "scroll area".
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenuBar, QToolButton, QWidget

from mha_gui.views.accessibility.audit import accessible_name, dock_of, focusable_widgets
from mha_gui.views.accessibility.drawing_keys import attach_drawings
from mha_gui.views.widgets.never_raises import never_raises

NEXT_PANE_KEY = "F6"
PREVIOUS_PANE_KEY = "Shift+F6"
EDITOR_DOCKS = ("dock.X", "dock.W_Q", "dock.W_K", "dock.W_V", "dock.W_O")


def _words(object_name: str) -> str:
    """ "train.lossPlot" → "loss plot"."""
    last = object_name.rsplit(".", 1)[-1]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", last).lower()


def name_unnamed(window: QWidget) -> None:
    """A name for every control still without one: its dock's title (and the control's
    object name in words when it is not the dock's whole content)."""
    for dock in window.findChildren(QDockWidget):
        if not dock.accessibleName():
            dock.setAccessibleName(dock.windowTitle())
    for widget in window.findChildren(QWidget):
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus == 0 or widget.focusProxy():
            continue
        if widget.isWindow() or accessible_name(widget):
            continue
        dock = dock_of(widget)
        if dock is None:
            continue
        title = dock.windowTitle()
        whole = widget is dock.widget() or widget.objectName().endswith(".scroll")
        words = _words(widget.objectName()) if widget.objectName() else ""
        widget.setAccessibleName(title if whole or not words else f"{title}: {words}")
    for bar in window.findChildren(QMenuBar):
        for button in bar.findChildren(QToolButton, "qt_menubar_ext_button"):
            button.setAccessibleName("More menus")
            _MenuTitle(button)


class _MenuTitle(QObject):
    """The menu bar's overflow button (») gets its menu when first shown; that menu's
    own action has no text: give it one then."""

    def __init__(self, button: QToolButton):
        super().__init__(button)
        button.installEventFilter(self)

    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        menu = obj.menu() if event.type() == QEvent.Type.Show else None
        if menu is not None and not menu.title():
            menu.setTitle("More menus")
        return False


def _first_control(pane: QWidget) -> QWidget | None:
    """The pane's first Tab stop (a pane that is itself one: the pane)."""
    if pane.isVisible() and pane.focusPolicy() & Qt.FocusPolicy.TabFocus and not pane.focusProxy():
        return pane
    for w in focusable_widgets(pane.window()):
        if pane.isAncestorOf(w):
            return w
    return None


class PaneCycler:
    """F6 / Shift+F6 through the window's panes (see the module docstring)."""

    def __init__(self, window):
        self.window = window

    def panes(self) -> list[tuple[str, QWidget]]:
        w = self.window
        out: list[tuple[str, QWidget]] = []
        docks = {d.objectName(): d for d in w.findChildren(QDockWidget)}
        for name in EDITOR_DOCKS:  # open ones, shown or behind another tab (F6 raises it)
            dock = docks.get(name)
            if dock is not None and dock.toggleViewAction().isChecked():
                out.append((f"{dock.windowTitle()} editor", dock))
        config = docks.get("dock.config")
        if config is not None and config.isVisible():
            out.append(("Configuration", config))
        out.append(("Stage bar", w.stage_bar))
        out.append(("Heatmaps", w.attention_view))
        out.append(("Query strip", w.query_strip))
        for name, dock in docks.items():
            if name in EDITOR_DOCKS or name == "dock.config":
                continue
            if dock.widget() is not None and dock.widget().isVisible():
                out.append((dock.windowTitle(), dock))
        return [
            (label, pane)
            for label, pane in out
            if pane.objectName() in EDITOR_DOCKS or _first_control(pane) is not None
        ]

    def current(self, panes) -> int:
        focus = self.window.focusWidget()
        for i, (_label, pane) in enumerate(panes):
            if focus is not None and (focus is pane or pane.isAncestorOf(focus)):
                return i
        return -1

    def cycle(self, step: int) -> str:
        """Focus the next (step +1) or previous (−1) pane; returns its name."""
        panes = self.panes()
        if not panes:
            return ""
        i = self.current(panes)
        if i < 0:
            i = -1 if step > 0 else 0
        label, pane = panes[(i + step) % len(panes)]
        if isinstance(pane, QDockWidget):
            pane.raise_()  # a tabbed dock comes to the front first
        control = _first_control(pane)
        if control is None:
            return ""
        control.setFocus(Qt.FocusReason.TabFocusReason)
        if hasattr(self.window, "show_message"):
            self.window.show_message(f"Pane: {label}")
        return label


def install_accessibility(window, menu) -> PaneCycler:
    """Name the window's unnamed controls and add View ▸ Next pane (F6) / Previous pane
    (Shift+F6) to `menu`."""
    attach_drawings(window)
    name_unnamed(window)
    cycler = PaneCycler(window)
    for text, key, step, name in (
        ("Next &pane", NEXT_PANE_KEY, 1, "action.nextPane"),
        ("Pre&vious pane", PREVIOUS_PANE_KEY, -1, "action.previousPane"),
    ):
        action = QAction(text, window)
        action.setObjectName(name)
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)  # floating docks too
        action.triggered.connect(lambda _=False, s=step: cycler.cycle(s))
        menu.addAction(action)
    window.pane_cycler = cycler
    return cycler
