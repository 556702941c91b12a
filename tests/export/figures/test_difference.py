"""The A/B snapshot's figure (export/figures/difference.py): what it prints and colours."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.teaching.difference import DifferenceData
from mha_gui.export.drawing import WRITERS
from mha_gui.export.figures.difference import change_text, difference_figure, difference_scene


def largest_change(panel) -> float:
    """max |Δ| of a panel, computed here: over its finite cells that are not blocked."""
    m = np.asarray(panel.matrix, float)
    shown = np.isfinite(m) if panel.blocked is None else np.isfinite(m) & ~panel.blocked
    return float(np.abs(m[shown]).max()) if shown.any() else 0.0


@pytest.fixture
def pair():
    then = load_preset("toy")
    now = then.copy()
    now.params.W_Q[1, 0, 1] += 0.7
    return now, then


@pytest.mark.parametrize("stage", ["projections", "scores", "weights", "mixing", "output"])
def test_titles_print_each_panels_largest_change_and_rows_are_signed(pair, stage):
    now, then = pair
    scene = difference_scene(DifferenceData(now, then), stage)
    a, b = now.run(), then.run()
    for row in scene.rows:
        assert row.kind == "values"  # diverging, also for the weights
        lo, hi = row.levels
        assert lo == -hi and hi * (1 + 1e-9) >= max(
            np.abs(p.matrix[np.isfinite(p.matrix)]).max() for p in row.panels
        )
    panels = {p.title.split(" · max")[0]: p for r in scene.rows for p in r.panels}
    for p in panels.values():
        assert p.title.endswith(f"max|Δ| {change_text(largest_change(p))}")
    if stage == "weights":
        expect = np.abs(a.weights - b.weights).max(axis=(1, 2))
        for i in range(2):
            title = panels[f"head {i} · ΔA{'₀₁'[i]}"].title
            assert title.endswith(f"max|Δ| {change_text(expect[i])}")
        assert expect[0] == 0 and expect[1] > 0  # only head 1 was edited
        assert "largest change" in scene.info


def test_no_change_is_said_in_words(pair):
    _now, then = pair
    scene = difference_scene(DifferenceData(then, then.copy()), "scores")
    assert "no number of this stage differs" in scene.info
    assert all(p.title.endswith("max|Δ| 0") for r in scene.rows for p in r.panels)


def test_change_text():
    assert change_text(0) == "0"
    assert change_text(2.220446049250313e-16) == "2.2×10^{−16}"
    assert change_text(0.0834) == "0.083"


def test_the_difference_figure_is_written(pair, tmp_path):
    now, then = pair
    for suffix in (".png", ".svg", ".pdf"):
        out = tmp_path / f"d{suffix}"
        WRITERS[suffix](out, difference_figure(now, then, "weights"))
        assert out.stat().st_size > 1000
    assert "ΔA" in (tmp_path / "d.svg").read_text()
