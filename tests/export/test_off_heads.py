"""A switched-off head is marked "off" in every export from the value mixing on: its
title says so and its panel (its block of H at the concat) is hatched grey, as the
window marks it; up to the weights it computes as usual and is drawn as usual."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from mha_gui import theme
from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.layer.session import Session
from mha_gui.export.figure import figure_layout, render_image


def ablated(preset: str, heads=(1,)) -> Session:
    s = load_preset(preset)
    return Session(s.config.with_changes(ablate=heads), s.tokens, s.params)


def grey_share(img, x0, y0, w, h) -> float:
    """The share of pixels in the box that are the blocked grey or the hatch."""
    pal = theme.palette("light")
    greys = [QColor(pal.blocked), QColor(pal.hatch)]
    hits = total = 0
    for y in range(int(y0) + 2, int(y0 + h) - 2, 2):
        for x in range(int(x0) + 2, int(x0 + w) - 2, 2):
            px = img.pixelColor(x, y)
            total += 1
            hits += any(
                max(abs(px.red() - g.red()), abs(px.green() - g.green()), abs(px.blue() - g.blue()))
                <= 12
                for g in greys
            )
    return hits / max(total, 1)


@pytest.mark.parametrize("preset", ["toy", "causal-6x16", "gqa"])
def test_off_from_the_mixing_on(preset):
    s = ablated(preset)
    for stage in ("input", "projections", "scores", "weights"):
        lay = figure_layout(s, stage)
        assert not any(g.panel.off or g.panel.off_blocks for g in lay.panels)
        assert not any(g.panel.title.endswith("off") for g in lay.panels)
    for stage, kind in (("mixing", "Z"), ("output", "C")):
        lay = figure_layout(s, stage)
        heads = {g.panel.head: g for g in lay.panels if g.panel.head is not None}
        assert heads[1].panel.off and heads[1].panel.title.endswith("· off"), stage
        assert not heads[0].panel.off and not heads[0].panel.title.endswith("off")
        img = render_image(s, stage, width=int(lay.width))  # 1 unit = 1 px
        off, on = heads[1], heads[0]
        assert grey_share(img, off.x, off.y, off.w, off.h) > 0.5, (preset, stage, kind)
        assert grey_share(img, on.x, on.y, on.w, on.h) < 0.2
    concat = figure_layout(s, "concat")
    (h,) = [g.panel for g in concat.panels]
    assert h.off_blocks == (1,)
    assert "head 1 off" in concat.scene.info


def test_the_snapshot_difference_shows_what_switching_off_changed():
    """now − snapshot with head 1 switched off since: its panel is drawn (the change is
    the point), its title says "off now" after the Δ symbol."""
    from mha_gui.engine.teaching.difference import DifferenceData
    from mha_gui.export.figures.difference import difference_scene

    then = load_preset("toy")
    scene = difference_scene(DifferenceData(ablated("toy"), then), "mixing")
    panels = {p.head: p for r in scene.rows for p in r.panels}
    assert not panels[1].off and panels[1].title.endswith("· off now")
    assert panels[1].title.startswith("head 1 · ΔZ₁ · max|Δ|")


@pytest.mark.parametrize("preset", ["toy", "causal-6x16", "gqa"])
def test_a_switched_off_heads_longer_titles_lay_out_at_every_page_width(preset):
    """The handout and the GIF lay a stage out at narrower widths; the "· off" titles of
    causal-6x16's head 1 never fit there, and the loop that takes panels off a line
    found the same count again for ever (the handout export ran 12 minutes). Every
    stage lays out at every width they try, and in a bounded time."""
    import signal

    from mha_gui.export import figure
    from mha_gui.export.animation import NARROWER_WIDTHS
    from mha_gui.export.handout import FIGURE_WIDTHS

    def hung(_signum, _frame):
        raise AssertionError("layout_scene did not finish in 60 s")

    s = ablated(preset)
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        for stage in range(7):
            scene = figure.build_scene(s, stage)
            for width in sorted({*FIGURE_WIDTHS, *NARROWER_WIDTHS}):
                lay = figure.layout_scene(scene, vector=True, header=False, max_width=width)
                assert len(lay.panels) == sum(len(r.panels) for r in scene.rows)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_taking_a_panel_off_a_line_always_leaves_fewer_per_line():
    from hypothesis import given
    from hypothesis import strategies as st

    from mha_gui.export.layout import fewer_cols

    @given(st.integers(2, 64).flatmap(lambda k: st.tuples(st.just(k), st.integers(2, k))))
    def check(case):
        k, ncols = case
        assert 1 <= fewer_cols(k, ncols) < ncols

    check()
