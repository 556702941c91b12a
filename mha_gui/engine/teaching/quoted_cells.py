"""Which cells a cell's worked formula quotes (its tooltip, `explain_cell`), so that an
exercise can keep a visible cell's tooltip from giving a hidden cell's value away: at the
output stage Y[r,c]'s formula lists every C_i[r,c]; with RoPE S_i[r,c]'s lists q̃_r and k̃_c.

Each quoted block is (kind, head, row, col): head is the query head (None for the
layer-wide X, H, Y), row and col an index or None for "every one".
"""

from __future__ import annotations

Quoted = tuple[str, int | None, int | None, int | None]


def quoted_cells(kind: str, head: int | None, row: int, col: int, config) -> list[Quoted]:
    rope = bool(config.rope_spec)
    if kind in ("Q", "K", "V"):
        return [("X", None, row, None)]
    if kind in ("QR", "KR"):
        return [(kind[0], head, row, None)]
    if kind == "S":
        q, k = ("QR", "KR") if rope else ("Q", "K")
        return [(q, head, row, None), (k, head, col, None)]
    if kind == "A":
        return [("S", head, row, None)]
    if kind == "Z":
        return [("A", head, row, None), ("V", head, None, col)]
    if kind == "H":
        return [("Z", col // config.d_v, row, col % config.d_v)]
    if kind == "C":
        return [("Z", head, row, None)]
    if kind == "Y":
        return [("H", None, row, None)] + [("C", i, row, col) for i in range(config.h)]
    return []


def quotes_hidden(kind, head, row, col, config, hidden) -> bool:
    """Does the formula of cell (row, col) of panel (kind, head) quote a cell that
    `hidden(kind, head)` — a set of (row, col) — hides?"""
    for k, h, r, c in quoted_cells(kind, head, row, col, config):
        for hr, hc in hidden(k, h):
            if (r is None or hr == r) and (c is None or hc == c):
                return True
    return False
