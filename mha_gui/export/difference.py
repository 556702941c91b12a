"""Figures of the explaining menus: "now − snapshot" for a stage, an identity's two sides,
and a plain message drawing for a view that has nothing to draw yet.

The difference figure is the stage figure (scene.py → layout.py → painting.py) of a
`DifferenceData` (engine/difference.py), adapted in three ways: every row is signed
(diverging colours on ±the largest change, also for the weights), every panel title says
its largest change, and the title block says what was subtracted from what.
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui.engine.difference import DifferenceData
from mha_gui.engine.identities import Identity
from mha_gui.engine.numbers import nice_peak, num, peak, pretty
from mha_gui.engine.session import Session, ViewState
from mha_gui.engine.stage_panels import LAYER_TITLES, as_stage
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.figure import StageFigure
from mha_gui.export.layout import layout_scene
from mha_gui.export.scene import Panel, PanelRow, Scene, build_scene
from mha_gui.export.text import draw_rich_wrapped, ensure_app, make_font

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
            change = finite_changes(p.matrix, p.blocked)
            p.title = f"{delta_title(p.title)} · max|{DELTA}| {change_text(change)}"
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


def largest_changes(scene: Scene) -> dict[str, float]:
    """Panel title (before ' · max') → its largest change (what the titles print)."""
    return {
        p.title.split(" · max")[0]: finite_changes(p.matrix, p.blocked)
        for row in scene.rows
        for p in row.panels
    }


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


# ---------------------------------------------------------------- identities -------
def identity_scene(identity: Identity, tokens: list[str]) -> Scene:
    """Both sides of an identity as rows of panels; rows of one scale group share levels."""
    groups: dict[str, float] = {}
    for row in identity.rows:
        if row.kind == "values" and row.scale_group:
            top = max(peak(p.matrix) for p in row.parts)
            groups[row.scale_group] = max(groups.get(row.scale_group, 0.0), top)
    rows = []
    for row in identity.rows:
        if row.kind == "weights":
            levels = (0.0, 1.0)
        else:
            top = groups.get(row.scale_group) or max(peak(p.matrix) for p in row.parts)
            top = nice_peak(top)
            levels = (-top, top)
        panels = []
        for p in row.parts:
            nr, nc = p.matrix.shape
            labels = list(tokens) if nr == len(tokens) else [str(i) for i in range(nr)]
            if nr == 1:  # one row of scores or weights: its columns are the keys
                labels, columns = [""], list(tokens)
            elif p.blocks:
                width = nc // p.blocks
                columns = [str(j % width) for j in range(nc)]
            else:
                columns = [str(j) for j in range(nc)]
            blocks = [
                (i * (nc // p.blocks), (i + 1) * (nc // p.blocks), i) for i in range(p.blocks)
            ]
            panels.append(
                Panel(
                    pretty(p.label),
                    np.asarray(p.matrix, float),
                    labels,
                    columns,
                    p.head,
                    blocked=p.blocked,
                    col_blocks=blocks,
                    block_symbol=p.block_symbol,
                )
            )
        label = "weight (0–1)" if row.kind == "weights" else "value"
        rows.append(PanelRow(pretty(row.caption), panels, row.kind, levels, label))
    verdict = identity_verdict(identity)
    return Scene(
        title=identity.title,
        formula=pretty(identity.statement),
        shapes=pretty(identity.shapes),
        info=verdict,
        rows=rows,
        legend_blocked=any(p.blocked is not None for r in rows for p in r.panels),
    )


def identity_verdict(identity: Identity) -> str:
    """`largest difference 2.2×10^{−16} (float64 rounding) · …` (rich text)."""
    parts = []
    for c in identity.checks:
        parts.append(f"{c.what}: max|left − right| = {change_text(c.max_abs)}")
    tail = (
        "exactly equal"
        if identity.max_abs == 0
        else ("equal up to float64 rounding" if identity.holds else "NOT EQUAL")
    )
    return pretty(" · ".join(parts)) + f"  ({tail})"


def identity_figure(identity: Identity, tokens: list[str], vector: bool = True) -> StageFigure:
    ensure_app()
    return StageFigure(layout_scene(identity_scene(identity, tokens), vector=vector))


# ------------------------------------------------------------------ messages -------
class MessageDrawing:
    """A few paragraphs in a box: what a view says when it has nothing to draw."""

    def __init__(self, title: str, paragraphs: list[str], width: float = 760.0):
        ensure_app()
        self.title = title
        self.paragraphs = list(paragraphs)
        self.description = "\n".join(self.paragraphs)
        self.width = width
        self.height = self._layout(None, "light")

    def _layout(self, painter, theme_name: str) -> float:
        from PySide6.QtGui import QImage, QPainter

        from mha_gui import theme

        pal = theme.palette(theme_name)
        own = painter is None
        if own:  # measure on a scratch image
            img = QImage(4, 4, QImage.Format.Format_RGB32)
            painter = QPainter(img)
        try:
            y = 28.0
            painter.setFont(make_font(22, True))
            y += draw_rich_wrapped(painter, 28, y, self.width - 56, self.title, 22, pal.text)
            y += 14
            for text in self.paragraphs:
                y += draw_rich_wrapped(painter, 28, y, self.width - 56, text, 16, pal.muted)
                y += 12
        finally:
            if own:
                painter.end()
        return y + 16

    def paint(self, painter, theme_name: str, colormap: str) -> None:
        self._layout(painter, theme_name)
