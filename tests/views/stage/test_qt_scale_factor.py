"""The window under QT_SCALE_FACTOR=1.5 (a 150 % desktop scale; the app's own zoom is
tested in test_square_heatmaps.py): Qt then lays the window out in logical pixels, each
drawn as 1.5 device pixels, so every heatmap keeps the cells it has at 100 % — ≥ 14 px
(n ≤ 16) / ≥ 10 px (n ≤ 40) logical, 21 / 15 px on the screen — and names every token.
Qt reads the variable once, so this runs in a fresh interpreter (scale_factor_probe.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mha_gui.views.stage.square_grid import READABLE, SMALL

ROOT = Path(__file__).resolve().parents[3]


def probe(layer: str, tmp_path) -> dict:
    env = dict(os.environ, QT_SCALE_FACTOR="1.5", QT_QPA_PLATFORM="offscreen")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # never the real settings
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "tests.views.stage.scale_factor_probe", layer],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("layer", ["causal-6x16", "40,32,8"])
def test_square_cells_and_every_token_named_at_scale_factor_1_5(layer, tmp_path):
    out = probe(layer, tmp_path)
    assert out["ratio"] == pytest.approx(1.5)  # the variable took effect
    assert out["size"][0] <= 1280 and out["size"][1] <= 720
    assert out["stages"] and len(set(out["bar"])) == 1  # the stage bar never reflows
    for p in out["stages"]:
        width, height = p["cell"]
        assert abs(width - height) < 0.05 * max(width, height), p  # square
        least = 14 if p["side"] <= SMALL else 10 if p["side"] <= READABLE else 0
        assert min(width, height) >= least - 0.01, p
        assert min(width, height) * out["ratio"] >= least * 1.5 - 0.02, p  # device pixels
        if p["token_rows"]:
            assert p["rows_named"], p
        assert p["cols_named"] in (None, True), p
    assert out["strip_keys"]
