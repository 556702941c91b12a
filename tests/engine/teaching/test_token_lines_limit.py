"""The token line view stays bounded at any n (issue 21).

At n = 4096 a row-scaled, nearly uniform layer has ~33 M (head, query, key) lines above
the thinning threshold: the view built a Line object for each (gigabytes; the random user's
run reached 3 GB and painted for minutes). At most MAX_LINES are kept, the strongest,
and the threshold the figure prints is raised to the weakest kept.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.teaching import token_lines as tl


def test_at_most_max_lines_the_strongest_and_the_threshold_says_so(monkeypatch):
    monkeypatch.setattr(tl, "MAX_LINES", 50)
    n = 40
    rng = np.random.default_rng(0)
    w = rng.random((3, n, n))
    w /= w.sum(-1, keepdims=True)
    model = tl.token_lines(w, None, weights_range="row", threshold=0.0)
    assert len(model.lines) == 50 and model.candidates == 3 * n * n
    strengths = [line.strength for line in model.lines]
    assert strengths == sorted(strengths)  # weakest first
    every = np.sort(
        np.concatenate([(w[i] / w[i].max(-1, keepdims=True)).ravel() for i in range(3)])
    )
    assert np.isclose(strengths[0], every[-50]) and np.isclose(model.threshold, every[-50])
    for line in model.lines:
        assert line.weight == w[line.head, line.query, line.key]


def test_below_the_limit_every_line_is_kept_as_before():
    w = np.full((2, 4, 4), 0.25)
    mask = np.triu(np.ones((4, 4), bool), 1)
    model = tl.token_lines(w, mask)
    assert len(model.lines) == 2 * 10 and model.threshold == 0.0 and model.candidates == 20
    assert [(ln.head, ln.query, ln.key) for ln in model.lines[:3]] == [
        (0, 0, 0),
        (0, 1, 0),
        (0, 1, 1),
    ]


def test_a_4096_token_layer_gives_a_bounded_model_in_seconds():
    n = 4096
    w = np.full((2, n, n), 1.0 / n)
    model = tl.token_lines(w, np.triu(np.ones((n, n), bool), 1), weights_range="row")
    assert len(model.lines) == tl.MAX_LINES
    assert model.candidates == 2 * n * (n + 1) // 2
