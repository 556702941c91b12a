"""One query token followed through one stage, cell by cell: the handout's worked example.

A printed stage shows its matrices as numbers; what a student cannot see on paper is the
hover explanation the window gives of each number. The worked example prints those
explanations (`explain_cell`) for the cells the stage makes for the followed query token
of the inspected head: the row of scores or weights it reads, the features it gets.
Plain strings (NumPy only, no Qt); the handout typesets them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha_gui.engine.layer.numbers import num
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import Stage
from mha_gui.engine.teaching.explain import explain_cell, token_name

MAX_CELLS = 8  # a page's worth of explanations; a wide row is cut with a note


@dataclass(frozen=True)
class WorkedExample:
    heading: str
    lines: tuple[str, ...]


def _cells(stage: Stage, head: int, session: Session) -> list[tuple[str, int, int]]:
    """(kind, head, col) of the cells the stage makes for the followed row: of `head`, and
    where a stage's row is short (mixing, concat), of the other heads after it."""
    c = session.config
    if stage.name == "projections":
        return [(k, head, j) for k in ("Q", "K", "V") for j in range(c.d_v if k == "V" else c.d_k)]
    if stage.name == "scores":
        return [("S", head, j) for j in range(c.n)]
    if stage.name == "weights":
        return [("A", head, j) for j in range(c.n)]
    heads = [head] + [i for i in range(c.h) if i != head]  # the inspected head first
    if stage.name == "mixing":
        return [("Z", i, j) for i in heads for j in range(c.d_v)]
    if stage.name == "concat":
        return [("H", None, i * c.d_v + j) for i in heads for j in range(c.d_v)]
    if stage.name == "output":
        return [("C", head, 0)] + [("Y", None, j) for j in range(c.d_model)]
    return []


def worked_example(
    session: Session, stage: Stage, head: int = 0, query: int = 0, trace=None
) -> WorkedExample:
    """The followed token's cells of `stage`, explained (at most MAX_CELLS of them)."""
    t = trace if trace is not None else session.run()
    c, tokens = session.config, session.tokens
    who = f"query {token_name(tokens, query)}"
    if stage.name == "input":
        row = ", ".join(num(v) for v in session.params.X[query, :MAX_CELLS])
        more = ", …" if c.d_model > MAX_CELLS else ""
        return WorkedExample(
            f"Worked example · token {token_name(tokens, query)}",
            (
                f"x_{query} = X[{query},:] = [{row}{more}]   (token {token_name(tokens, query)} "
                f"as d_model = {c.d_model} numbers: row {query} of X)",
            ),
        )
    cells = _cells(stage, head, session)
    lines = [
        explain_cell(kind, h, query, col, trace=t, params=session.params, config=c, tokens=tokens)
        for kind, h, col in cells[:MAX_CELLS]
    ]
    if len(cells) > MAX_CELLS:
        lines.append(f"… and {len(cells) - MAX_CELLS} more cells of this row, made the same way")
    one_head = stage.name in ("projections", "scores", "weights")  # else every head's row
    which = f", head {head}" if one_head else ""
    return WorkedExample(f"Worked example · {who}{which}", tuple(lines))
