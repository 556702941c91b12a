"""The identity windows' figures (export/figures/identities.py): every identity draws and
prints its difference."""

from __future__ import annotations

import pytest

from mha_gui.engine import identities as ids
from mha_gui.engine.presets import load_preset
from mha_gui.export.drawing import WRITERS
from mha_gui.export.figures.identities import identity_figure


@pytest.mark.parametrize("preset", ["toy", "gqa", "mqa", "causal-6x16"])
def test_every_identity_draws_and_says_its_difference(preset, tmp_path):
    s = load_preset(preset)
    for identity in ids.all_identities(s, head=0, query=min(2, s.config.n - 1)):
        fig = identity_figure(identity, s.tokens)
        assert "max|left − right|" in fig.layout.scene.info
        assert "NOT EQUAL" not in fig.layout.scene.info
        WRITERS[".png"](tmp_path / f"{identity.name}.png", fig, width=400)
