"""The Trace: every intermediate of one forward pass, in buffers that can be reused.

`allocate_trace` makes empty buffers for a layer's shapes, `Trace.fits` says whether a
trace's buffers can take another pass, and `set_switches` points a reused trace at a new
RoPE and ablation. The steps (engine/attention/steps.py) write into these buffers; `forward()`
(engine/attention/forward.py) and the incremental trace (engine/attention/incremental.py) drive them.

`head_contribution` is the one place head i's share of the output is computed:
C_i = Z_i W_O[i·d_v:(i+1)·d_v, :], so that Y = Σ_i C_i + b_O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from mha_gui.engine.attention import buffers
from mha_gui.engine.attention.rope import RoPE


def head_contribution(z: np.ndarray, w_o: np.ndarray, head: int, out=None) -> np.ndarray:
    """C_i = Z_i W_O[i·d_v:(i+1)·d_v, :]: what query head `head` adds to the output Y.

    `z` is that head's Z_i (n, d_v) — or any (n, d_v) change of it, since the map is
    linear (the incremental trace adds ΔZ_i W_O^i to Y this way); `w_o` is (h·d_v,
    d_model). Every consumer (the trace, the document's cache, the contributions view,
    a rank update of Y) computes a head's share through this one function.
    """
    d_v = z.shape[-1]
    return np.matmul(z, w_o[head * d_v : (head + 1) * d_v], out=out)


@dataclass
class Trace:
    """Every intermediate of one forward pass, shapes as `forward()` documents them.

    `q` holds the unscaled projections; the scale is folded into the n×d_k operand
    of the score product, never into the h×n×n scores. `contributions` is computed on
    first access: it costs as much as the output projection and most callers never
    read it.

    With RoPE, `q` and `k` stay the projections X W + b and `q_rot`, `k_rot` hold them
    rotated to their positions; the scores use the rotated ones. Without it both are
    None. Query heads listed in `ablate` keep their scores and weights but their Z_i
    (`heads[i]`) is zero, so H, Y and the contributions show what the others give.
    """

    q: np.ndarray  # (h, n, d_k)
    k: np.ndarray  # (h_kv, n, d_k)
    v: np.ndarray  # (h_kv, n, d_v)
    scores: np.ndarray  # (h, n, n), -inf where blocked
    weights: np.ndarray  # (h, n, n)
    heads: np.ndarray  # (h, n, d_v)
    concat: np.ndarray  # (n, h*d_v)
    output: np.ndarray  # (n, d_model)
    mask: np.ndarray  # (n, n) bool, True = blocked (explicit mask OR causal)
    scale: float
    w_o: np.ndarray = field(repr=False)
    q_rot: np.ndarray | None = None  # (h, n, d_k) with RoPE
    k_rot: np.ndarray | None = None  # (h_kv, n, d_k) with RoPE
    rope: RoPE | None = None
    ablate: tuple[int, ...] = ()
    # cos/sin tables (n, d_k) of `rope`, kept for one-head updates and buffer reuse
    rope_tables: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @property
    def q_scores(self) -> np.ndarray:
        """The queries the scores are made of: rotated with RoPE, else the projections."""
        return self.q if self.q_rot is None else self.q_rot

    @property
    def k_scores(self) -> np.ndarray:
        return self.k if self.k_rot is None else self.k_rot

    @cached_property
    def contributions(self) -> np.ndarray:
        """Every head's share of Y (h, n, d_model): `head_contribution` of each Z_i."""
        h, n, _d_v = self.heads.shape
        out = buffers.empty((h, n, self.w_o.shape[1]), self.heads.dtype)
        for i in range(h):
            head_contribution(self.heads[i], self.w_o, i, out=out[i])
        return out

    def invalidate_contributions(self) -> None:
        self.__dict__.pop("contributions", None)

    def fits(self, n: int, d_model: int, h: int, h_kv: int, d_k: int, d_v: int, dtype) -> bool:
        """Can this trace's buffers hold a pass of these shapes and dtype?"""
        return (
            self.q.shape == (h, n, d_k)
            and self.v.shape == (h_kv, n, d_v)
            and self.output.shape == (n, d_model)
            and self.q.dtype == dtype
        )

    def as_dict(self) -> dict[str, np.ndarray]:
        """The npz/notebook view: the Python API's names (Q, K, V, scores, weights, heads,
        concat, output, contributions, mask), plus Q_rot and K_rot with RoPE."""
        rotated = {} if self.q_rot is None else {"Q_rot": self.q_rot, "K_rot": self.k_rot}
        return {
            "Q": self.q,
            "K": self.k,
            **rotated,
            "V": self.v,
            "scores": self.scores,
            "weights": self.weights,
            "heads": self.heads,
            "concat": self.concat,
            "output": self.output,
            "contributions": self.contributions,
            "mask": self.mask,
        }


def allocate_trace(
    n, d_model, h, h_kv, d_k, d_v, dtype, w_o, scale, blocked, rope=None, ablate=()
) -> Trace:
    """Empty buffers for every intermediate (and the rotated Q/K when `rope` is a RoPE)."""
    rotated = rope is not None
    empty = buffers.empty
    return Trace(
        q=empty((h, n, d_k), dtype),
        k=empty((h_kv, n, d_k), dtype),
        v=empty((h_kv, n, d_v), dtype),
        scores=empty((h, n, n), dtype),
        weights=empty((h, n, n), dtype),
        heads=empty((h, n, d_v), dtype),
        concat=empty((n, h * d_v), dtype),
        output=empty((n, d_model), dtype),
        mask=blocked,
        scale=scale,
        w_o=w_o,
        q_rot=empty((h, n, d_k), dtype) if rotated else None,
        k_rot=empty((h_kv, n, d_k), dtype) if rotated else None,
        rope=rope,
        ablate=tuple(ablate),
        rope_tables=rope.tables(n, d_k, dtype) if rotated else None,
    )


def set_switches(t: Trace, rope: RoPE | None, ablate) -> None:
    """Point a trace whose buffers fit at a (possibly different) RoPE and ablation.

    The cos/sin tables are recomputed only when θ, the scaling or the shape changed.
    """
    if rope is not None:
        h, n, d_k = t.q.shape
        if t.q_rot is None:
            t.q_rot = np.empty_like(t.q)
            t.k_rot = np.empty_like(t.k)
        if t.rope != rope or t.rope_tables is None or t.rope_tables[0].shape != (n, d_k):
            t.rope_tables = rope.tables(n, d_k, t.q.dtype)
    else:
        t.q_rot = t.k_rot = t.rope_tables = None
    t.rope = rope
    t.ablate = tuple(ablate)
