"""Recompute only what an edit touches, into buffers that live as long as the shapes do.

The GUI edits one cell at a time, often dozens per second while scrubbing. An edit of
head i's W^Q changes only Q_i, S_i, A_i, Z_i and H's column block i, and then Y by a
rank-d_v correction; an edit of W_O changes only Y. Recomputing the whole layer for each
would waste most of the work at real sizes (n=512: ~46 ms full vs a few ms per head).

With RoPE a one-head edit rotates only that head's Q (or its K/V group's K) again; an
ablated head's Z stays zero whatever is edited. With the numbers unchanged
(`reset(session, same_numbers=True)`), switching a head's ablation on or off recomputes
only that head's Z = A·V and then Y (whole, so that a switch and its undo give the same
bits), and changing the extra mask only the query rows whose blocked keys changed:
their scores, weights and Z in every head and their rows of Y.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from mha_gui.engine.attention.scheduler import run_all
from mha_gui.engine.attention.steps import (
    ablate_step,
    blocked_positions,
    concat_step,
    mix_step,
    output_step,
    project_head,
    rope_step,
    scores_step,
    softmax_step,
)
from mha_gui.engine.attention.trace import Trace, allocate_trace, head_contribution, set_switches
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.session import Session

EVERYTHING = None  # a change whose reach is "all heads"
# Parameters whose edits can be confined to heads (or to the output projection alone).
# Each rank update of Y adds rounding error; recompute Y exactly after this many, so a
# long scrub never drifts (measured drift after 32 updates: ~1e-15 relative).
MAX_RANK_UPDATES = 32
# An edit of X in at most 1/X_ROWS_FRACTION of its rows redoes only their projections.
X_ROWS_FRACTION = 4
ALL_ROWS = "all rows"  # an edit of X that recomputes everything
PER_HEAD = frozenset({"W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "W_O", "b_O"})
DTYPE = np.dtype(np.float64)  # the window computes in float64, like a session file's numbers


class IncrementalTrace:
    """Holds a Trace for one session and brings it up to date after edits.

    `mark(name, head)` records what changed (head=None means the whole matrix); `refresh()`
    does the least work that makes `trace` equal to `forward()` of the current numbers.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.trace: Trace | None = None
        self._dirty: dict[str, set | None] = {}
        self._full = True
        self._rank_updates = 0  # rank updates of Y since it was last computed exactly
        # the ablation or the extra mask may differ from the trace's (same numbers)
        self._switched = False
        # X as the trace last saw it: an edit of X redoes only the rows that differ
        self._x_seen: np.ndarray | None = None
        self._x_dirty = False

    def reset(self, session: Session, *, same_numbers: bool = False) -> None:
        """A new session or a new config: the next refresh starts from scratch.

        `same_numbers=True` promises that X and every parameter equal the previous
        session's; then a session whose config differs only in `ablate`, or whose extra
        mask differs, costs just the switched heads' Z and the changed mask rows (both
        are found by comparing with what the trace was computed with, so any number of
        such resets before a refresh add up). Anything else recomputes everything.
        """
        old = self.session.config
        self.session = session
        new = session.config
        if same_numbers and not self._full and _same_but_ablate(old, new):
            self._switched = True
            return
        self._full = True
        self._dirty.clear()
        self._switched = False
        self._x_dirty = False

    def mark(self, name: str, head: int | None = EVERYTHING) -> None:
        """Record that `name` changed (for one head/group, or all of it)."""
        if name == "X" and self._x_seen is not None:
            self._x_dirty = True  # the rows that changed are found at the refresh
            return
        if name not in PER_HEAD:
            self._full = True
            return
        current = self._dirty.get(name, set())
        if head is None or current is None:
            self._dirty[name] = None
        else:
            current.add(head)
            self._dirty[name] = current

    @property
    def starts_over(self) -> bool:
        """Will the next refresh recompute everything (a reset, a config change)?"""
        return self._full or self.trace is None or not self._fits()

    @property
    def is_dirty(self) -> bool:
        return self._full or bool(self._dirty) or self._switched or self._x_dirty

    def refresh(self) -> tuple[Trace, set[int] | None]:
        """Bring the trace up to date; return it and the query heads whose Z changed.

        None as the second value means every head changed (a full recompute).
        """
        s = self.session
        c = s.config
        p = s.params
        x_rows = self._x_rows() if not self._full and self.trace is not None else None
        if x_rows is not None and x_rows is not ALL_ROWS and self._fits():
            return self._refresh_x_rows(x_rows), None
        if self._full or self.trace is None or not self._fits() or x_rows is ALL_ROWS:
            blocked = blocked_positions(c.n, s.mask, c.causal)
            if self.trace is None or not self._fits():
                self.trace = allocate_trace(
                    c.n,
                    c.d_model,
                    c.h,
                    c.h_kv,
                    c.d_k,
                    c.d_v,
                    DTYPE,
                    p.W_O,
                    c.effective_scale,
                    blocked,
                    c.rope_spec,
                    c.ablate,
                )
            else:
                self.trace.mask = blocked
                self.trace.scale = c.effective_scale
                set_switches(self.trace, c.rope_spec, c.ablate)
            run_all(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, p.b_Q, p.b_K, p.b_V, p.b_O, self.trace)
            self._rank_updates = 0
            self._full = False
            self._dirty.clear()
            self._switched = False
            self._x_dirty = False
            self._x_seen = np.array(p.X, dtype=DTYPE)
            return self.trace, None
        t = self.trace
        toggled: set[int] = set()  # query heads whose ablation switched: Z = A·V again
        rows = np.empty(0, dtype=np.intp)  # query rows whose blocked keys changed
        if self._switched:
            toggled = set(t.ablate) ^ set(c.ablate)
            blocked = blocked_positions(c.n, s.mask, c.causal)
            rows = np.flatnonzero((blocked != t.mask).any(axis=1))
            t.mask = blocked
        t.ablate = c.ablate
        heads: set[int] = set()  # query heads whose Q or K/V changed: scores onward
        group = c.group_size
        for name, which in self._dirty.items():
            if name in ("W_O", "b_O"):
                continue
            per_head = range(c.h if name in ("W_Q", "b_Q") else c.h_kv) if which is None else which
            target = {"W_Q": t.q, "b_Q": t.q, "W_K": t.k, "b_K": t.k, "W_V": t.v, "b_V": t.v}[name]
            w, b = {
                "q": (p.W_Q, p.b_Q),
                "k": (p.W_K, p.b_K),
                "v": (p.W_V, p.b_V),
            }[name[-1].lower()]
            rotated = {"W_Q": t.q_rot, "b_Q": t.q_rot, "W_K": t.k_rot, "b_K": t.k_rot}.get(name)
            for g in per_head:
                project_head(p.X, w, b, target, g)
                if rotated is not None:
                    rope_step(target, t.rope_tables, rotated, heads=(g,))
                if name in ("W_Q", "b_Q"):
                    heads.add(g)
                else:
                    heads.update(range(g * group, (g + 1) * group))
        mixed = toggled - heads
        changed = heads | mixed  # query heads whose whole Z changes
        output_params_changed = "W_O" in self._dirty or "b_O" in self._dirty
        exact_output = (
            output_params_changed
            or bool(toggled)  # a switch and its undo give Y bit for bit
            or 2 * len(changed) > c.h
            or self._rank_updates + len(changed) > MAX_RANK_UPDATES
        )
        order = sorted(changed)
        old_z = None if exact_output or not order else t.heads[order].copy()
        if rows.size:
            rows = _as_gemm_rows(rows, c.n)
            _redo_rows(t, [i for i in range(c.h) if i not in heads], rows, group)
        if heads:
            projected = sorted(heads)
            scores_step(t.q_scores, t.k_scores, t.scale, t.mask, t.scores, heads=projected)
            softmax_step(t.scores, t.weights, heads=projected)
            mix_step(t.weights, t.v, t.heads, heads=projected)
        switched_on = sorted(i for i in mixed if i not in c.ablate)  # off: Z = 0 below
        if switched_on:
            mix_step(t.weights, t.v, t.heads, heads=switched_on)
        if order or rows.size:
            ablate_step(t.heads, c.ablate)
            concat_step(t.heads, t.concat)
        if old_z is not None:
            # Y = Σ_i Z_i W_O[i]: only the changed heads' terms move, so add their
            # change (a rank-d_v update) instead of redoing the n×h·d_v×d_model product.
            for i, z_before in zip(order, old_z, strict=True):
                t.output += head_contribution(t.heads[i] - z_before, p.W_O, i)
            self._rank_updates += len(order)
        if exact_output:
            output_step(t.concat, p.W_O, p.b_O, t.output)
            self._rank_updates = 0
        elif rows.size:  # those rows of Y exactly (the rank updates above included)
            out = np.empty((rows.size, c.d_model))
            output_step(t.concat[rows], p.W_O, p.b_O, out)
            t.output[rows] = out
        t.w_o = p.W_O
        t.invalidate_contributions()
        self._dirty.clear()
        self._switched = False
        return t, (set(range(c.h)) if rows.size else changed)

    def _x_rows(self):
        """The rows of X edited since the last refresh, when only X changed and in few
        enough rows that redoing their Q, K, V beats the whole projection; ALL_ROWS when
        everything is to be recomputed; None when X is as the trace saw it."""
        if not self._x_dirty:
            return None
        x = self.session.params.X
        if self._x_seen is None or self._x_seen.shape != x.shape:
            return ALL_ROWS
        rows = np.flatnonzero((x != self._x_seen).any(axis=1))
        if not rows.size:
            self._x_dirty = False  # edited and put back before the refresh
            return None
        if self._dirty or self._switched or rows.size * X_ROWS_FRACTION > x.shape[0]:
            return ALL_ROWS
        return rows

    def _refresh_x_rows(self, rows: np.ndarray) -> Trace:
        """An edit of X's `rows`: their Q, K, V rows in every head, then the pass from the
        scores on (every score row reads the changed keys, every Z the changed values).
        At n = 512, d_model 768 the projections are ~55 % of a forward pass's products."""
        s, t = self.session, self.trace
        p = s.params
        gemm_rows = _as_gemm_rows(rows, s.config.n)
        x_rows = p.X[gemm_rows]
        for w, b, out in ((p.W_Q, p.b_Q, t.q), (p.W_K, p.b_K, t.k), (p.W_V, p.b_V, t.v)):
            block = np.matmul(x_rows, w)  # (heads, rows, d)
            if b is not None:
                block += b[:, None, :]
            out[:, gemm_rows] = block
        if t.rope is not None:
            rope_step(t.q, t.rope_tables, t.q_rot)
            rope_step(t.k, t.rope_tables, t.k_rot)
        run_all(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, p.b_Q, p.b_K, p.b_V, p.b_O, t, project=False)
        self._x_seen[rows] = p.X[rows]
        self._x_dirty = False
        self._rank_updates = 0
        return t

    def _fits(self) -> bool:
        c = self.session.config
        shapes = (c.n, c.d_model, c.h, c.h_kv, c.d_k, c.d_v)
        return self.trace is not None and self.trace.fits(*shapes, DTYPE)


