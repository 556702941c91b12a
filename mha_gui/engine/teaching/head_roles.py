"""What each head of a model does, as numbers: previous-token, first-token, self,
duplicate-token and induction scores (TransformerLens-style), with no Qt and no torch.

For one head's weights A (n × n) over token ids t_0 … t_{n-1}:

- previous  = mean over i = 1 … n-1 of A[i, i-1]
- first     = mean over i = 1 … n-1 of A[i, 0]
- self      = mean over i of A[i, i]
- duplicate = mean, over rows i with some j < i and t_j = t_i, of Σ_{j<i, t_j=t_i} A[i, j]
- induction = mean, over rows i with some j < i-1 and t_j = t_i, of Σ_{j<i-1, t_j=t_i} A[i, j+1]

A role that no row qualifies for (previous and first on one token, duplicate and
induction on a text without repeats) scores NaN: "not measured", never a misleading 0.

    roles = head_roles("~/models/gpt2")                  # random tokens, a span repeated
    roles = head_roles(path, text="the cat near the dogs runs")
    roles.scores["induction"]                           # (layers, heads)
    roles.label(1, 3)                                   # "induction 0.71" or ""
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROLES = ("previous", "first", "self", "duplicate", "induction")
SHORT = {"previous": "prev", "first": "first", "self": "self", "duplicate": "dup"}
THRESHOLD = 0.4  # a head's strongest role is named only from this score up
PROBES = ("repeated",)


def _mean_rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Mean of values[..., rows] over the last axis; NaN where no row qualifies."""
    count = int(rows.sum())
    if count == 0:
        return np.full(values.shape[:-1], np.nan)
    return values[..., rows].sum(axis=-1) / count


