"""Every registered view with a figure exports it from its right-click menu: the file
holds the drawing the view shows (PNG, SVG, PDF), and Copy figure puts it on the clipboard."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.window import registry

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def drawing_widgets(widget):
    if isinstance(widget, DrawingWidget):
        return [widget]
    return widget.findChildren(DrawingWidget)


@pytest.mark.parametrize("spec", registry.views(), ids=lambda s: s.name)
def test_right_click_export_writes_the_view_figure(qtbot, show_widget, tmp_path, monkeypatch, spec):
    doc = Document(load_preset("toy"))
    if spec.name == "diff":  # it draws now − snapshot: pin one first
        from mha_gui.views.docks.diff.diff_view import pin_snapshot

        pin_snapshot(doc)
    widget = show_widget(spec.create(doc, None), 900, 600)
    canvases = drawing_widgets(widget)
    if not canvases:
        pytest.skip(f"{spec.name} draws no figure")
    canvas = canvases[0]
    qtbot.wait(20)
    for suffix, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        target = tmp_path / f"{spec.name}{suffix}"
        monkeypatch.setattr(
            QFileDialog, "getSaveFileName", staticmethod(lambda *a, t=target: (str(t), ""))
        )
        menu = canvas.export_menu()
        action = next(a for a in menu.actions() if a.objectName().endswith(".export"))
        action.trigger()
        assert target.read_bytes().startswith(magic), (spec.name, suffix)
    QGuiApplication.clipboard().clear()
    next(a for a in canvas.export_menu().actions() if a.objectName().endswith(".copy")).trigger()
    image = QGuiApplication.clipboard().image()
    assert not image.isNull() and image.width() > 100
