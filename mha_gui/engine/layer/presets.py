"""Ready-made sessions, each chosen to teach one thing.

Every preset is deterministic: the same name always gives the same numbers, so "Reset
example" in front of a class restores exactly what the handout shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import Parameters, random_parameters
from mha_gui.engine.layer.session import Session, default_tokens


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str  # one line for `mha-gui presets`
    description: str  # what it teaches and how its numbers were made
    build: Callable[..., Session]


def _toy() -> Session:
    """Hand-picked integers: head 0 looks for the noun "cat", head 1 for the verb "sat"."""
    x = [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 2], [0, 1, 1, 0]]
    w_q = [
        [[1, 0], [1, 0], [1, 0], [1, 0]],
        [[2, 0], [0, 0], [0, 2], [0, 1]],
    ]
    w_k = [
        [[0, 0], [1, 0], [0, 0], [0, 0]],
        [[1, 0], [0, 0], [0, 1], [0, 1]],
    ]
    w_v = [
        [[1, 0], [0, 1], [0, 0], [0, 0]],
        [[0, 0], [0, 0], [1, 0], [0, 1]],
    ]
    w_o = [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1]]
    params = Parameters(*(np.array(a, dtype=float) for a in (x, w_q, w_k, w_v, w_o)))
    return Session(Config(n=4, d_model=4, h=2, d_k=2, d_v=2), ["the", "cat", "sat", "down"], params)


def textbook_weights(d_model: int = 16, seed: int = 0) -> tuple[np.ndarray, ...]:
    """The textbook class's four full matrices, drawn in its order: W_q, W_k, W_v, W_o."""
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0, 0.02, (d_model, d_model)) for _ in range(4))


