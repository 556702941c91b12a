"""Handout pages are filled: the figure and the stage's number tables as large as the
page allows — small layers' tables at 10–14 pt, the room left below them holding a
worked example, and no table of any layer below 9 pt (a table wider than the page is cut
into column blocks, tables that do not fit below the figure continue on pages of their
own)."""

from __future__ import annotations

import re

import pytest

from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.export import figure
from mha_gui.export.files import export_to
from mha_gui.export.handout import (
    MARGIN,
    PAGE_H,
    PAGE_W,
    _page_plan,
    _pieces,
    _tables,
    figure_plan,
    page_tables,
    table_format,
)

HEADER = 150.0  # about where a page's header ends


def plan(session, stage):
    t = session.run()
    mats, kind = page_tables(session, stage, None, t)
    scene = figure.build_scene(session, stage, trace=t)
    lay, scale, px, together = figure_plan(scene, mats, HEADER, 2, kind)
    fmt = table_format([m[1] for m in mats], 2, kind)
    pieces = _pieces(mats, fmt, px)
    tables = _tables(None, pieces, 0.0, None, fmt, px, measure=True)[0]
    return lay, scale, px, together, tables, pieces, fmt


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_a_small_layer_fills_its_pages(stage):
    lay, scale, px, together, tables, _p, _f = plan(load_preset("toy"), stage)
    assert px >= 10 and together  # was 7 pt
    bottom = HEADER + lay.height * scale + 14 + tables
    assert bottom <= PAGE_H - MARGIN  # everything fits the page …
    wide = lay.width * scale >= (PAGE_W - 2 * MARGIN) * 0.99
    assert wide or bottom >= PAGE_H - MARGIN - 30  # … and the figure fills its width or the page


@pytest.mark.parametrize("layer", ["causal-6x16", "gqa", "16 tokens"])
@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_no_table_of_a_larger_layer_is_below_9_pt_nor_wider_than_the_page(layer, stage):
    session = random_session(0, 16, 16, 4) if layer == "16 tokens" else load_preset(layer)
    lay, scale, px, together, _t, pieces, fmt = plan(session, stage)
    assert px >= 9
    inner = PAGE_W - 2 * MARGIN
    for _sym, m, rows, _cols in pieces:
        lw = max(figure.text_width(r, px) for r in rows) + 6
        cw = max(figure.text_width(fmt.cell(float(v)), px) for v in m.flat) + 6
        assert lw + cw * m.shape[1] <= inner + 0.5
    # the figure keeps its share of its page (all of it when the tables go on)
    assert lay.height * scale >= PAGE_H * 0.4 - 1 or lay.width * scale >= inner * 0.99


def test_a_large_layer_continues_its_tables_on_pages_of_their_own(tmp_path, rich_texts):
    drawn = rich_texts
    out = export_to(load_preset("causal-6x16"), tmp_path / "h.pdf", handout=True)
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", out.read_bytes()))
    continued = [t for t in drawn if "continued" in t]
    assert continued and pages == 7 + len(continued)
    # W_O and H (16 columns) print in column blocks, never shrunk below 9 pt
    assert any(t.startswith("H[:, 0:8]") for t in drawn)


def test_the_room_below_a_small_layers_tables_holds_the_followed_tokens_worked_example(
    tmp_path, monkeypatch
):
    """Each toy page from the scores to the concatenation ends with the followed query's
    cells explained as the window's hover does (typeset; a dot product written out on
    its own line), down into the lower part of the page and never past its foot."""
    from mha_gui.engine.teaching.worked_example import worked_example
    from mha_gui.export.handout import BOTTOM

    drawn: dict[str, tuple[float, float]] = {}
    real = figure.draw_rich_wrapped

    def spy(painter, x, y, width, text, *a, **k):
        h = real(painter, x, y, width, text, *a, **k)
        drawn[text] = (y, h)
        return h

    monkeypatch.setattr(figure, "draw_rich_wrapped", spy)
    session = load_preset("toy")
    export_to(session, tmp_path / "h.pdf", handout=True, query=1)
    for stage in STAGES[2:6]:
        for explained in worked_example(session, stage, 0, 1).lines:
            first, *more = explained.split("\n")
            for line in [first.replace("   (", "\u2003("), *(m.strip() for m in more)]:
                assert line in drawn, (stage.name, line)
                y, h = drawn[line]
                assert y + h <= BOTTOM
    assert "q_1·k_3 = 3·1 + 0·0 = 3" in drawn  # the scores' second lines
    y, h = drawn[next(t for t in drawn if t.startswith("A_0[1,3]"))]
    assert y + h >= PAGE_H * 0.6  # the weights page was ~40 % empty below its tables


def test_the_worked_example_follows_the_framed_head_and_the_sessions_query(tmp_path, monkeypatch):
    """Exported from a window inspecting head 1 and following "sat" (File ▸ Export ▸
    Handout passes no head), every page explains head 1's row of "sat" — the head the
    figure frames — not head 0's row of the first token."""
    import dataclasses

    from mha_gui.engine.layer.session_value import ViewState

    headings: list[str] = []
    real = figure.draw_rich

    def spy(painter, x, y, text, *a, **k):
        if text.startswith("Worked example · "):
            headings.append(text)
        return real(painter, x, y, text, *a, **k)

    monkeypatch.setattr(figure, "draw_rich", spy)
    session = dataclasses.replace(load_preset("toy"), view=ViewState(3, 1, 2))
    export_to(session, tmp_path / "h.pdf", handout=True)
    assert 'Worked example · query "sat", head 1' in headings
    assert all('"sat"' in h for h in headings) and not any("head 0" in h for h in headings)


