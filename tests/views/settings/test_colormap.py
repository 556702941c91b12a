"""View ▸ Colormap: heatmaps, query strip, editor tints and exported figures change together."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QApplication, QMenu, QTableView

from mha_gui import theme
from mha_gui.app import create_main_window
from mha_gui.export.figure import render_image

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _grab(widget):
    for _ in range(3):
        QApplication.processEvents()
    return widget.grab().toImage()


def test_luts_are_valid_and_distinct():
    for key, (label, signed, weights) in theme.COLORMAP_CHOICES.items():
        assert label and signed.shape == (256, 3) and weights.shape == (256, 3)
        assert theme.colormap_for("signed", key) is signed
        assert theme.colormap_for("weights", key) is weights
    assert theme.colormap_for("signed") is theme.DIVERGING  # the default is unchanged
    assert not np.array_equal(theme.PRGN, theme.DIVERGING)
    grey = theme.GREY_SIGNED
    assert (grey[:, 0] == grey[:, 1]).all() and (grey[:, 1] == grey[:, 2]).all()
    with pytest.raises(ValueError, match="unknown colormap"):
        theme.colormap_for("signed", "rainbow")


def test_switching_the_colormap_repaints_and_persists(qtbot, _temporary_settings):
    w = create_main_window("toy")
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    view, strip = w.attention_view, w.query_strip
    w.document.set_stage(1)  # projections: signed values
    assert w.colormap() == "diverging"
    assert w.findChild(QMenu, "menu.colormap") is not None
    before_view, before_strip = _grab(view), _grab(strip)
    table = w.findChild(QTableView, "editor.X")
    model = table.model()
    tint_before = QColor(model.index(0, 1).data(Qt.ItemDataRole.BackgroundRole))

    changed = []
    w.colormapChanged.connect(changed.append)
    w.findChild(QAction, "action.colormap.prgn").trigger()
    assert changed == ["prgn"] and w.colormap() == "prgn"
    after_view, after_strip = _grab(view), _grab(strip)
    assert after_view != before_view and after_strip != before_strip
    tint_after = QColor(model.index(0, 1).data(Qt.ItemDataRole.BackgroundRole))
    assert tint_after != tint_before
    # a cell with a positive value is tinted green under PRGn (red under blue–white–red)
    assert tint_after.green() > tint_after.red() and tint_before.red() > tint_before.green()
    assert QSettings("mha-gui", "mha-gui").value("view/colormap") == "prgn"
    # the exported figure follows the window's choice
    assert w.export_actions.defaults()["colormap"] == "prgn"
    w.close()

    again = create_main_window("toy")
    qtbot.addWidget(again)
    assert again.colormap() == "prgn"
    assert again.findChild(QAction, "action.colormap.prgn").isChecked()
    assert again.attention_view.options.colormap == "prgn"


def test_greyscale_view_has_no_colour(qtbot):
    w = create_main_window("toy")
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    w.document.set_stage(2)
    w.set_colormap("grey", save=False)
    image = _grab(w.attention_view)
    panel = next(iter(w.attention_view.panels.values()))
    rect = panel.plot.getViewBox().sceneBoundingRect()
    c = QColor(image.pixel(int(rect.center().x()), int(rect.top() + 3)))
    assert c.red() == c.green() == c.blue()


def test_figure_export_takes_a_colormap(qtbot):
    from mha_gui.engine.layer.presets import load_preset

    session = load_preset("toy")
    default = render_image(session, "projections", width=400)
    assert render_image(session, "projections", width=400, colormap="diverging") == default
    assert render_image(session, "projections", width=400, colormap="prgn") != default


def test_export_to_checks_and_uses_the_colormap(qtbot, tmp_path):
    from mha_gui.engine.layer.presets import load_preset
    from mha_gui.export.files import export_to

    session = load_preset("toy")
    with pytest.raises(ValueError, match="unknown colormap"):
        export_to(session, tmp_path / "bad.png", stage="scores", colormap="rainbow")
    assert not (tmp_path / "bad.png").exists()
    a = export_to(session, tmp_path / "a.png", stage="scores", width=400)
    b = export_to(session, tmp_path / "b.png", stage="scores", width=400, colormap="grey")
    assert a.read_bytes() != b.read_bytes()
