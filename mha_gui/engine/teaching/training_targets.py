"""The target patterns a head can be trained towards (engine/teaching/training.py), NumPy only.

A target T is an n×n array of non-negative weights, 0 wherever the mask blocks a pair:
`make_target` builds the ready-made ones ("previous", "first", "self", "uniform",
"token"), `load_target` reads one from a .npy file, `check_target` says in one sentence
what is wrong with any other, and `target_floor` is the smallest loss it allows.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from mha_gui.engine.attention.steps import blocked_positions
from mha_gui.engine.attention.validation import check_index
from mha_gui.engine.layer.session import Session

TARGET_KINDS = ("previous", "first", "self", "uniform", "token")


def session_blocked(session: Session) -> np.ndarray:
    """The session's blocked (query, key) pairs: its extra mask OR the causal mask."""
    return blocked_positions(session.config.n, session.mask, session.config.causal)


def check_target(target, blocked: np.ndarray) -> np.ndarray:
    """`target` as a float64 n×n array, or a ValueError saying in one sentence what is wrong.

    Entries must be finite and ≥ 0, not all zero, and 0 wherever `blocked` is True (a
    head cannot attend there, so asking for it can never be learned).
    """
    n = blocked.shape[0]
    try:
        t = np.asarray(target, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("the target must be an n×n array of numbers") from None
    if t.shape != (n, n):
        raise ValueError(
            f"the target has shape {t.shape} but this layer has n={n}: it needs ({n}, {n})"
        )
    if not np.all(np.isfinite(t)):
        r, k = (int(v) for v in np.argwhere(~np.isfinite(t))[0])
        raise ValueError(f"target[{r},{k}] is {t[r, k]}: every entry must be a finite number")
    if np.any(t < 0):
        r, k = (int(v) for v in np.argwhere(t < 0)[0])
        raise ValueError(f"target[{r},{k}] is {t[r, k]:g}: weights cannot be negative")
    if not np.any(t > 0):
        raise ValueError("the target is all zeros: give at least one row something to attend to")
    bad = (t > 0) & blocked
    if bad.any():
        r, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"target[{r},{k}] is {t[r, k]:g} but query {r} cannot see key {k} (blocked by "
            f"the mask): a target must be 0 at blocked positions"
        )
    return t


def make_target(kind: str, n: int, blocked: np.ndarray | None = None, token: int | None = None):
    """A ready-made n×n target pattern (rows are one-hot unless "uniform").

    "previous": query j → key j−1, query 0 → itself; "first": every query → key 0;
    "self": the diagonal; "uniform": equal weight on every key the query may see;
    "token": every query → key `token` (queries that cannot see it, e.g. earlier ones under
    a causal mask, are left out: their row is 0). `blocked` (n×n bool, True = blocked)
    defaults to nothing blocked; asking for a blocked pair is refused (ValueError).
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a whole number ≥ 1, got {n!r}")
    blocked = np.zeros((n, n), dtype=bool) if blocked is None else np.asarray(blocked, bool)
    t = np.zeros((n, n))
    rows = np.arange(n)
    if kind == "previous":
        t[rows, np.maximum(rows - 1, 0)] = 1.0
    elif kind == "first":
        t[:, 0] = 1.0
    elif kind == "self":
        t[rows, rows] = 1.0
    elif kind == "uniform":
        t[~blocked] = 1.0
    elif kind == "token":
        if isinstance(token, bool) or not isinstance(token, numbers.Integral):
            raise ValueError('the "token" target needs the index of the token to attend to')
        check_index("token", token, n, "tokens")
        t[:, token] = 1.0
        t[blocked[:, token], token] = 0.0
        if not t.any():
            raise ValueError(f"no query may attend to token {token}: every one is blocked")
    else:
        raise ValueError(
            f"unknown target {kind!r}; choose one of: {', '.join(TARGET_KINDS)} or a .npy file"
        )
    return check_target(t, blocked)


def load_target(path, n: int, blocked: np.ndarray | None = None) -> np.ndarray:
    """An n×n target from a .npy file (no pickles), checked like `check_target`."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"target file {str(p)!r} does not exist")
    try:
        data = np.load(p, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{p.name} is not a readable .npy array ({exc})") from None
    if not isinstance(data, np.ndarray):  # an .npz archive
        raise ValueError(f"{p.name} holds several arrays: save one n×n array with np.save")
    if data.dtype.kind not in "biuf":
        raise ValueError(f"{p.name} holds {data.dtype} values: the target must hold numbers")
    blocked = np.zeros((n, n), dtype=bool) if blocked is None else np.asarray(blocked, bool)
    try:
        return check_target(data, blocked)
    except ValueError as exc:
        raise ValueError(f"{p.name}: {exc}") from None


def target_floor(target: np.ndarray) -> float:
    """The smallest loss the target allows: the mean entropy of its normalised rows."""
    t_hat, rows = normalise_rows(target)
    p = t_hat[rows]
    logs = np.log(np.where(p > 0, p, 1.0))
    return float(-(p * logs).sum() / rows.sum()) + 0.0


def normalise_rows(target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """T̂ (each row divided by its sum) and R, the rows that ask for something (sum > 0)."""
    sums = target.sum(axis=1)
    rows = sums > 0
    t_hat = np.zeros_like(target)
    t_hat[rows] = target[rows] / sums[rows, None]
    return t_hat, rows
