"""A large stage is built a few heads per event-loop turn: the window stays live, says
"computing…" meanwhile, and the stage it settles on is the one a one-go build draws."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.document import Document
from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.panels.stage_panels import panel_keys
from mha_gui.views.stage import attention_view as view_module
from mha_gui.views.stage.attention_view import AttentionView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

SIZE = (760, 460)


def session():
    return random_session(seed=11, tokens=6, d_model=8, heads=4)


@pytest.fixture
def in_steps(monkeypatch):
    """Every stage counts as large, and each turn adds a single head."""
    monkeypatch.setattr(view_module, "CHUNK_CELLS", 0)
    monkeypatch.setattr(view_module, "BUILD_SLICE_S", 0.0)


def built(qtbot, view):
    qtbot.waitUntil(lambda: not view.building, timeout=10_000)
    for _ in range(4):
        qtbot.wait(5)


def image(view):
    return view.grab().toImage()


def differing(a, b) -> float:
    """The share of sampled pixels that differ between two grabs of the same size."""
    assert (a.width(), a.height()) == (b.width(), b.height())
    points = [(x, y) for x in range(0, a.width(), 3) for y in range(0, a.height(), 3)]
    return sum(a.pixel(x, y) != b.pixel(x, y) for x, y in points) / len(points)


def reference(qtbot, show_widget, monkeypatch, stage):
    """The stage built in one go, as a small layer is."""
    monkeypatch.setattr(view_module, "CHUNK_CELLS", 10**12)
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    doc.set_stage(stage)
    built(qtbot, view)
    return view


def test_a_large_stage_grows_across_turns_and_ends_as_a_one_go_build(
    qtbot, show_widget, monkeypatch, in_steps
):
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    built(qtbot, view)
    doc.set_stage(1)  # projections: Q, K and V for each of 4 heads
    whole = len(panel_keys(1, doc.config))
    assert whole == 12
    assert view.building and view.computing.isVisible()
    assert len(view.panels) == 0  # the first panel comes in the next turn
    seen = {len(view.panels)}
    while view.building:
        qtbot.wait(1)
        seen.add(len(view.panels))
    assert len(seen) > 2  # it grew over several turns
    built(qtbot, view)
    assert not view.computing.isVisible() and len(view.panels) == whole
    t = doc.trace()
    np.testing.assert_array_equal(view.panels[("K", 2)].matrix, t.k[2])
    assert view.colorbar is not None and view.colorbar.levels == view.scene.levels
    assert differing(image(view), image(reference(qtbot, show_widget, monkeypatch, 1))) < 0.01


def test_leaving_a_stage_mid_build_keeps_nothing_half_built(
    qtbot, show_widget, monkeypatch, in_steps
):
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    built(qtbot, view)
    doc.set_stage(1)
    assert view.building
    doc.set_stage(3)  # before the projections are complete
    built(qtbot, view)
    assert sorted(k for k, _h in view.panels) == ["A"] * 4
    builds = view.rebuild_count
    doc.set_stage(1)  # built again, whole, rather than the half-built grid shown
    built(qtbot, view)
    assert view.rebuild_count == builds + 1 and len(view.panels) == 12
    assert differing(image(view), image(reference(qtbot, show_widget, monkeypatch, 1))) < 0.01


@pytest.mark.parametrize("layout", ["grid", "one-big", "auto"])
def test_edits_during_a_build_are_drawn_when_it_ends(
    qtbot, show_widget, monkeypatch, in_steps, layout
):
    """… and in one head big, a head inspected during the build is the one drawn big
    when it ends (it stayed head 0's)."""
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    view.set_stage_layout(layout)
    built(qtbot, view)
    doc.set_stage(3)
    assert view.building
    doc.set_value("W_Q", (1, 0, 0), 2.5)
    doc.set_head(2)
    doc.set_query(4)
    built(qtbot, view)
    fresh = doc.snapshot().run()
    for head in range(4):
        np.testing.assert_allclose(view.panels[("A", head)].matrix, fresh.weights[head])
    monkeypatch.setattr(view_module, "CHUNK_CELLS", 10**12)
    same = Document(session())  # the same edits and view, built in one go
    same.set_value("W_Q", (1, 0, 0), 2.5)
    same.set_head(2)
    same.set_query(4)
    one_go = show_widget(AttentionView(same), *SIZE)
    one_go.set_stage_layout(layout)
    same.set_stage(3)
    built(qtbot, one_go)
    assert differing(image(view), image(one_go)) < 0.01


def test_a_large_stage_adds_one_panel_per_step(qtbot, show_widget, in_steps):
    """A step adds one panel, not a head's whole group: at n = 2048 a head's Q, K and V
    in one step held the window ~36 ms."""
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    built(qtbot, view)
    counts = []
    run = view.build.run

    def counted(scene, slice_s):  # the panels in after each turn's share of the build
        run(scene, slice_s)
        counts.append(len(scene.panels))

    view.build.run = counted
    doc.set_stage(1)  # projections: a group of three panels per head
    built(qtbot, view)
    grew = [b - a for a, b in zip([0, *counts], counts, strict=False)]
    assert max(grew) == 1 and counts[-1] == 12  # every panel came in a turn of its own


def test_a_build_step_that_would_overrun_its_slice_waits_for_the_next_turn(monkeypatch):
    """StageBuild.run stops before a step as long as the turn's longest would overrun
    the slice, rather than after it."""
    from types import SimpleNamespace

    from mha_gui.views.stage import stage_build

    clock = {"t": 0.0}
    monkeypatch.setattr(stage_build.time, "perf_counter", lambda: clock["t"])
    ran = []

    def steps():
        for k in range(6):
            clock["t"] += 0.010  # every step costs 10 ms
            ran.append(k)
            yield None

    scheduled = []
    scene = SimpleNamespace(building=steps(), closed=False)
    build = stage_build.StageBuild(None, None, lambda: scheduled.append(1), lambda: None)
    build.run(scene, 0.012)
    assert ran == [0] and scheduled == [1]  # a second 10 ms step would end at 20 ms
    build.run(scene, 0.025)
    assert ran == [0, 1, 2]  # 10 + 10 = 20 ms; a third would end at 30 ms


def test_a_large_stage_is_planned_in_the_turn_after_the_switch(qtbot, show_widget, in_steps):
    """The switch only makes the new canvas; the grid is planned in the next turn and
    the first panel comes in the one after (n = 2048: canvas, plan and a panel in one
    turn stalled the projections switch 45–66 ms)."""
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    built(qtbot, view)
    seen = []
    run = view.build.run

    def counted(scene, slice_s):
        run(scene, slice_s)
        seen.append((scene.geometry is not None, len(scene.panels)))

    view.build.run = counted
    doc.set_stage(1)
    assert view.building and view.geometry is None and not view.panels
    built(qtbot, view)
    assert seen[:2] == [(True, 0), (True, 1)]
    assert view.geometry is not None and len(view.panels) == 12


@pytest.mark.parametrize("panels_in", [0, 2], ids=["before its plan", "mid-build"])
def test_a_stage_whose_layer_changes_while_it_is_built_ends_built_for_the_new_layer(
    qtbot, show_widget, monkeypatch, in_steps, panels_in
):
    """A new layer (fewer heads) opened while a large stage is built, its trace computed
    on the worker: before the plan (the turn after the switch) the old stage's heads are
    not planned for the new layer, and mid-build the old panels are not labelled from
    it — the rebuild that waits for the new trace draws it."""
    import time

    from mha_gui.document import recompute
    from mha_gui.engine.attention.incremental import IncrementalTrace

    monkeypatch.setattr(recompute, "ASYNC_CELLS", 0)  # every layer computed on the worker
    refresh = IncrementalTrace.refresh

    def slow_refresh(self):  # as long as an n = 2048 layer's, for the build to go on
        time.sleep(0.3)
        return refresh(self)

    monkeypatch.setattr(IncrementalTrace, "refresh", slow_refresh)
    doc = Document(session())
    view = show_widget(AttentionView(doc), *SIZE)
    qtbot.waitUntil(lambda: not doc.busy and not view.building, timeout=10_000)
    built(qtbot, view)
    doc.set_stage(1)  # planned in the next turn, then a panel per turn
    qtbot.waitUntil(lambda: len(view.scene.panels) >= panels_in, timeout=5_000)
    fewer = random_session(seed=12, tokens=5, d_model=8, heads=2)  # 4 → 2 heads
    fewer.view.stage = 1
    doc.open_session(fewer)
    qtbot.waitUntil(lambda: not doc.busy and view.settled, timeout=10_000)
    built(qtbot, view)
    assert set(view.panels) == set(panel_keys(1, doc.config))
    np.testing.assert_array_equal(view.panels[("Q", 1)].matrix, doc.trace().q[1])
