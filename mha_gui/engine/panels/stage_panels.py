"""What every stage shows, described once: its panels with their numbers, names and scale.

The window's heatmaps, the exported figures (PNG/SVG/PDF/GIF), the handout, LaTeX and the
hover texts all read `describe_stage`, so a teacher sees the same titles, colour levels
and number format on screen and on paper. The ideas it puts together live one per module:

- engine/panels/stages.py — the stage catalogue: each stage's rows of panels (`plan_for`),
  formula, operands and cost;
- engine/panels/panel_kinds.py — the panel kinds: where a matrix comes from, its columns, when
  it changes (`panel_changed`), and the (kind, head) keys (`panel_key`, `key_head`);
- engine/panels/notation.py — symbols, titles and captions;
- engine/panels/colour_scale.py — a stage's levels, weights' colours and number format;
- engine/panels/stage_data.py — the StageData adapters over a Session or explicit numbers.

Their public names are importable from here too, where most callers look for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.numbers import NumberFormat, number_format, peak, pretty
from mha_gui.engine.panels.colour_scale import (
    WEIGHTS_RANGES,
    bar_label,
    check_weights_range,
    stage_format,
    stage_levels,
    weights_colours,
)
from mha_gui.engine.panels.notation import (
    LAYER_TITLES,
    ROTATED,
    Symbol,
    caption,
    panel_title,
    symbol,
)
from mha_gui.engine.panels.panel_kinds import (
    KINDS,
    LAYER_KEY,
    Kind,
    StageData,
    key_head,
    panel_changed,
    panel_key,
)
from mha_gui.engine.panels.stage_data import SessionData, TraceData
from mha_gui.engine.panels.stages import (
    PLANS,
    RowPlan,
    Stage,
    StagePlan,
    as_stage,
    formula_for,
    plan_for,
    shapes_line,
)

__all__ = [
    "KINDS",
    "LAYER_KEY",
    "LAYER_TITLES",
    "PLANS",
    "ROTATED",
    "WEIGHTS_RANGES",
    "Kind",
    "PanelView",
    "RowPlan",
    "RowView",
    "SessionData",
    "StageData",
    "StagePlan",
    "StageView",
    "Symbol",
    "TraceData",
    "as_stage",
    "bar_label",
    "caption",
    "check_weights_range",
    "describe_stage",
    "key_head",
    "make_panel",
    "panel_changed",
    "panel_key",
    "panel_keys",
    "panel_title",
    "plan_for",
    "shows_pairs",
    "stage_format",
    "stage_levels",
    "symbol",
    "weights_colours",
]


def shows_pairs(stage: Stage | int | str) -> bool:
    """Are the stage's panels query × key (scores, weights), so that a cell is a (query,
    key) pair a user can block or open in the neuron view? Its kinds say (`masked`)."""
    return any(KINDS[row.kind].masked for row in as_stage(stage).plan.rows)


def panel_keys(stage: Stage | int | str, config: Config) -> list[tuple[str, int]]:
    """Every panel of a stage as its key (kind, head): LAYER_KEY for a layer-wide panel."""
    keys = []
    for row in plan_for(stage, config).rows:
        if KINDS[row.kind].per is None:
            keys.append(panel_key(row.kind, None))
        else:
            keys += [panel_key(row.kind, i) for i in range(config.h)]
    return keys


@dataclass
class PanelView:
    """One panel with its numbers, ready to draw."""

    kind: str
    head: int | None
    matrix: np.ndarray
    row_labels: list[str]
    col_labels: list[str]
    symbol: Symbol
    title: str  # Unicode (figures)
    title_html: str  # rich text (the window)
    blocked: np.ndarray | None = None
    query_rows: bool = True
    col_blocks: list[tuple[int, int, int]] = field(default_factory=list)  # H: (start, stop, head)
    colours: np.ndarray | None = None  # what the colours show, when not `matrix` itself

    @property
    def display(self) -> np.ndarray:
        return self.matrix if self.colours is None else self.colours

    @property
    def key(self) -> tuple[str, int]:
        return panel_key(self.kind, self.head)


@dataclass
class RowView:
    kind: str
    caption: str
    panels: list[PanelView]


@dataclass
class StageView:
    """Everything one stage shows: title, formula, shapes, rows of panels, one scale."""

    stage: Stage
    formula: str
    shapes: str
    rows: list[RowView]
    color: str  # "weights" or "values"
    levels: tuple[float, float]
    fmt: NumberFormat
    bar_label: str

    @property
    def title(self) -> str:
        return self.stage.heading

    @property
    def panels(self) -> list[PanelView]:
        return [p for row in self.rows for p in row.panels]

    @property
    def blocked_shown(self) -> bool:
        return any(p.blocked is not None for p in self.panels)


def make_panel(data: StageData, kind: str, head: int | None) -> PanelView:
    """Panel (kind, head) of the data's current numbers."""
    c, spec = data.config, KINDS[kind]
    head = None if spec.per is None else head
    matrix = spec.source(data, head)
    blocked = None
    if spec.masked:
        mask = data.trace().mask
        blocked = mask if mask is not None and mask.any() else None
    blocks = [(i * c.d_v, (i + 1) * c.d_v, i) for i in range(c.h)] if kind == "H" else []
    return PanelView(
        kind,
        head,
        matrix,
        list(data.tokens),
        spec.columns(c, list(data.tokens)),
        symbol(kind, head, c),
        panel_title(kind, head, c),
        panel_title(kind, head, c, html=True),
        blocked,
        spec.query_rows,
        blocks,
    )


def describe_stage(
    data: StageData,
    stage: Stage | int | str,
    heads: Iterable[int] | None = None,
    weights_range: str = "fixed",
) -> StageView:
    """What `stage` shows for `heads` (default: all). The colour scale always covers every
    head, so one head's figure has the colours that head has in the window.
    `weights_range` picks what the weights' colours show (see `weights_colours`)."""
    s = as_stage(stage)
    c = data.config
    plan = plan_for(s, c)
    shown = list(range(c.h)) if heads is None else list(heads)
    rows, peaks = [], []
    for row in plan.rows:
        layer = KINDS[row.kind].per is None
        everyone = [
            make_panel(data, row.kind, None if layer else i)
            for i in ([None] if layer else range(c.h))
        ]
        peaks += [peak(p.matrix) for p in everyone]
        panels = everyone if layer else [p for p in everyone if p.head in shown]
        if plan.color == "weights" and weights_range != "fixed":
            for p in panels:
                p.colours = weights_colours(p.matrix, weights_range)
        rows.append(RowView(row.kind, caption(s, row.kind, c), panels))
    levels = stage_levels(s, peaks)
    return StageView(
        s,
        pretty(formula_for(s, c)),
        pretty(shapes_line(s, c)),
        rows,
        plan.color,
        levels,
        number_format(plan.color, levels),
        bar_label(s, weights_range),
    )
