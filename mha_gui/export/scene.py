"""What a figure draws: the stage description of mha_gui.engine.panels.stage_panels, arranged
as rows of panels (one row per matrix kind, one panel per head) with a title block.

The window reads the same description, so titles, colour levels and number format on
paper are the ones on screen; this module only adds what paper needs besides (the
inspected-head frame, the outlined query row, the settings line under the title).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.attention.forward import Trace
from mha_gui.engine.layer.numbers import NumberFormat, number_format, pretty
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stage_panels import SessionData, StageData, as_stage, describe_stage
from mha_gui.engine.panels.stages import Stage


@dataclass
class Panel:
    title: str
    matrix: np.ndarray  # (rows, cols) float; -inf allowed where blocked
    row_labels: list[str]
    col_labels: list[str]
    head: int | None = None  # colours the title swatch and the inspected-head frame
    marked: bool = False  # the inspected head: drawn with a frame in its colour
    blocked: np.ndarray | None = None  # (rows, cols) bool, drawn grey, hatched, "×"
    query_row: int | None = None  # row outlined as the selected query
    col_blocks: list[tuple[int, int, int]] = field(default_factory=list)  # (start, stop, head)
    marked_block: int | None = None  # head whose column block is framed (concat)
    colours: np.ndarray | None = None  # what the colours show when not `matrix` (weights range)
    block_symbol: str = "Z"  # the column blocks' labels: Z₀, Z₁, … (Q for a packed X W^Q)
    off: bool = False  # a switched-off head's panel after the weights: hatched, "off"
    off_blocks: tuple[int, ...] = ()  # heads whose column block is off (concat)

    @property
    def display(self) -> np.ndarray:
        return self.matrix if self.colours is None else self.colours


@dataclass
class PanelRow:
    caption: str  # e.g. "Q_i = X W_i^Q · rows: query tokens"
    panels: list[Panel]
    kind: str  # "weights" (sequential 0..1) or "values" (diverging, symmetric)
    levels: tuple[float, float]
    bar_label: str

    @property
    def fmt(self) -> NumberFormat:
        return number_format(self.kind, self.levels)


@dataclass
class Scene:
    title: str
    formula: str
    shapes: str
    info: str
    rows: list[PanelRow]
    legend_blocked: bool = False


def build_scene(
    session: Session,
    stage: Stage | int | str,
    *,
    head: int | None = None,
    query: int | None = None,
    trace: Trace | None = None,
    data: StageData | None = None,
    weights_range: str = "fixed",
) -> Scene:
    """What one stage shows. `head=I` shows only head I; otherwise all heads, with the
    session's inspected head (`session.view.head`) framed. `query=J` outlines row J.
    `data` (e.g. the window's document) replaces session + trace as the source."""
    data = data if data is not None else SessionData(session, trace)
    c = data.config
    view = describe_stage(data, as_stage(stage), None if head is None else [head], weights_range)
    marked_head = head if head is not None else session.view.head
    mark = head is None and c.h > 1
    off = off_heads(view.stage, c)
    rows = []
    for row in view.rows:
        panels = [
            Panel(
                f"{p.title} · off" if p.head in off else p.title,
                np.asarray(p.matrix, dtype=float),
                p.row_labels,
                p.col_labels,
                p.head,
                mark and p.head == marked_head,
                p.blocked,
                query if p.query_rows else None,
                p.col_blocks,
                marked_head if p.col_blocks else None,
                p.colours,
                off=p.head in off,
                off_blocks=tuple(h for _s, _e, h in p.col_blocks if h in off),
            )
            for p in row.panels
        ]
        rows.append(PanelRow(row.caption, panels, view.color, view.levels, view.bar_label))
    return Scene(
        title=view.title,
        formula=view.formula,
        shapes=view.shapes,
        info=pretty(" · ".join(_settings(c, data.tokens, head, marked_head, query))),
        rows=rows,
        legend_blocked=view.blocked_shown,
    )


def off_heads(stage: Stage, config) -> frozenset[int]:
    """The switched-off query heads a stage shows as off: from the value mixing on (their
    Z is 0 from there; up to the weights they compute as usual), as the window marks them."""
    weights = as_stage("weights").index
    return frozenset(config.ablate) if stage.index > weights else frozenset()


def _settings(c, tokens, head, marked_head, query) -> list[str]:
    """The line under a figure's title: dimensions, mask, which head and query."""
    parts = [
        f"n={c.n} {_noun(c.n, 'token')}",
        f"d_model={c.d_model}",
        f"h={c.h} {_noun(c.h, 'head')}"
        + (f" ({c.variant}, {c.h_kv} K/V)" if c.variant != "MHA" else ""),
        f"d_k={c.d_k}",
        f"d_v={c.d_v}",
    ]
    if c.causal:
        parts.append("causal mask")
    if c.ablate:
        parts.append(f"{_noun(len(c.ablate), 'head')} {', '.join(map(str, c.ablate))} off")
    if head is not None:
        parts.append(f"head {head} only")
    elif c.h > 1:
        parts.append(f"head {marked_head} framed")
    if query is not None:
        parts.append(f"query {query} '{tokens[query]}' outlined")
    return parts


def _noun(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
