"""Handout pages are filled: the figure and the stage's number tables as large as the
page allows — small layers' tables at 10–12 pt, not 7 pt under a half-page figure."""

from __future__ import annotations

import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.panels.stages import STAGES
from mha_gui.export import figure
from mha_gui.export.handout import MARGIN, PAGE_H, PAGE_W, TABLE_MAX_SIDE, _page_plan, _tables
from mha_gui.export.latex import stage_matrices

HEADER = 150.0  # about where a page's header ends


def plan(preset: str, stage):
    s = load_preset(preset)
    t = s.run()
    mats = [
        (p.symbol.text, p.matrix, p.row_labels, p.col_labels)
        for p in stage_matrices(s, stage, trace=t)
        if max(p.matrix.shape) <= TABLE_MAX_SIDE
    ]
    lay = figure.layout_scene(figure.build_scene(s, stage, trace=t), vector=True, header=False)
    kind = "weights" if stage.name == "weights" else "values"
    scale, px = _page_plan(lay, mats, HEADER, 2, kind)
    tables = _tables(None, mats, 0.0, None, 2, kind, px, measure=True)
    return lay, scale, px, tables


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_a_small_layer_fills_its_pages(stage):
    lay, scale, px, tables = plan("toy", stage)
    assert px >= 10  # was 7 pt
    bottom = HEADER + lay.height * scale + 14 + tables
    assert bottom <= PAGE_H - MARGIN  # everything fits the page …
    wide = lay.width * scale >= (PAGE_W - 2 * MARGIN) * 0.99
    assert wide or bottom >= PAGE_H - MARGIN - 30  # … and the figure fills its width or the page


def test_a_large_stage_keeps_half_a_page_for_its_figure():
    lay, scale, px, _ = plan("causal-6x16", STAGES[1])  # twelve 6×4 tables
    assert px == 7.0 and lay.height * scale >= PAGE_H * 0.4 - 1
