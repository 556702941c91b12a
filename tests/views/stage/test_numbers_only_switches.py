"""A switch that changes numbers only — the causal mask, biases, the scale, a head
switched off — redraws the panels shown instead of building them again; a change of the
grid's layout (a shape, the heads, RoPE's rows) still rebuilds."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.document import Document
from mha_gui.views.stage.attention_view import AttentionView
from mha_gui.views.stage.query_strip import QueryStrip

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

WEIGHTS = 3


def settled(qtbot, view):
    qtbot.waitUntil(lambda: not view.document.busy and view.settled)


def switched(qtbot, view, switch) -> None:
    """Flip a switch and wait for the recompute it causes to be drawn."""
    with qtbot.waitSignal(view.document.traceChanged):
        switch()
    settled(qtbot, view)


@pytest.fixture
def view(show_widget):
    return show_widget(AttentionView(Document()), 900, 560)


def test_the_causal_mask_redraws_the_panels_without_a_rebuild(qtbot, view):
    doc = view.document
    doc.set_stage(WEIGHTS)
    settled(qtbot, view)
    builds, canvas = view.rebuild_count, view.canvas
    switched(qtbot, view, lambda: doc.set_causal(True))
    assert view.rebuild_count == builds and view.canvas is canvas
    panel = view.panels[("A", 1)]
    assert panel._blocked is not None and panel._blocked[0, 3]  # the mask is drawn
    np.testing.assert_array_equal(panel.matrix, doc.trace().weights[1])
    for change in ({"bias": True}, {"scale": 0.25}):
        switched(qtbot, view, lambda change=change: doc.set_config(**change))
        assert view.rebuild_count == builds
        np.testing.assert_array_equal(view.panels[("A", 0)].matrix, doc.trace().weights[0])
    switched(qtbot, view, lambda: doc.set_ablated(1, True))
    assert view.rebuild_count == builds


def test_a_new_layout_still_rebuilds(qtbot, view):
    doc = view.document
    doc.set_stage(1)
    settled(qtbot, view)
    builds = view.rebuild_count
    doc.set_rope(True)  # the projections stage gains the rotated Q̃ and K̃
    settled(qtbot, view)
    assert view.rebuild_count == builds + 1
    assert ("QR", 0) in view.panels
    doc.set_config(h=1, h_kv=1)
    settled(qtbot, view)
    assert view.rebuild_count == builds + 2 and ("Q", 1) not in view.panels


def test_the_query_strip_refreshes_on_a_numbers_only_switch(qtbot, show_widget):
    strip = show_widget(QueryStrip(Document()), 1200, 200)
    doc = strip.document
    qtbot.waitUntil(lambda: strip.settled)
    builds, refreshes = strip.rebuild_count, strip.refresh_count
    doc.set_causal(True)
    qtbot.waitUntil(lambda: strip.refresh_count > refreshes)
    assert strip.rebuild_count == builds
    np.testing.assert_array_equal(strip.panels["a"].matrix[0], doc.trace().weights[0, 0])
    doc.set_config(d_k=3)
    qtbot.waitUntil(lambda: strip.rebuild_count > builds)
    assert strip.panels["q"].matrix.shape == (1, 3)
