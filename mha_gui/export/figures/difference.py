"""The "now − snapshot" figure of a stage (the difference view, `--view diff`).

The difference figure is the stage figure (scene.py → layout.py → painting.py) of a
`DifferenceData` (engine/teaching/difference.py), adapted in three ways: every row is signed
(diverging colours on ±the largest change, also for the weights), every panel title says
its largest change, and the title block says what was subtracted from what.
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui.engine.layer.numbers import nice_peak, num, peak, pretty
from mha_gui.engine.layer.session import Session, ViewState
from mha_gui.engine.panels.stage_panels import LAYER_TITLES, as_stage
from mha_gui.engine.teaching.difference import DifferenceData
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.figure import StageFigure
from mha_gui.export.layout import layout_scene
from mha_gui.export.scene import Scene, build_scene
from mha_gui.export.text import ensure_app

DELTA = "Δ"


def change_text(value: float) -> str:
    """A largest change as a figure prints it: 0, 0.031, 2.2×10^{−16}."""
    value = float(value)
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return pretty(str(value))
    if abs(value) < 1e-3 or abs(value) >= 1e4:
        return pretty(f"{value:.2g}")
    return num(value, 3)


def finite_changes(matrix: np.ndarray, blocked: np.ndarray | None = None) -> float:
    """max |Δ| over the cells that have a difference (finite, not blocked)."""
    m = np.asarray(matrix, float)
    if blocked is not None:
        m = np.where(blocked, 0.0, m)
    return peak(m)


# -------------------------------------------------------------- difference ---------
def difference_scene(
    data: DifferenceData,
    stage,
    *,
    marked_head: int = 0,
    query: int | None = None,
    then_label: str = "snapshot",
) -> Scene:
    """The scene of `stage` showing now − then, one diverging scale for every row."""
    s = as_stage(stage)
    scene = build_scene(_ViewOnly(marked_head), s, query=query, data=data)
    trace = data.trace()
    largest, where = 0.0, ""
    for row in scene.rows:
        for p in row.panels:
            if s.name == "weights":
                # a weight has a difference wherever either side has one (blocked: 0)
                both = trace.mask_now & trace.mask_then
                p.blocked = both if both.any() else None
            p.colours = None
            # a head switched off now: its panel shows what switching it off changed, so
            # it is drawn (not veiled) and its title says "off now"
            off = " · off now" if p.off else ""
            title = p.title.removesuffix(" · off") if p.off else p.title
            p.off, p.off_blocks = False, ()
            change = finite_changes(p.matrix, p.blocked)
            p.title = f"{delta_title(title)} · max|{DELTA}| {change_text(change)}{off}"
            if change > largest or not where:
                largest, where = change, p.title.split(" · max")[0]
    top = nice_peak(largest) if largest > 0 else 1.0
    for row in scene.rows:
        row.kind = "values"
        row.levels = (-top, top)
        row.bar_label = f"{DELTA} {row.bar_label.replace(' (0–1)', '')}"
        caption = row.caption.replace("each row sums to 1", f"each row of {DELTA} sums to 0")
        row.caption = f"{DELTA} = now − {then_label} · {caption}"
    scene.title = f"now − {then_label} · {scene.title}"
    first = STAGE_SYMBOLS[s.name][0]
    scene.formula = pretty(f"{DELTA}{first} = {first}(now) − {first}({then_label})")
    if largest == 0:
        info = [f"no number of this stage differs from the {then_label}"]
    else:
        info = [f"largest change {change_text(largest)} in {where}"]
    if s.name == "scores" and getattr(trace, "masks_differ", False):
        info.append(f"hatched: blocked now or in the {then_label} (no score difference)")
    scene.info = pretty(" · ".join(info)) + " · " + scene.info
    scene.legend_blocked = any(p.blocked is not None for r in scene.rows for p in r.panels)
    return scene


STAGE_SYMBOLS = {
    "input": ("X",),
    "projections": ("Q_i", "K_i", "V_i"),
    "scores": ("S_i",),
    "weights": ("A_i",),
    "mixing": ("Z_i",),
    "concat": ("H",),
    "output": ("Y", "C_i"),
}
_LAYER_KIND = {title: kind for kind, title in LAYER_TITLES.items()}


def delta_title(title: str) -> str:
    """`head 1 · A₁` → `head 1 · ΔA₁`; `output Y` → `ΔY`."""
    if title in _LAYER_KIND:
        return DELTA + _LAYER_KIND[title]
    head, sep, sym = title.rpartition(" · ")
    sym = f"({sym})" if " " in sym else sym
    return f"{head}{sep}{DELTA}{sym}" if sep else DELTA + title


class _ViewOnly:
    """What build_scene reads from a session besides `data`: the framed head."""

    def __init__(self, head: int):
        self.view = ViewState(0, head, 0)


def difference_figure(
    now,
    then,
    stage,
    *,
    marked_head: int = 0,
    query: int | None = None,
    then_label: str = "snapshot",
    then_name: str | None = None,
    vector: bool = True,
) -> StageFigure:
    """The figure of now − then; ValueError (`then_name` has n=…) when shapes differ."""
    ensure_app()
    data = DifferenceData(now, then, then_name or f"the {then_label}")
    scene = difference_scene(
        data, stage, marked_head=marked_head, query=query, then_label=then_label
    )
    return StageFigure(layout_scene(scene, vector=vector))


def diff_view_drawing(data, options: FigureOptions) -> StageFigure:
    """`mha-gui export --view diff --against OTHER.json`: now (the session) − other."""
    against = options.against
    if not isinstance(against, Session):
        raise ValueError("--view diff needs --against OTHER.json (a session to subtract)")
    return difference_figure(
        data,
        against,
        options.stage,
        marked_head=min(options.head, data.config.h - 1),
        then_label="other",
        then_name="the --against session",
    )
