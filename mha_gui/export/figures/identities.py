"""The identity windows' figures (Tools ▸ Identities, `--view identity-NAME`): both
sides of an identity checked on the session's numbers, and its verdict.

`identity_on(name, session)` computes identity NAME (engine/teaching/identities.py) as its window
opens: W^Q packed, the heads reversed, the shift of head 0's scores on row 0 with c = 5;
`identity_figure` lays it out as a stage figure (rows of panels, one colour scale per
scale group). Each row of panels is labelled by what its axes are: tokens for rows of n,
keys for a single row of n scores or weights, indices otherwise.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.layer.numbers import nice_peak, peak, pretty
from mha_gui.engine.teaching import identities as ids
from mha_gui.engine.teaching.identities import Identity
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.figure import StageFigure
from mha_gui.export.figures.difference import change_text
from mha_gui.export.layout import layout_scene
from mha_gui.export.scene import Panel, PanelRow, Scene
from mha_gui.export.text import ensure_app

NAMES = ids.NAMES  # packed, split, permute, scale, shift


def identity_on(
    name: str,
    session,
    *,
    which: str = "Q",
    perm=None,
    head: int = 0,
    query: int = 0,
    c: float = 5.0,
    trace=None,
) -> Identity:
    """Identity `name` on a session's numbers (by default as its window opens: W^Q
    packed, the heads reversed, the shift of head 0's scores on row 0 with c = 5)."""
    if name == "packed":
        return ids.packed_projection(session, which, trace)
    if name == "split":
        return ids.split_concat(session, trace)
    if name == "permute":
        perm = ids.default_permutation(session.config) if perm is None else perm
        return ids.permutation_identity(session, perm, trace)
    if name == "scale":
        return ids.fold_scale(session, trace)
    return ids.softmax_shift(session, head, query, c, trace)


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
            if nr == 1 and nc == len(tokens):  # one row of scores or weights: keys
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


def identity_builder(name: str):
    """The figure builder of `--view identity-NAME` (export/figures/registry.py): the
    identity as its window opens, on the exported session's numbers."""

    def drawing(data, options: FigureOptions) -> StageFigure:
        session = data.session if hasattr(data, "session") else data.snapshot()
        identity = identity_on(name, session, head=options.head, query=options.query)
        return identity_figure(identity, list(session.tokens))

    return drawing


__all__ = [
    "NAMES",
    "identity_builder",
    "identity_figure",
    "identity_on",
    "identity_scene",
    "identity_verdict",
]
