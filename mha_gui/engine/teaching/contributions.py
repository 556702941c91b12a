"""How much each head adds to the output, token by token — and what a switched-off head loses.

Y = Σ_i C_i + b_O with C_i = Z_i W_O[i·d_v:(i+1)·d_v, :] (engine/attention/trace.py). For every token t
this module measures the size of each head's share, ‖C_i[t]‖ (the L2 norm over the
d_model features), and of their sum ‖Y[t] − b_O‖ = ‖Σ_i C_i[t]‖ (the bias belongs to no
head; without biases it is ‖Y[t]‖). The heads' sizes need not add up to the total: two
heads can push a token in opposite directions and cancel (‖Σ C_i‖ ≤ Σ ‖C_i‖).

A switched-off (ablated) head has Z_i = 0, so C_i = 0; its weights are still computed,
so `lost` gives the size of what it *would* add, ‖(A_i V_g(i)) W_O^i‖ — what the student
loses by switching it off. Pure NumPy, usable from a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_gui.engine.attention.trace import head_contribution


@dataclass(frozen=True)
class ContributionNorms:
    """Per-token sizes of the heads' contributions (rows: tokens)."""

    norms: np.ndarray  # (h, n): ‖C_i[t]‖, 0 for a switched-off head
    lost: np.ndarray  # (h, n): ‖(A_i V_g) W_O^i[t]‖ for a switched-off head, else = norms
    total: np.ndarray  # (n,): ‖Y[t] − b_O‖ = ‖Σ_i C_i[t]‖
    ablate: tuple[int, ...]

    @property
    def h(self) -> int:
        return self.norms.shape[0]

    @property
    def n(self) -> int:
        return self.norms.shape[1]

    @property
    def peak(self) -> float:
        """The largest size shown (bars share one scale: heads, lost shares and totals)."""
        values = [self.norms.max(initial=0.0), self.lost.max(initial=0.0)]
        values.append(self.total.max(initial=0.0))
        return float(max(values))

    def share(self, head: int, token: int) -> float:
        """Head `head`'s size as a fraction of all heads' sizes at `token` (0 when none)."""
        column = self.norms[:, token]
        whole = float(column.sum())
        return float(column[head]) / whole if whole > 0 else 0.0


def contribution_norms(data) -> ContributionNorms:
    """The sizes for a StageData (the window's Document or an engine SessionData).

    Reads the heads' contributions through `data.contribution(i)` (the Document caches
    them) and, for switched-off heads, recomputes Z_i = A_i V_g(i) from the trace's
    weights — the only place an ablated head's output still exists.
    """
    c = data.config
    trace = data.trace()
    contributions = np.stack([np.asarray(data.contribution(i)) for i in range(c.h)])
    return norms_of(
        contributions,
        trace.weights,
        trace.v,
        trace.w_o,
        c.ablate,
    )


def norms_of(contributions, weights, v, w_o, ablate=()) -> ContributionNorms:
    """The sizes from arrays: contributions (h, n, d_model), weights (h, n, n),
    v (h_kv, n, d_v), w_o (h·d_v, d_model); `ablate` the switched-off query heads."""
    contributions = np.asarray(contributions, dtype=np.float64)
    h, n, _d = contributions.shape
    norms = np.linalg.norm(contributions, axis=2)
    total = np.linalg.norm(contributions.sum(axis=0), axis=1)
    ablate = tuple(sorted({int(i) for i in ablate}))
    lost = norms.copy()
    if ablate:
        group = h // v.shape[0]
        for i in ablate:
            z = weights[i] @ v[i // group]
            lost[i] = np.linalg.norm(head_contribution(z, w_o, i), axis=1)
    return ContributionNorms(norms, lost, total, ablate)