def _as_gemm_rows(rows: np.ndarray, n: int) -> np.ndarray:
    """At least two rows: a one-row product goes to BLAS's matrix-vector kernel, whose
    sums differ in the last bit from the matrix product `forward` computes; two or more
    rows give the same bits, so blocking a cell and unblocking it restore the trace
    exactly (on layers whose scores fit in PARALLEL_ABOVE_BYTES: larger ones run their
    softmax in blocks, equal within rounding)."""
    if rows.size != 1 or n < 2:
        return rows
    r = int(rows[0])
    return np.array(sorted((r, r + 1 if r + 1 < n else r - 1)), dtype=np.intp)


def _redo_rows(t: Trace, heads, rows: np.ndarray, group: int) -> None:
    """Scores, weights and Z of the query rows `rows` of `heads`, whose blocked keys
    changed (the same arithmetic as `scores_step`, the softmax and `mix_step`)."""
    q, k, v = t.q_scores, t.k_scores, t.v
    blocked = t.mask[rows]
    any_blocked = bool(blocked.any())
    for i in heads:
        g = i // group
        scores = np.matmul(q[i, rows] * t.scale, k[g].T)
        if any_blocked:
            scores[blocked] = -np.inf
        weights = np.empty_like(scores)
        softmax_step(scores[None], weights[None])
        t.scores[i, rows] = scores
        t.weights[i, rows] = weights
        t.heads[i, rows] = weights @ v[g]


def _same_but_ablate(a: Config, b: Config) -> bool:
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(a) if f.name != "ablate")
