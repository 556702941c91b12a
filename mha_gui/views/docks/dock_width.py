"""Docks open as large as their figure reads: a dock on the left or right of the window
is widened, when it is shown, to its view's preferred width, a bottom dock made as tall
as its preferred height (capped at a share of the window, so the stages keep their room;
past the cap the view scrolls, it never clips).

A view calls `widen_on_show(self, width)` from its showEvent with the width it reads at
(a DrawingWidget: its sizeHint, 0.6 of the figure; the statistics: its table's width).
Only ever wider: a dock the user made narrower stays so until it is shown again.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

MAX_SHARE = 0.45  # of the window's width
SCROLLBAR = 24  # a vertical scroll bar and the dock's frame


def dock_of(widget: QWidget) -> QDockWidget | None:
    w = widget.parentWidget()
    while w is not None and not isinstance(w, QDockWidget):
        w = w.parentWidget()
    return w


def widen(widget: QWidget, width: int, height: int | None = None) -> None:
    """Widen the side dock holding `widget` to `width` px (+ a scroll bar), or make the
    bottom dock holding it `height` px tall, at most MAX_SHARE of the window; a floating
    dock keeps its size."""
    dock = dock_of(widget)
    window = dock.parentWidget() if dock is not None else None
    if dock is None or dock.isFloating() or not isinstance(window, QMainWindow):
        return
    area = window.dockWidgetArea(dock)
    side = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
    if area in side:
        target = min(int(width) + SCROLLBAR, int(window.width() * MAX_SHARE))
        if dock.width() < target:
            window.resizeDocks([dock], [target], Qt.Orientation.Horizontal)
    elif height is not None:
        target = min(int(height) + SCROLLBAR, int(window.height() * MAX_SHARE))
        if dock.height() < target:
            window.resizeDocks([dock], [target], Qt.Orientation.Vertical)


def widen_on_show(
    widget: QWidget, width: Callable[[], int], height: Callable[[], int] | None = None
) -> None:
    """After this turn's layout (the figure is built by then): widen the dock (see
    `widen`) to `width()`, or a bottom dock to `height()`."""
    QTimer.singleShot(
        0, widget, lambda: widen(widget, width(), None if height is None else height())
    )
