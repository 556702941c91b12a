"""A stage's one colour scale: its levels, what the weights' colours show, its number format.

Every panel of a stage shares one scale — every head, on screen and on paper — so a
teacher compares heads by colour. Weights are 0..1 (or divided by a head's or a row's
largest weight, `weights_range`); every other stage is ±nice_peak of its largest finite
magnitude. The colour class is the stage's `plan.color` (engine/panels/stages.py).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from mha_gui.engine.layer.numbers import NumberFormat, nice_peak, number_format
from mha_gui.engine.panels.stages import Stage, as_stage


def stage_levels(stage: Stage | int | str, peaks: Iterable[float]) -> tuple[float, float]:
    """The one colour scale of a stage, shared by all its panels (every head, on screen and
    on paper): 0..1 for weights, else ±nice_peak of the largest finite magnitude."""
    if as_stage(stage).plan.color == "weights":
        return (0.0, 1.0)
    top = nice_peak(max(peaks, default=0.0))
    return (-top, top)


WEIGHTS_RANGES = {
    "fixed": "weight (0–1)",
    "head": "weight ÷ head's max",
    "row": "weight ÷ row's max",
}


def check_weights_range(name: str) -> str:
    if name not in WEIGHTS_RANGES:
        raise ValueError(
            f"unknown weights range {name!r}; choose one of {', '.join(WEIGHTS_RANGES)}"
        )
    return name


def weights_colours(matrix: np.ndarray, weights_range: str) -> np.ndarray:
    """What the colours of a weights panel show: the weights themselves ("fixed", 0–1),
    or divided by the panel's ("head") or each row's ("row") largest weight — a layer of
    128 tokens whose weights are all near 1/128 is then not a blank panel. The printed
    numbers stay the weights."""
    if check_weights_range(weights_range) == "fixed":
        return matrix
    axis = None if weights_range == "head" else -1
    top = np.max(matrix, axis=axis, keepdims=axis is not None)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(top > 0, matrix / np.where(top > 0, top, 1.0), 0.0)


def bar_label(stage: Stage | int | str, weights_range: str = "fixed") -> str:
    plan = as_stage(stage).plan
    return (
        WEIGHTS_RANGES[check_weights_range(weights_range)]
        if plan.color == "weights"
        else plan.bar_label
    )


def stage_format(stage: Stage | int | str, levels: tuple[float, float]) -> NumberFormat:
    return number_format(as_stage(stage).plan.color, levels)
