"""The identity windows' figures (export/figures/identities.py): every identity draws and
prints its difference, on the teaching presets and on a layer with every dimension 1."""

from __future__ import annotations

import pytest

from mha_gui.engine import Config, Session, random_parameters
from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.layer.session import default_tokens
from mha_gui.engine.teaching import identities as ids
from mha_gui.export.drawing import WRITERS, render_drawing
from mha_gui.export.figures.identities import NAMES, identity_figure, identity_on


@pytest.mark.parametrize("preset", ["toy", "gqa", "mqa", "causal-6x16"])
def test_every_identity_draws_and_says_its_difference(preset, tmp_path):
    s = load_preset(preset)
    for identity in ids.all_identities(s, head=0, query=min(2, s.config.n - 1)):
        fig = identity_figure(identity, s.tokens)
        assert "max|left − right|" in fig.layout.scene.info
        assert "NOT EQUAL" not in fig.layout.scene.info
        WRITERS[".png"](tmp_path / f"{identity.name}.png", fig, width=400)


def one_of_everything(**dims) -> Session:
    config = Config(**{"n": 1, "d_model": 2, "h": 1, "d_k": 1, "d_v": 1, **dims})
    return Session(config, default_tokens(config.n), random_parameters(config, seed=3))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "dims",
    [{}, {"d_k": 2}, {"h": 2, "d_model": 4, "d_k": 2, "d_v": 2}, {"n": 2}],
    ids=["all-1", "n1-dk2", "n1-h2", "n2"],
)
def test_every_identity_draws_with_one_token(name, dims):
    """One token: a row of Q (1 × d_k) is not a row of keys — before, its columns were
    labelled with the one token and painting raised IndexError at the second column."""
    session = one_of_everything(**dims)
    figure = identity_figure(identity_on(name, session), session.tokens)
    for row in figure.layout.scene.rows:
        for p in row.panels:
            nr, nc = p.matrix.shape
            assert (len(p.row_labels), len(p.col_labels)) == (nr, nc), p.title
    assert not render_drawing(figure, 300).isNull()
