"""Helpers for tests of DrawingWidget docks: build one as the window does (from its
registration), wait for a rebuild, map drawing coordinates to the widget, read the
widget's pixels."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint

from mha_gui.document import Document
from mha_gui.engine import load_preset
from mha_gui.views.window import registry


def make_view(name: str, document, settings=None):
    """The registered dock `name` on `document`, built as the main window builds it
    (so it carries its objectName)."""
    return registry.view_spec(name).create(document, settings)


def shown_view(show_widget, qtbot, name: str, preset: str, width=900, height=650):
    """The registered dock `name` on a fresh Document of `preset`, shown and built once."""
    widget = show_widget(make_view(name, Document(load_preset(preset))), width, height)
    qtbot.waitUntil(lambda: widget.drawing is not None)
    return widget


def settle(qtbot, view) -> None:
    """Wait for the view's next (coalesced) rebuild."""
    count = view.rebuild_count
    qtbot.waitUntil(lambda: view.rebuild_count > count, timeout=2000)


def widget_point(view, x: float, y: float) -> QPoint:
    """Where drawing coordinate (x, y) is on the widget."""
    scale, dx, dy = view.transform()
    return QPoint(int(round(x * scale + dx)), int(round(y * scale + dy)))


def pixels(view) -> np.ndarray:
    img = view.grab().toImage()
    return np.frombuffer(img.constBits(), np.uint8, img.sizeInBytes()).copy()


QT_LOG_IGNORE = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
