"""Which lines the token line view draws: one per (head, query, key), faded by its weight.

The view puts the tokens in two columns, queries left and keys right, and joins each
query to each key with a line whose opacity and width grow with the weight A_i[j, k],
one colour per head. This module decides which lines there are and how strong each is
(no Qt), so tests can read the figure's model instead of its pixels.

Blocked pairs draw no line. Above `READABLE_TOKENS` tokens the figure thins itself: lines
whose strength is below `THIN_BELOW` are left out (the drawing says so and how many), and
never more than the `MAX_LINES` strongest are kept — at n = 4096 a row-scaled, nearly
uniform layer has ~30 M lines above any threshold: gigabytes of Line objects and minutes
of painting for lines a fraction of a pixel apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from mha_gui.engine.panels.colour_scale import weights_colours

READABLE_TOKENS = 32  # up to this many tokens every line is drawn
THIN_BELOW = 0.1  # above it, lines weaker than this are left out
MAX_LINES = 20_000  # at most this many lines, the strongest (the threshold rises to fit)


@dataclass(frozen=True)
class Line:
    head: int
    query: int
    key: int
    weight: float  # A_i[query, key]
    strength: float  # what opacity and width show: the weight, or ÷ the head's/row's max


@dataclass(frozen=True)
class LineModel:
    lines: tuple[Line, ...]  # weakest first: the strong lines are drawn on top
    heads: tuple[int, ...]  # heads whose lines are drawn
    threshold: float  # lines with a strength below it were left out (0: none)
    candidates: int  # lines there would be without the threshold (blocked pairs excluded)


def token_lines(
    weights: np.ndarray,
    mask: np.ndarray | None,
    heads: Iterable[int] | None = None,
    focus: tuple[str, int] | None = None,
    weights_range: str = "fixed",
    threshold: float | None = None,
) -> LineModel:
    """The lines of `heads` (default all) for weights (h, n, n) and a blocked mask (n, n).

    `focus` ("query", j) or ("key", k) keeps only that token's lines (the hovered token).
    `weights_range` is the colour range of the weights ("fixed", "head", "row"): the
    strength is what the heatmaps' colours show. `threshold` None: 0 up to
    READABLE_TOKENS tokens, THIN_BELOW above.
    """
    h, n, _ = weights.shape
    heads = tuple(range(h)) if heads is None else tuple(int(i) for i in heads)
    if threshold is None:
        threshold = 0.0 if n <= READABLE_TOKENS else THIN_BELOW
    blocked = np.zeros((n, n), bool) if mask is None else np.asarray(mask, bool)
    rows = np.arange(n)
    cols = np.arange(n)
    if focus is not None:
        kind, index = focus
        if kind not in ("query", "key"):
            raise ValueError(f"focus is a ('query', j) or ('key', k) pair, got {focus!r}")
        if kind == "query":
            rows = np.array([index])
        else:
            cols = np.array([index])
    open_pairs = ~blocked[np.ix_(rows, cols)]
    found, candidates, strong = [np.zeros((4, 0))], 0, 0  # rows: head, query, key, strength
    for i in heads:
        strength = weights_colours(weights[i], weights_range)[np.ix_(rows, cols)]
        candidates += int(open_pairs.sum())
        a, b = np.nonzero(open_pairs & (strength >= threshold) & (strength > 0))
        strong += a.size
        found.append(_strongest(np.stack([np.full(a.size, i), rows[a], cols[b], strength[a, b]])))
    kept = _strongest(np.concatenate(found, axis=1))
    if strong > MAX_LINES:  # the strongest were kept: the weakest of them is the threshold
        threshold = max(threshold, float(kept[3].min()))
    kept = kept[:, np.argsort(kept[3], kind="stable")]  # weakest first
    lines = [
        Line(int(i), int(j), int(k), float(weights[int(i), int(j), int(k)]), float(s))
        for i, j, k, s in kept.T
    ]
    return LineModel(tuple(lines), heads, threshold, candidates)


def _strongest(found: np.ndarray) -> np.ndarray:
    """The MAX_LINES columns of `found` (head, query, key, strength) with the largest
    strength, in their order; all of them when there are no more."""
    if found.shape[1] <= MAX_LINES:
        return found
    top = np.sort(np.argpartition(found[3], found.shape[1] - MAX_LINES)[-MAX_LINES:])
    return found[:, top]
