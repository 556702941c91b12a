"""One numbering for people: every export names a stage as the window does, by
Stage.number (1 … 7) — "Stage 4 · Attention weights", never the 0-based index."""

from __future__ import annotations

import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.teaching.difference import DifferenceData
from mha_gui.export.figures.difference import difference_scene
from mha_gui.export.latex import stage_document
from mha_gui.export.scene import build_scene
from mha_gui.export.worksheet_plan import plan_worksheets


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_figures_latex_and_snapshot_diff_say_stage_number(stage):
    s = load_preset("toy")
    assert build_scene(s, stage).title == f"Stage {stage.index + 1} · {stage.title}"
    tex = stage_document(s, stage)
    assert rf"\section*{{Stage {stage.number} $\cdot$ {stage.title}}}" in tex
    assert f"stage {stage.number} ({stage.name})" in tex
    then = s.copy()
    then.params.W_Q[0, 0, 0] += 1
    diff = difference_scene(DifferenceData(s, then), stage)
    assert diff.title.endswith(stage.heading)


def test_worksheet_title_is_the_heading():
    sheet = plan_worksheets(load_preset("toy"), "weights", 3, 0)[0]
    assert sheet.title == "Stage 4 · Attention weights"
