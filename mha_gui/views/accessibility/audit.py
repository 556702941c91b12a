"""What the accessibility layer reports for a window's controls: the check behind the
tests and tools/accessibility_walk.py (every visible control must have a name)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAction
from PySide6.QtWidgets import QDockWidget, QWidget


def focusable_widgets(window: QWidget) -> list[QWidget]:
    """Every visible, enabled widget Tab can reach, in the window's focus-chain order."""
    out, w = [], window.nextInFocusChain()
    seen = 0
    while w is not None and w is not window and seen < 100_000:
        seen += 1
        if (
            w.isVisible()
            and w.isEnabled()
            and w.focusPolicy() & Qt.FocusPolicy.TabFocus
            and w.focusProxy() is None  # Tab skips it: its proxy takes the focus
            and w.window() is window
        ):
            out.append(w)
        w = w.nextInFocusChain()
    return out


def accessible_name(widget: QWidget) -> str:
    iface = QAccessible.queryAccessibleInterface(widget)
    return "" if iface is None else iface.text(QAccessible.Text.Name).strip()


def unnamed(window: QWidget) -> list[str]:
    """The visible focusable widgets whose accessible name is empty (objectName or class)."""
    return [
        w.objectName() or type(w).__name__
        for w in focusable_widgets(window)
        if not accessible_name(w)
    ]


def textless_actions(window: QWidget) -> list[str]:
    """Actions a user can see (on a visible menu bar, menu or button) that have no text."""
    out = []
    for action in window.findChildren(QAction):
        if action.isSeparator() or not action.isVisible() or action.text():
            continue
        shown = [o for o in action.associatedObjects() if isinstance(o, QWidget) and o.isVisible()]
        if shown:
            out.append(action.objectName() or repr(action))
    return out


def dock_of(widget: QWidget) -> QDockWidget | None:
    """The dock a widget sits in (None: the central area or a dialog)."""
    w = widget
    while w is not None and not isinstance(w, QDockWidget):
        w = w.parentWidget()
    return w