def role_masks(token_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(duplicate, induction) boolean n × n masks of the keys each row's score sums.

    duplicate[i, j]: j < i and t_j = t_i. induction[i, k]: k = j+1 for some j < i-1 with
    t_j = t_i, i.e. 1 ≤ k ≤ i-1 and t_{k-1} = t_i.
    """
    t = np.asarray(token_ids)
    n = t.shape[0]
    i, j = np.indices((n, n))
    same = t[:, None] == t[None, :]
    duplicate = same & (j < i)
    shifted = np.zeros((n, n), dtype=bool)
    if n > 1:
        shifted[:, 1:] = t[:, None] == t[None, :-1]  # key k holds t_{k-1}
    induction = shifted & (j >= 1) & (j <= i - 1)
    return duplicate, induction


def role_scores(weights: np.ndarray, token_ids: Sequence[int]) -> dict[str, np.ndarray]:
    """Every role's score for weights (..., n, n) — e.g. (layers, heads, n, n) — at once."""
    a = np.asarray(weights, dtype=np.float64)
    n = len(token_ids)
    if a.ndim < 2 or a.shape[-2:] != (n, n):
        raise ValueError(f"weights have shape {a.shape} but {n} tokens need (..., {n}, {n})")
    lead = a.shape[:-2]
    every = np.ones(n - 1, dtype=bool)
    scores = {
        "previous": _mean_rows(np.diagonal(a, -1, -2, -1), every),
        "first": _mean_rows(a[..., 1:, 0], every),
        "self": np.diagonal(a, 0, -2, -1).mean(axis=-1),
    }
    for role, mask in zip(("duplicate", "induction"), role_masks(token_ids), strict=True):
        scores[role] = _mean_rows((a * mask).sum(axis=-1), mask.any(axis=-1))
    return {role: np.broadcast_to(scores[role], lead).copy() for role in ROLES}


def pair_scores(weights: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """Mean of A[..., q, k] over (query, key) pairs: how much each head reads exactly the
    key a sentence's role needs (e.g. the subject, from the token before the verb)."""
    a = np.asarray(weights, dtype=np.float64)
    if not pairs:
        return np.full(a.shape[:-2], np.nan)
    q, k = np.asarray(pairs).T
    return a[..., q, k].mean(axis=-1)


def label_of(role: str, score: float) -> str:
    """ "prev 0.92", "induction 0.71": the short name and the score, two decimals."""
    return f"{SHORT.get(role, role)} {score:.2f}"


@dataclass(frozen=True, eq=False)
class HeadRoles:
    """Role scores of every layer × head of one model on one text."""

    scores: dict[str, np.ndarray]  # role → (layers, heads)
    tokens: list[str]
    token_ids: list[int]
    layers: tuple[int, ...]
    threshold: float = THRESHOLD
    weights: np.ndarray | None = field(default=None, repr=False)  # (L, H, n, n)

    @property
    def shape(self) -> tuple[int, int]:
        return self.scores["previous"].shape

    def strongest(self, layer_index: int, head: int) -> tuple[str, float] | None:
        """The head's best-scoring role and its score, or None below the threshold.

        `layer_index` indexes `layers` (0 … len(layers)-1). NaN scores never win.
        """
        best = None
        for role in self.scores:  # the five of ROLES, and any a caller measured
            value = float(self.scores[role][layer_index, head])
            if (
                not np.isnan(value)
                and value >= self.threshold
                and (best is None or value > best[1])
            ):
                best = (role, value)
        return best

    def label(self, layer_index: int, head: int) -> str:
        """ "prev 0.92" for the strongest role, "" when no role reaches the threshold."""
        best = self.strongest(layer_index, head)
        return "" if best is None else label_of(*best)

    def labels(self) -> list[list[str]]:
        rows, heads = self.shape
        return [[self.label(r, h) for h in range(heads)] for r in range(rows)]

    def as_json(self) -> dict:
        """{"tokens", "layers", "heads", "scores": {role: [[L][H]]}} — NaN becomes null."""
        rows, heads = self.shape

        def plain(values: np.ndarray) -> list[list[float | None]]:
            return [[None if np.isnan(v) else float(v) for v in row] for row in values]

        return {
            "tokens": list(self.tokens),
            "layers": rows,
            "heads": heads,
            "scores": {role: plain(self.scores[role]) for role in ROLES},
        }


def repeated_tokens_probe(
    vocab_size: int,
    seed: int = 0,
    span: int = 20,
    repeats: int = 2,
    *,
    prefix: Sequence[int] = (),
    exclude: Collection[int] = (),
) -> list[int]:
    """`span` distinct random token ids, the whole span `repeats` times, after `prefix`.

    The standard induction probe: random tokens make a head that reads "the token after
    the last time this one appeared" the only way to predict the second copy. The tokens
    are distinct inside the span, so the only repeats are the deliberate ones; `exclude`
    keeps special tokens out and `prefix` puts e.g. a BOS token first. Fixed by `seed`.
    """
    banned = set(int(i) for i in exclude)
    pool = np.array([i for i in range(int(vocab_size)) if i not in banned], dtype=np.int64)
    if span < 1 or repeats < 1:
        raise ValueError("the probe needs a span ≥ 1 repeated ≥ 1 times")
    if span > pool.size:
        raise ValueError(f"a span of {span} distinct tokens needs a vocabulary of at least {span}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(pool, size=span, replace=False).tolist()
    return [int(i) for i in prefix] + chosen * repeats


def probe_frame(folder: str | Path) -> tuple[list[int], list[int]]:
    """(prefix, special ids) of a model folder's tokenizer: the tokens its tokenizer puts
    before any text (e.g. a BOS, BERT's [CLS]) and the special ids a probe must avoid."""
    path = Path(folder) / "tokenizer.json"
    if not path.is_file():
        return [], []
    from tokenizers import Tokenizer

    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library's own errors
        raise ValueError(f"cannot read {path}: {str(exc).splitlines()[0][:200]}") from None
    special = sorted(i for i, t in tok.get_added_tokens_decoder().items() if t.special)
    empty, word = tok.encode("").ids, tok.encode("the").ids
    prefix = []
    for a, b in zip(empty, word, strict=False):
        if a != b:
            break
        prefix.append(a)
    return prefix, special


def sentence_scores(path: str | Path, sentences) -> np.ndarray:
    """(layers, heads): the mean over `sentences` of `pair_scores` of each sentence.

    Each sentence has `.text`, `.tokens` (what the tokenizer must give, checked) and
    `.pairs` — e.g. mha_gui.engine.teaching.classroom's agreement or antecedent sentences.
    """
    from mha_gui.engine.models.loader import attention_maps

    if not sentences:
        raise ValueError("no sentences to score")
    total = None
    for s in sentences:
        maps = attention_maps(path, text=s.text)
        if tuple(maps.tokens) != tuple(s.tokens):
            raise ValueError(f"{s.text!r} gives the tokens {maps.tokens}, not {list(s.tokens)}")
        score = pair_scores(maps.weights, s.pairs)
        total = score if total is None else total + score
    return total / len(sentences)


def head_roles(
    path: str | Path,
    text: str | None = None,
    token_ids: Sequence[int] | None = None,
    probe: str | None = None,
    seed: int = 0,
    *,
    span: int = 20,
) -> HeadRoles:
    """Role scores of every layer × head of the model in `path`.

    Give a `text`, `token_ids`, or a `probe` ("repeated": `span` random tokens of the
    model's vocabulary, repeated once, fixed by `seed`); with none of them the probe is
    used. The attention weights are the app's own (`attention_maps`), so the scores are
    those of the maps the model view draws.
    """
    from mha_gui.engine.models.loader import attention_maps, describe_model

    given = sum(x is not None for x in (text, token_ids, probe))
    if given > 1:
        raise ValueError("give one of a text, token ids or a probe")
    if given == 0:
        probe = "repeated"
    if probe is not None:
        if probe not in PROBES:
            raise ValueError(f"unknown probe {probe!r} (known: {', '.join(PROBES)})")
        info = describe_model(path)
        prefix, special = probe_frame(info.path)
        token_ids = repeated_tokens_probe(
            info.vocab_size, seed, span, prefix=prefix, exclude=special
        )
    maps = attention_maps(path, text=text, token_ids=token_ids)
    return HeadRoles(
        role_scores(maps.weights, maps.token_ids),
        list(maps.tokens),
        list(maps.token_ids),
        maps.layers,
        weights=maps.weights,
    )
