"""Every heatmap stays readable on a 1280×720 projector at 100, 150 and 200 % zoom:
a cell of a matrix with up to SMALL rows is drawn at least MIN_SMALL px high and wide
(the head grid scrolls when it needs more room than the window has); thumbnails of the
one-head-big layout are small on purpose."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from mha_gui.app import create_main_window
from mha_gui.engine.layer.presets import PRESETS
from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.stage.square_grid import MIN_SMALL as MIN_CELL_PX
from mha_gui.views.stage.square_grid import SMALL as READABLE_CELLS

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def drawn_cell(panel) -> tuple[float, float]:
    """(height, width) in pixels of one drawn cell of a panel."""
    rect = panel.plot.getViewBox().sceneBoundingRect()
    return rect.height() / panel.rows, rect.width() / panel.cols


@pytest.mark.parametrize("zoom", [1.0, 1.5, 2.0])
@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "random"])
def test_every_panel_is_readable(qtbot, preset, zoom):
    w = create_main_window(preset)
    qtbot.addWidget(w)
    w.set_theme("dark", save=False)
    w.set_zoom(zoom, save=False)
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    view = w.attention_view
    for stage in STAGES:
        w.document.set_stage(stage.index)
        qtbot.waitUntil(lambda: not view.building)  # a large stage builds over turns
        QApplication.processEvents()
        QApplication.processEvents()
        assert w.width() <= 1280 and w.height() <= 720
        holder = view.scene.holder
        assert holder.isVisible() and holder.widget() is view.canvas
        for key, panel in view.panels.items():
            if view.geometry.places[key[1]].thumb:
                continue
            height, width = drawn_cell(panel)
            if panel.rows <= READABLE_CELLS:
                assert height >= MIN_CELL_PX - 0.5, (stage.name, key, height)
            if panel.cols <= READABLE_CELLS:
                assert width >= MIN_CELL_PX - 0.5, (stage.name, key, width)
            # and every panel lies inside the canvas the scroll area scrolls over
            box = panel.plot.sceneBoundingRect()
            assert box.right() <= view.canvas.width() + 1 and box.bottom() <= (
                view.canvas.height() + 1
            ), (stage.name, key)
    w.document.undo_stack.setClean()