def split_columns(w: np.ndarray, h: int) -> np.ndarray:
    """(d_model, h·d_k) → (h, d_model, d_k): column block i·d_k:(i+1)·d_k is head i."""
    d_model, width = w.shape
    return w.reshape(d_model, h, width // h).transpose(1, 0, 2).copy()


def _causal_6x16() -> Session:
    n, d_model, h = 6, 16, 4
    wq, wk, wv, wo = textbook_weights(d_model)
    x = np.random.default_rng(1).normal(size=(n, d_model))
    params = Parameters(x, split_columns(wq, h), split_columns(wk, h), split_columns(wv, h), wo)
    config = Config(n=n, d_model=d_model, h=h, d_k=4, d_v=4, causal=True)
    return Session(config, ["<s>", "the", "cat", "sat", "on", "it"], params)


def _positional() -> Session:
    """Position features in X, weights built by hand so the heads' roles are exact."""
    n, c = 6, 12.0
    d_model = n + 2  # one-hot position, a constant 1, an "is first token" flag
    x = np.zeros((n, d_model))
    x[np.arange(n), np.arange(n)] = 1.0
    x[:, n] = 1.0
    x[0, n + 1] = 1.0
    d = n
    w_q = np.zeros((2, d_model, d))
    w_k = np.zeros((2, d_model, d))
    w_v = np.zeros((2, d_model, d))
    # Head 0, previous token: the query of position p is the one-hot of p-1, the key of
    # position p is the one-hot of p, so only key p-1 scores c.
    for p in range(1, n):
        w_q[0, p, p - 1] = c
    w_k[0, :n, :n] = np.eye(n)
    # Head 1, first token: every query is the constant c, only the first key has the flag.
    w_q[1, n, 0] = c
    w_k[1, n + 1, 0] = 1.0
    # Both heads carry the one-hot position as value, so Z_i shows which token was read.
    w_v[:, :n, :n] = np.eye(n)
    w_o = np.zeros((2 * d, d_model))
    w_o[:n, :n] = np.eye(n)
    w_o[d : d + n, :n] = 0.5 * np.eye(n)
    params = Parameters(x, w_q, w_k, w_v, w_o)
    config = Config(n=n, d_model=d_model, h=2, d_k=d, d_v=d, causal=True)
    return Session(config, ["<s>", "one", "two", "three", "four", "five"], params)


def _grouped(h: int, h_kv: int, seed: int) -> Session:
    config = Config(n=4, d_model=8, h=h, h_kv=h_kv, d_k=2, d_v=2)
    params = random_parameters(config, seed=seed)
    params.X = np.round(params.X, 1)
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        setattr(params, name, np.round(getattr(params, name), 1))
    return Session(config, ["we", "share", "keys", "today"], params)


def _bert_base() -> Session:
    config = Config(n=128, d_model=768, h=12, d_k=64, d_v=64)
    return Session(config, default_tokens(128), random_parameters(config, seed=0))


def random_session(seed: int = 0, tokens: int = 5, d_model: int = 8, heads: int = 2) -> Session:
    """Seeded random numbers at any shape; d_k = d_v = d_model // heads (at least 1)."""
    width = max(1, d_model // heads)
    config = Config(n=tokens, d_model=d_model, h=heads, d_k=width, d_v=width)
    return Session(config, default_tokens(tokens), random_parameters(config, seed=seed))


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "toy",
            "4 tokens, d_model 4, 2 heads of width 2; small integers to check by hand",
            "The phrase 'the cat sat down' with integer weights. Head 0's keys read the "
            "second feature, so every query looks mostly at 'cat'; head 1 matches queries "
            "and keys on features 0, 2 and 3, so it looks mostly at 'sat'. Same input, "
            "two different attention patterns.",
            _toy,
        ),
        Preset(
            "causal-6x16",
            "6 tokens, d_model 16, 4 causal heads; the textbook NumPy example",
            "W_q, W_k, W_v, W_o drawn in that order from default_rng(0).normal(0, 0.02, "
            "(16, 16)) and split into heads by column blocks, exactly as the textbook "
            "class does; X from default_rng(1). Small weights give nearly uniform "
            "attention over the visible (earlier) tokens — a causal mask in action.",
            _causal_6x16,
        ),
        Preset(
            "positional",
            "6 tokens, d_model 8, 2 causal heads built by hand: previous token / first token",
            "X holds a one-hot position, a constant 1 and an 'is first' flag. Head 0's W^Q "
            "is a shift matrix: the query of position p equals the key of position p-1, "
            "so it attends to the previous token. Head 1's query is the constant feature "
            "and only the first token's key carries the flag, so it attends to the first "
            "token. Values are the one-hot positions, so Z_i shows which token was read.",
            _positional,
        ),
        Preset(
            "gqa",
            "4 tokens, d_model 8, 8 query heads sharing 2 K/V heads (grouped-query)",
            "Heads 0-3 read K/V head 0, heads 4-7 read K/V head 1: fewer keys and values "
            "to cache, different queries still give different patterns.",
            lambda: _grouped(8, 2, seed=3),
        ),
        Preset(
            "mqa",
            "4 tokens, d_model 8, 4 query heads sharing 1 K/V head (multi-query)",
            "Every head reads the same keys and values; only the queries differ.",
            lambda: _grouped(4, 1, seed=4),
        ),
        Preset(
            "bert-base",
            "128 tokens, d_model 768, 12 heads of width 64; seeded random (BERT-base shape)",
            "The shape of a real encoder layer, to see the size of h·n² and the cost.",
            _bert_base,
        ),
        Preset(
            "random",
            "seeded random numbers; options --seed --tokens --d-model --heads",
            "Any shape, reproducible by its seed.",
            random_session,
        ),
    )
}
DEFAULT_PRESET = "toy"


def load_preset(name: str, **options) -> Session:
    """The named preset's session; options are only accepted by `random`."""
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}")
    if options and key != "random":
        raise ValueError(f"preset {key!r} takes no options (only 'random' does)")
    return PRESETS[key].build(**options)
