"""Where an edit lands: which parameters are per head, and which heads an index touches.

An edit's index is a NumPy index into the whole parameter (`(head, row, col)` for W^Q,
`(row, col)` for X); the editors build it with `cell_index` and the document reads the
head back with `edited_head`, both from the one `HEADED` below, so the two cannot drift.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.attention.incremental import EVERYTHING
from mha_gui.engine.layer.values import parse_value

# Parameters whose first axis is a query head (W_Q, b_Q) or a K/V group (the others).
HEADED = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V")
# The per-head parameters indexed by K/V group rather than by query head.
KV = ("W_K", "W_V", "b_K", "b_V")


def readonly(a: np.ndarray) -> np.ndarray:
    """A view of `a` nobody can write through (what the document hands out)."""
    v = a.view()
    v.flags.writeable = False
    return v


def is_bias(name: str) -> bool:
    return name.startswith("b_")


def cell_index(name: str, head: int | None, row: int, col: int) -> tuple:
    """The index into parameter `name` of the cell (row, col) of `head`'s slice (head is
    ignored for a parameter that is not per head; a bias is one row: row is ignored)."""
    if name in HEADED:
        return (head, col) if is_bias(name) else (head, row, col)
    return (col,) if is_bias(name) else (row, col)


def block_index(name: str, full: np.ndarray, head: int | None, row: int, col: int, block):
    """Where a 2-D `block` written at (row, col) of `head`'s slice of parameter `name`
    (the whole array `full`; `head` is ignored unless per head) lands: its index into
    `full` and the block shaped for it. ValueError, naming the sizes or the bad value,
    if it does not fit or a value is not acceptable."""
    if name in HEADED and not (head is not None and 0 <= head < len(full)):
        raise ValueError(f"{name} is per head: head {head} is not one of 0..{len(full) - 1}")
    target = full[head] if name in HEADED else full
    block = np.atleast_2d(np.asarray(block, dtype=np.float64))
    rows, cols = (1, *target.shape) if target.ndim == 1 else target.shape
    if row < 0 or col < 0 or row + block.shape[0] > rows or col + block.shape[1] > cols:
        raise ValueError(
            f"a {block.shape[0]}×{block.shape[1]} block does not fit in {name} "
            f"({rows}×{cols}) at row {row + 1}, column {col + 1}"
        )
    for v in block.flat:
        parse_value(float(v))
    if target.ndim == 1:  # a bias row: b_O, or one head's b_Q/b_K/b_V
        index: tuple = (slice(col, col + block.shape[1]),)
        block = block[0]
    else:
        index = (slice(row, row + block.shape[0]), slice(col, col + block.shape[1]))
    if name in HEADED:
        index = (head, *index)
    return index, block


def edited_head(name: str, index: tuple) -> int | None:
    """The head (or K/V group) an edit at `index` of `name` is confined to; EVERYTHING
    when it may reach every head (a parameter that is not per head, a slice across heads)."""
    if name in HEADED and index and isinstance(index[0], (int, np.integer)):
        return int(index[0])
    return EVERYTHING


def w_o_heads(rows, d_v: int, h: int) -> set[int]:
    """The heads whose row block of W_O an edit at row index `rows` touched."""
    if isinstance(rows, (int, np.integer)):
        return {int(rows) // d_v}
    if isinstance(rows, slice):
        start, stop, _ = rows.indices(h * d_v)
        return set(range(start // d_v, (max(stop, start + 1) - 1) // d_v + 1))
    return set(range(h))
