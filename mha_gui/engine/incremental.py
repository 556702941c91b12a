"""Recompute only what an edit touches, into buffers that live as long as the shapes do.

The GUI edits one cell at a time, often dozens per second while scrubbing. An edit of
head i's W^Q changes only Q_i, S_i, A_i, Z_i and H's column block i, and then Y by a
rank-d_v correction; an edit of W_O changes only Y. Recomputing the whole layer for each
would waste most of the work at real sizes (n=512: ~46 ms full vs a few ms per head).
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.forward import (
    Trace,
    allocate_trace,
    blocked_positions,
    concat_step,
    mix_step,
    output_step,
    project_head,
    run_all,
    scores_step,
    softmax_step,
)
from mha_gui.engine.session import Session

EVERYTHING = None  # a change whose reach is "all heads"
# Parameters whose edits can be confined to heads (or to the output projection alone).
# Each rank update of Y adds rounding error; recompute Y exactly after this many, so a
# long scrub never drifts (measured drift after 32 updates: ~1e-15 relative).
MAX_RANK_UPDATES = 32
PER_HEAD = frozenset({"W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "W_O", "b_O"})


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

    def reset(self, session: Session) -> None:
        """A new session or a new config: the next refresh starts from scratch."""
        self.session = session
        self._full = True
        self._dirty.clear()

    def mark(self, name: str, head: int | None = EVERYTHING) -> None:
        """Record that `name` changed (for one head/group, or all of it)."""
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
    def is_dirty(self) -> bool:
        return self._full or bool(self._dirty)

    def refresh(self) -> tuple[Trace, set[int] | None]:
        """Bring the trace up to date; return it and the query heads whose Z changed.

        None as the second value means every head changed (a full recompute).
        """
        s = self.session
        c = s.config
        p = s.params
        if self._full or self.trace is None or not self._fits():
            blocked = blocked_positions(c.n, s.mask, c.causal)
            dtype = np.float64
            if self.trace is None or not self._fits():
                self.trace = allocate_trace(
                    c.n,
                    c.d_model,
                    c.h,
                    c.h_kv,
                    c.d_k,
                    c.d_v,
                    dtype,
                    p.W_O,
                    c.effective_scale,
                    blocked,
                )
            else:
                self.trace.mask = blocked
                self.trace.scale = c.effective_scale
            run_all(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, p.b_Q, p.b_K, p.b_V, p.b_O, self.trace)
            self._rank_updates = 0
            self._full = False
            self._dirty.clear()
            return self.trace, None
        t = self.trace
        heads: set[int] = set()
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
            for g in per_head:
                project_head(p.X, w, b, target, g)
                if name in ("W_Q", "b_Q"):
                    heads.add(g)
                else:
                    heads.update(range(g * group, (g + 1) * group))
        output_params_changed = "W_O" in self._dirty or "b_O" in self._dirty
        exact_output = (
            output_params_changed
            or 2 * len(heads) > c.h
            or self._rank_updates + len(heads) > MAX_RANK_UPDATES
        )
        if heads:
            order = sorted(heads)
            old_z = None if exact_output else t.heads[order].copy()
            scores_step(t.q, t.k, t.scale, t.mask, t.scores, heads=order)
            softmax_step(t.scores, t.weights, heads=order)
            mix_step(t.weights, t.v, t.heads, heads=order)
            concat_step(t.heads, t.concat)
            if old_z is not None:
                # Y = Σ_i Z_i W_O[i]: only the changed heads' terms move, so add their
                # change (a rank-d_v update) instead of redoing the n×h·d_v×d_model product.
                d_v = c.d_v
                for i, z_before in zip(order, old_z, strict=True):
                    t.output += (t.heads[i] - z_before) @ p.W_O[i * d_v : (i + 1) * d_v]
                self._rank_updates += len(order)
        if exact_output:
            output_step(t.concat, p.W_O, p.b_O, t.output)
            self._rank_updates = 0
        t.w_o = p.W_O
        t.invalidate_contributions()
        self._dirty.clear()
        return t, heads

    def _fits(self) -> bool:
        t, c = self.trace, self.session.config
        return (
            t is not None
            and t.q.shape == (c.h, c.n, c.d_k)
            and t.v.shape == (c.h_kv, c.n, c.d_v)
            and t.output.shape == (c.n, c.d_model)
        )