def _label_pt(lay, scale) -> float:
    return min(g.label_px for g in lay.panels) * scale


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_the_figures_labels_are_printed_at_8_pt(stage):
    """causal-6x16's four heads in a 1600-unit line were scaled to 0.32 on A4: labels of
    4.2 pt. The figure is laid out narrower for the page instead (smaller cells, text
    the same size), so its tokens read at 8 pt and more."""
    lay, scale, *_rest = plan(load_preset("causal-6x16"), stage)
    assert _label_pt(lay, scale) >= 8.0


@pytest.mark.parametrize("layer", ["toy", "gqa", "16 tokens"])
@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_the_page_never_prints_smaller_than_the_figure_at_its_own_width(layer, stage):
    session = random_session(0, 16, 16, 4) if layer == "16 tokens" else load_preset(layer)
    lay, scale, px, together, *_rest = plan(session, stage)
    t = session.run()
    mats, kind = page_tables(session, stage, None, t)
    own = figure.layout_scene(figure.build_scene(session, stage, trace=t), header=False)
    own_scale, own_px, own_together = _page_plan(own, mats, HEADER, 2, kind)
    assert together >= own_together
    if together == own_together:
        smallest = min(_label_pt(lay, scale), px if mats else 99)
        assert smallest >= min(_label_pt(own, own_scale), own_px if mats else 99) - 0.01


def test_every_header_line_prints_at_10_pt_or_more(tmp_path, monkeypatch):
    """The header's settings line (n, d_model, d_k, the head and query) printed at 8.5
    pt, its subscripts at ~5 pt: below what a printed page reads. Every line the page
    header draws is at 10 pt or more, and the settings line wraps inside the margins."""
    sizes: dict[str, float] = {}
    for name, wrapped in (("draw_rich", False), ("draw_rich_wrapped", True)):
        real = getattr(figure, name)

        def spy(painter, x, y, *args, _real=real, _wrapped=wrapped, **k):
            text, px = (args[1], args[2]) if _wrapped else (args[0], args[1])
            sizes[text] = px
            if _wrapped:
                assert x + args[0] <= PAGE_W - MARGIN + 0.5
            return _real(painter, x, y, *args, **k)

        monkeypatch.setattr(figure, name, spy)
    session = load_preset("gqa")
    export_to(session, tmp_path / "h.pdf", handout=True)
    for stage in STAGES:
        scene = figure.build_scene(session, stage)
        for line in (scene.title, scene.formula, scene.info, stage.what):
            assert sizes[line] >= 10, (stage.name, line, sizes[line])


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_a_tall_figure_is_not_shrunk_to_leave_its_tables_larger_than_10_pt(stage):
    """The toy's projections (three rows of panels, height-bound) printed their labels at
    5 pt beside 14 pt tables: the tables give up size, down to 10 pt, while that makes
    the figure's labels larger — every toy stage's labels now print at 7 pt or more."""
    from mha_gui.export.layout import LABEL_PX

    lay, scale, px, together, _t, _p, _f = plan(load_preset("toy"), stage)
    assert together and px >= 10
    assert scale * LABEL_PX >= 7.0


@pytest.mark.parametrize("preset", ["toy", "causal-6x16", "gqa"])
def test_rows_side_by_side_keep_every_element_apart_and_on_the_figure(preset):
    """side_by_side sets a tall figure's rows in columns for a page: every panel,
    caption and colour bar is kept, no two panels' frames overlap, and everything stays
    on the figure (the blocked-cells legend below it all)."""
    from mha_gui.export.layout import _bar_extent, side_by_side

    session = load_preset(preset)
    for stage in STAGES:
        laid = figure.layout_scene(figure.build_scene(session, stage), vector=True, header=False)
        for cols in range(1, len(laid.captions) + 1):
            lay = side_by_side(laid, cols)
            assert len(lay.panels) == len(laid.panels) and len(lay.bars) == len(laid.bars)
            assert [t for *_xy, t in lay.captions] == [t for *_xy, t in laid.captions]
            frames = [g.frame for g in lay.panels]
            for i, (ax, ay, aw, ah) in enumerate(frames):
                assert ax >= 0 and ay >= 0
                assert ax + aw <= lay.width + 1e-6 and ay + ah <= lay.height + 1e-6
                for bx, by, bw, bh in frames[i + 1 :]:
                    apart = ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
                    assert apart, (stage.name, cols)
            for bar in lay.bars:
                assert bar.x + _bar_extent(bar.row) <= lay.width + 1e-6
                assert bar.y + bar.h <= lay.height + 1e-6
            if lay.legend_y is not None:
                assert lay.legend_y >= max(y + h for _x, y, _w, h in frames)


def test_the_toy_projections_set_their_rows_side_by_side_on_the_page():
    """The toy's projections (Q, K and V rows of two narrow panels) take the page's
    width in two columns rather than one tall column: labels ~7.8 pt (5.0 before)."""
    from mha_gui.export.layout import LABEL_PX

    stage = STAGES[1]
    lay, scale, px, together, _t, _p, _f = plan(load_preset("toy"), stage)
    xs = {round(x) for x, _y, _t in lay.captions}
    assert len(xs) == 2  # two columns of rows
    assert together and px >= 10 and scale * LABEL_PX >= 7.5
