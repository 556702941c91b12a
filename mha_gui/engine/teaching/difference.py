""" "Now − snapshot": the stage description of a difference of two sessions' numbers.

`DifferenceData(now, then)` is a StageData (engine/panels/stage_panels.py) whose every matrix —
X, Q, K, V, S, A, Z, H, Y and the contributions — is now's minus then's, so
`describe_stage()` describes it like any session and the figure code draws it. Both must
have the same shapes (n, d_model, h, h_kv, d_k, d_v); switches (causal, scale, RoPE,
biases, ablated heads) may differ — that is often the change one wants to see.

Scores blocked on either side have no difference (−∞ − s is not a change one can colour):
they are −∞ here and listed as blocked; weights there are 0 on the blocked side, so their
difference is a real number and is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mha_gui.engine.panels.panel_kinds import StageData
from mha_gui.engine.panels.stage_data import SessionData

DIMENSIONS = ("n", "d_model", "h", "h_kv", "d_k", "d_v")


def shape_problem(now_config, then_config, then_name: str = "the snapshot") -> str | None:
    """Why two configurations cannot be subtracted (one sentence), or None."""
    diffs = [
        f"{d}={getattr(then_config, d)} (now {getattr(now_config, d)})"
        for d in DIMENSIONS
        if getattr(now_config, d) != getattr(then_config, d)
    ]
    if not diffs:
        return None
    return (
        f"{then_name} has {', '.join(diffs)}: a difference needs the same shapes "
        f"(n, d_model, h, h_kv, d_k, d_v)"
    )


def check_same_shapes(now_config, then_config, then_name: str = "the snapshot") -> None:
    problem = shape_problem(now_config, then_config, then_name)
    if problem is not None:
        raise ValueError(problem)


@dataclass
class DifferenceTrace:
    """The Trace attributes a stage description reads, as differences."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray  # −∞ where either side is blocked
    weights: np.ndarray
    heads: np.ndarray
    concat: np.ndarray
    output: np.ndarray
    mask: np.ndarray  # blocked now OR in the snapshot
    mask_now: np.ndarray
    mask_then: np.ndarray
    # what the scores read (rotated with RoPE, else the projections): now − then
    q_rot: np.ndarray | None = None
    k_rot: np.ndarray | None = None

    @property
    def masks_differ(self) -> bool:
        return not np.array_equal(self.mask_now, self.mask_then)


def difference_trace(now, then) -> DifferenceTrace:
    """now − then for every intermediate of two traces of the same shapes."""
    union = now.mask | then.mask
    with np.errstate(invalid="ignore"):
        scores = np.where(union[None], -np.inf, now.scores - then.scores)
    return DifferenceTrace(
        now.q - then.q,
        now.k - then.k,
        now.v - then.v,
        scores,
        now.weights - then.weights,
        now.heads - then.heads,
        now.concat - then.concat,
        now.output - then.output,
        union,
        now.mask.copy(),
        then.mask.copy(),
        now.q_scores - then.q_scores,
        now.k_scores - then.k_scores,
    )


class DifferenceData:
    """StageData of now − then (two StageData, or Sessions, of the same shapes)."""

    def __init__(self, now, then, then_name: str = "the snapshot"):
        self.now = _data(now)
        self.then = _data(then)
        check_same_shapes(self.now.config, self.then.config, then_name)
        self.config = self.now.config
        self.tokens = list(self.now.tokens)

    def matrix(self, name: str) -> np.ndarray:
        a = np.asarray(self.now.matrix(name), float) if _has(self.now, name) else None
        b = np.asarray(self.then.matrix(name), float) if _has(self.then, name) else None
        if a is None and b is None:
            raise KeyError(name)
        if a is None:
            return -b
        return a if b is None else a - b

    @cached_property
    def _trace(self) -> DifferenceTrace:
        return difference_trace(self.now.trace(), self.then.trace())

    def trace(self) -> DifferenceTrace:
        return self._trace

    def contribution(self, head: int) -> np.ndarray:
        return np.asarray(self.now.contribution(head)) - np.asarray(self.then.contribution(head))


def _data(source) -> StageData:
    from mha_gui.engine.layer.session import Session

    return SessionData(source) if isinstance(source, Session) else source


def _has(data, name: str) -> bool:
    return name in data.config.parameter_shapes()
