"""The numbers of the neuron view: why query j of head i attends to key k.

A score is a dot product: S_i[j, k] = scale · Σ_d q_j[d] · k_k[d]. The neuron view shows
the two vectors, their elementwise product q_j ⊙ k_k (which dimensions agree, which
disagree), its sum, the scale and the score — and, for context, every key's score and
softmax weight for that query. This module computes those numbers (no Qt), from any
`StageData` (the window's Document, or an engine session through `SessionData`).

With RoPE the scores are made of the *rotated* vectors (`Trace.q_rot`, `k_rot`), so these
are the vectors shown. Key/value heads shared by several query heads (GQA, MQA) are
resolved through `config.kv_group`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_gui.engine.attention.validation import check_index


@dataclass(frozen=True)
class Neuron:
    """One (head, query, key) dot product taken apart, and its query's row of scores."""

    head: int
    query: int
    key: int
    group: int  # the K/V head that query head `head` reads
    chosen: bool  # the key was picked by the user (False: the strongest key, by default)
    rotated: bool  # RoPE: q and k below are rotated to their positions
    q: np.ndarray  # (d_k,) q_j as the scores see it
    k: np.ndarray  # (d_k,) k_k as the scores see it
    products: np.ndarray  # (d_k,) q_j ⊙ k_k
    dot: float  # Σ products
    scale: float
    scaled: float  # scale · dot, what S_i[j, k] is unless the mask blocks it
    blocked: bool  # the mask blocks (j, k): S_i[j, k] = −∞ whatever the dot product
    scores: np.ndarray  # (n,) S_i[j, :] from the trace (−∞ where blocked)
    weights: np.ndarray  # (n,) A_i[j, :] = softmax(S_i[j, :])
    blocked_keys: np.ndarray  # (n,) bool

    @property
    def score(self) -> float:
        """S_i[j, k]: the scaled dot product, or −∞ when the mask blocks the pair."""
        return float("-inf") if self.blocked else self.scaled

    @property
    def weight(self) -> float:
        return float(self.weights[self.key])

    @property
    def d_k(self) -> int:
        return int(self.products.shape[0])


def strongest_key(weights: np.ndarray, blocked: np.ndarray) -> int:
    """The key with the largest weight (the first on a tie); when every key is blocked
    (all weights 0), the first key."""
    open_keys = np.flatnonzero(~blocked)
    if open_keys.size == 0:
        return 0
    return int(open_keys[np.argmax(weights[open_keys])])


def neuron(data, head: int, query: int, key: int | None = None) -> Neuron:
    """Head `head`'s score of query `query` against key `key` (None: the strongest key),
    taken apart; ValueError (nothing computed) for an index out of range."""
    c = data.config
    head = check_index("head", head, c.h, "heads")
    query = check_index("query", query, c.n, "tokens")
    if key is not None:
        key = check_index("key", key, c.n, "tokens")
    t = data.trace()
    group = c.kv_group(head)
    rotated = t.q_rot is not None
    q_all = t.q_rot if rotated else t.q
    k_all = t.k_rot if rotated else t.k
    blocked_keys = np.zeros(c.n, bool) if t.mask is None else np.asarray(t.mask[query], bool).copy()
    weights = np.array(t.weights[head, query], float)
    scores = np.array(t.scores[head, query], float)
    chosen = key is not None
    if key is None:
        key = strongest_key(weights, blocked_keys)
    q = np.array(q_all[head, query], float)
    k = np.array(k_all[group, key], float)
    products = q * k
    dot = float(products.sum())
    scale = float(t.scale)
    return Neuron(
        head=head,
        query=query,
        key=key,
        group=group,
        chosen=chosen,
        rotated=rotated,
        q=q,
        k=k,
        products=products,
        dot=dot,
        scale=scale,
        scaled=scale * dot,
        blocked=bool(blocked_keys[key]),
        scores=scores,
        weights=weights,
        blocked_keys=blocked_keys,
    )
