"""What the classroom model is measured on, shared by the training script and its card.

The guided heads, the probes (`<bos>` + 20 distinct random words repeated once, seeds
0–9), the fixed-seed agreement and antecedent sentences, and the goals. No torch here:
`scores_with` takes any function ids → (layers, heads, n, n) attention weights, so the
same numbers come from torch and from the app's loader.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.teaching import classroom
from mha_gui.engine.teaching.head_roles import pair_scores, repeated_tokens_probe, role_scores

# (layer, head) of each guided role
GUIDED = {"previous": (0, 0), "induction": (1, 0), "agreement": (2, 1), "antecedent": (2, 2)}
GOALS = {"previous": 0.8, "induction": 0.6, "agreement": 0.5, "antecedent": 0.5}
PROBE_SEEDS = range(10)  # previous … induction: the mean over these probes
EVAL_SEED = 0  # the fixed-seed agreement / antecedent sentences (100 each)
PROBE_SPAN = 20


def probes() -> list[list[int]]:
    vocab = classroom.vocabulary()
    special = [vocab.index(t) for t in classroom.SPECIAL]
    bos = vocab.index(classroom.BOS)
    return [
        repeated_tokens_probe(len(vocab), s, PROBE_SPAN, prefix=[bos], exclude=special)
        for s in PROBE_SEEDS
    ]


def sentence_sets():
    return {
        "agreement": classroom.agreement_sentences(100, EVAL_SEED),
        "antecedent": classroom.antecedent_sentences(100, EVAL_SEED),
    }


def scores_with(attention) -> dict[str, np.ndarray]:
    """Every (layer, head)'s score per role, given attention(ids) → (L, H, n, n).

    previous, first, self, duplicate and induction: means over the repeated-token probes;
    agreement and antecedent: the mean weight of the pair over 100 fixed-seed sentences.
    """
    ids_of = {w: i for i, w in enumerate(classroom.vocabulary())}
    per_probe = [role_scores(attention(ids), ids) for ids in probes()]
    out = {r: np.mean([p[r] for p in per_probe], axis=0) for r in per_probe[0]}
    for role, items in sentence_sets().items():
        out[role] = np.mean(
            [pair_scores(attention([ids_of[t] for t in s.tokens]), s.pairs) for s in items],
            axis=0,
        )
    return out


def goals(scores: dict[str, np.ndarray]) -> dict[str, tuple[tuple[int, int], float, float]]:
    """Each goal's best head, its score and the goal (induction: layers ≥ 1 only)."""
    out = {}
    for role, bar in GOALS.items():
        s = scores[role].copy()
        if role == "induction":
            s[0] = -np.inf
        layer, head = np.unravel_index(np.nanargmax(s), s.shape)
        out[role] = ((int(layer), int(head)), float(s[layer, head]), bar)
    return out


def summary(scores) -> str:
    return "  ".join(
        f"{role} L{lh[0]}H{lh[1]}={v:.2f}{'✓' if v >= bar else '✗'}"
        for role, (lh, v, bar) in goals(scores).items()
    )
