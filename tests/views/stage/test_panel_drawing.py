"""The heatmap panel's drawing shortcuts draw exactly what pyqtgraph's general path draws.

A panel turns its image into a 32-bit QImage by one table look-up (pyqtgraph builds an
indexed image and a Python colour table per image); an unchanged title is not set
again; a refresh with the same tokens and numbers leaves the labels as they were.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage

from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.views.stage.attention_view import AttentionView
from mha_gui.views.stage.heatmap_panel import CellImage
from mha_gui.views.stage.plot_items import set_label

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


class _Panel:
    rows = cols = 1
    step = (1, 1)


def _pixels(image: QImage) -> list[int]:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return [image.pixel(x, y) for y in range(image.height()) for x in range(image.width())]


@pytest.mark.parametrize("channels, entries", [(3, 256), (4, 256), (3, 100)])
@pytest.mark.parametrize("levels", [(-1.0, 1.0), (0.0, 1.0), (2.0, 2.0), (-3e-5, 7e-5)])
def test_fast_image_has_pyqtgraphs_pixels(qapp, channels, entries, levels):
    rng = np.random.default_rng(entries + channels)
    lut = rng.integers(0, 256, (entries, channels), dtype=np.uint8)
    image = rng.normal(size=(7, 9)) * ((levels[1] - levels[0]) or 1.0) + levels[0]
    image[0, :4] = [np.inf, -np.inf, levels[0], levels[1]]
    item = CellImage(_Panel())
    item.setLookupTable(lut)
    item.setImage(image, levels=levels, autoLevels=False)
    item.render()
    fast = _pixels(item.qimage)
    assert item.qimage.format() in (QImage.Format.Format_RGB32, QImage.Format.Format_ARGB32)
    pg.ImageItem.render(item)  # pyqtgraph's own path, on the same item
    assert fast == _pixels(item.qimage)


def test_an_image_with_nan_takes_pyqtgraphs_path(qapp):
    item = CellImage(_Panel())
    item.setLookupTable((np.arange(256 * 3) % 256).astype(np.uint8).reshape(256, 3))
    image = np.zeros((3, 3))
    image[1, 1] = np.nan
    item.setImage(image, levels=(-1.0, 1.0), autoLevels=False)
    item.render()
    # pyqtgraph makes a NaN cell transparent; the shortcut would not
    assert item.qimage.convertToFormat(QImage.Format.Format_ARGB32).pixelColor(1, 1).alpha() == 0


def test_set_label_sets_a_changed_text_only(qapp, monkeypatch):
    label = pg.LabelItem("")
    calls = []
    original = label.setText
    monkeypatch.setattr(label, "setText", lambda *a, **k: (calls.append(a), original(*a, **k)))
    set_label(label, "q = Q<sub>0</sub>", color="#123456", bold=True)
    set_label(label, "q = Q<sub>0</sub>", color="#123456", bold=True)
    assert len(calls) == 1
    set_label(label, "q = Q<sub>0</sub>", color="#654321", bold=True)
    set_label(label, "q = Q<sub>1</sub>", color="#654321", bold=True)
    assert len(calls) == 3
    assert label.item.toPlainText() == "q = Q1"


def test_an_edit_prints_the_new_numbers_in_the_cells(show_widget, qtbot):
    doc = Document(load_preset("toy"))
    view = show_widget(AttentionView(doc), 900, 560)
    doc.set_stage(1)  # the projections: Q_0 = X W_0^Q
    qtbot.waitUntil(lambda: ("Q", 0) in view.panels)
    panel = view.panels[("Q", 0)]

    def printed():
        return [[item.textItem.toPlainText() for item in row] for row in panel.labels]

    qtbot.waitUntil(lambda: printed()[0][0] != "")
    before = printed()
    doc.set_value("W_Q", (0, 0, 0), float(doc.matrix("W_Q")[0, 0, 0]) + 1.0)
    # X[0, 0] is 1 in the toy layer: Q_0[0, 0] grows by one
    qtbot.waitUntil(lambda: printed() != before)
    q = doc.shown_trace().q[0]
    assert printed()[0][0] == panel.fmt.cell(float(q[0, 0]))
