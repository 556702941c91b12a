"""Recompute only what an edit touches, into buffers that live as long as the shapes do.

The GUI edits one cell at a time, often dozens per second while scrubbing. An edit of
head i's W^Q changes only Q_i, S_i, A_i, Z_i and H's column block i, and then Y by a
rank-d_v correction; an edit of W_O changes only Y. Recomputing the whole layer for each
would waste most of the work at real sizes (n=512: ~46 ms full vs a few ms per head).

With RoPE a one-head edit rotates only that head's Q (or its K/V group's K) again; an
ablated head's Z stays zero whatever is edited. Switching a head's ablation on or off
with the numbers unchanged (`reset(session, same_numbers=True)`) recomputes only that
head's Z and a rank-d_v update of Y.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from mha_gui.engine.config import Config
from mha_gui.engine.scheduler import run_all
from mha_gui.engine.session import Session
from mha_gui.engine.steps import (
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
from mha_gui.engine.trace import Trace, allocate_trace, head_contribution, set_switches

EVERYTHING = None  # a change whose reach is "all heads"
# Parameters whose edits can be confined to heads (or to the output projection alone).
# Each rank update of Y adds rounding error; recompute Y exactly after this many, so a
# long scrub never drifts (measured drift after 32 updates: ~1e-15 relative).
MAX_RANK_UPDATES = 32
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
        self._toggled: set[int] = set()  # query heads whose ablation switched

    def reset(self, session: Session, *, same_numbers: bool = False) -> None:
        """A new session or a new config: the next refresh starts from scratch.

        `same_numbers=True` promises that X and every parameter equal the previous
        session's; then a config that differs only in `ablate` costs just the switched
        heads (anything else still recomputes everything).
        """
        old = self.session.config
        self.session = session
        new = session.config
        if same_numbers and not self._full and _same_but_ablate(old, new):
            self._toggled ^= set(old.ablate) ^ set(new.ablate)
            return
        self._full = True
        self._dirty.clear()
        self._toggled.clear()

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
        return self._full or bool(self._dirty) or bool(self._toggled)

    def refresh(self) -> tuple[Trace, set[int] | None]:
        """Bring the trace up to date; return it and the query heads whose Z changed.

        None as the second value means every head changed (a full recompute).
        """
        s = self.session
        c = s.config
        p = s.params
        if self._full or self.trace is None or not self._fits():
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
            self._toggled.clear()
            return self.trace, None
        t = self.trace
        t.ablate = c.ablate
        heads: set[int] = set(self._toggled)
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
        output_params_changed = "W_O" in self._dirty or "b_O" in self._dirty
        exact_output = (
            output_params_changed
            or 2 * len(heads) > c.h
            or self._rank_updates + len(heads) > MAX_RANK_UPDATES
        )
        if heads:
            order = sorted(heads)
            old_z = None if exact_output else t.heads[order].copy()
            scores_step(t.q_scores, t.k_scores, t.scale, t.mask, t.scores, heads=order)
            softmax_step(t.scores, t.weights, heads=order)
            mix_step(t.weights, t.v, t.heads, heads=order)
            ablate_step(t.heads, [i for i in order if i in c.ablate])
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
        t.w_o = p.W_O
        t.invalidate_contributions()
        self._dirty.clear()
        self._toggled.clear()
        return t, heads

    def _fits(self) -> bool:
        c = self.session.config
        shapes = (c.n, c.d_model, c.h, c.h_kv, c.d_k, c.d_v)
        return self.trace is not None and self.trace.fits(*shapes, DTYPE)


def _same_but_ablate(a: Config, b: Config) -> bool:
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(a) if f.name != "ablate")
