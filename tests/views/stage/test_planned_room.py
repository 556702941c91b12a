"""A stage is drawn in the room its layout planned: no panel takes more than its cells,
axes and title, so a layout planned to fit the view fits it — no scroll bar at 150 % on
the toy (its stages scrolled by 15–61 px: every untitled panel kept ~29 px for the title
it did not have, and the thumbnails the room of their hidden axes)."""

from __future__ import annotations

import pytest

from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.stage.square_grid import BAND_PX, min_scale
from tests.views.stage.test_stage_layouts import settle, shown

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def scrolls(w) -> tuple[bool, bool]:
    holder = w.attention_view.scene.holder
    return holder.horizontalScrollBar().isVisible(), holder.verticalScrollBar().isVisible()


def at_floor(w) -> bool:
    """Are the stage's cells as small as they may be (then it scrolls, by design)?"""
    view, doc = w.attention_view, w.document
    floor = min_scale(view._groups(), doc.config, doc.tokens, view.options.zoom)
    return view.geometry.scale <= floor + 1e-6


@pytest.mark.parametrize("zoom", [1.0, 1.5])
def test_every_toy_stage_fits_the_window_without_scrolling(qtbot, zoom):
    w = shown(qtbot, "toy", zoom)
    for stage in STAGES:
        w.document.set_stage(stage.index)
        settle(qtbot, w)
        assert scrolls(w) == (False, False), (stage.name, zoom)
    w.document.undo_stack.setClean()


@pytest.mark.parametrize(("preset", "zoom"), [("causal-6x16", 1.5), ("gqa", 1.0), ("gqa", 1.5)])
def test_a_stage_scrolls_only_when_its_cells_are_as_small_as_allowed(qtbot, preset, zoom):
    w = shown(qtbot, preset, zoom)
    for stage in STAGES:
        w.document.set_stage(stage.index)
        settle(qtbot, w)
        assert scrolls(w) == (False, False) or at_floor(w), (stage.name, w.attention_view.geometry)
    w.document.undo_stack.setClean()


@pytest.mark.parametrize(("layer", "stage"), [("gqa", 0), ("gqa", 3), ("bert-base-like", 6)])
def test_an_untitled_panel_is_as_tall_as_its_cells_and_axis(qtbot, layer, stage):
    """The X panel (a lone panel: its group's title names it) and one head big's
    thumbnails (no axes, no own title) take their cells' height and no more (a wide
    layer's 21 px thumbnails took 50 px: their hidden left axis's minimum height)."""
    w = shown(qtbot, layer, 1.5)
    w.document.set_stage(stage)
    settle(qtbot, w)
    view = w.attention_view
    for (kind, head), panel in view.panels.items():
        size = view.geometry.size(kind, head)
        drawn = panel.plot.geometry().height()
        planned = size.height + size.bottom_h if size.label_px > 0 else size.height
        assert drawn == pytest.approx(planned, abs=1.5), (kind, head, drawn, planned)
    w.document.undo_stack.setClean()


@pytest.mark.parametrize("zoom", [1.0, 1.5])
@pytest.mark.parametrize("layer", ["toy", "20 tokens, d_model 64", "bert-base-like"])
def test_the_concat_bands_hold_their_head_names(qtbot, layer, zoom):
    """Each head's band over H is BAND_PX (× zoom) high at least, whatever H's cells,
    and its name fits inside it (over 9 px cells the bands were 5 px under 13 px text)."""
    w = shown(qtbot, layer, zoom)
    w.document.set_stage(STAGES[5].index)
    settle(qtbot, w)
    bands = w.attention_view.scene.bands
    d_v = w.document.config.d_v  # laid out: a band is wider than its d_v columns' units
    qtbot.waitUntil(lambda: bands.bands[0].sceneBoundingRect().width() > 2 * d_v)
    for head, band in bands.bands.items():
        box = band.sceneBoundingRect()
        assert box.height() >= BAND_PX * zoom * 0.77 - 1, (head, box.height())
        label = bands.labels[head].sceneBoundingRect()
        centre = label.center()
        assert box.top() - 1 <= centre.y() <= box.bottom() + 1
        assert label.height() <= box.height() * 1.6, (head, label.height(), box.height())
    w.document.undo_stack.setClean()


def test_the_colour_bar_stays_in_view_when_the_grid_scrolls_sideways(qtbot):
    """An 18 × 128 H scrolls sideways: its colour bar, beside the scroll area rather than
    at the end of the grid, stays in view wherever the grid is scrolled to."""
    from mha_gui.engine.layer.presets import random_session

    w = shown(qtbot, "toy")
    w.document.replace_session(random_session(0, 18, 128, 4))
    w.document.set_stage(STAGES[5].index)
    settle(qtbot, w)
    view = w.attention_view
    scene = view.scene
    bar = scene.bar_canvas
    scroll = scene.holder.horizontalScrollBar()
    assert scroll.isVisible()  # the grid is wider than the view
    places = []
    for value in (scroll.minimum(), scroll.maximum()):
        scroll.setValue(value)
        qtbot.waitUntil(lambda v=value: scroll.value() == v)
        box = bar.geometry().translated(bar.parentWidget().mapTo(view, bar.pos()) - bar.pos())
        assert view.rect().contains(box), (box, view.rect())
        places.append(box)
        assert bar.isVisible() and scene.colorbar in bar.ci.items
    assert places[0] == places[1]
    w.document.undo_stack.setClean()


@pytest.mark.parametrize("preset", ["toy", "gqa"])
def test_the_colour_bar_stands_beside_a_narrow_grid_and_spans_it(qtbot, preset):
    """A grid narrower than the view keeps its colour bar beside it (not at the window's
    far edge, ~300 px away) and as tall as the grid, on the theme's background."""
    w = shown(qtbot, preset)
    w.document.set_stage(STAGES[3].index)
    settle(qtbot, w)
    view = w.attention_view
    scene = view.scene
    qtbot.waitUntil(lambda: scene.holder.maximumWidth() <= scene.canvas.minimumWidth() + 40)
    bar = scene.bar_canvas
    grid_right = max(
        p.plot.mapRectToScene(p.plot.boundingRect()).right() for p in scene.panels.values()
    )
    grid_right = scene.canvas.mapTo(view, scene.canvas.mapFromScene(grid_right, 0)).x()
    bar_left = bar.mapTo(view, bar.rect().topLeft()).x()
    assert 0 <= bar_left - grid_right <= 40, (grid_right, bar_left)
    assert abs(bar.height() - scene.canvas.minimumHeight()) <= 2
    image = view.grab().toImage()  # right of the bar: the page's (theme) background
    far = image.pixelColor(image.width() - 5, image.height() // 2)
    assert far == scene.page.background
    w.document.undo_stack.setClean()
