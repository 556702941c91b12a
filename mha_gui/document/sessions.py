"""The sessions and masks an edit asks for, worked out before its undo command is made
(no Qt here: plain functions of the engine's Session). Each raises ValueError, naming
what is wrong, for what cannot be done."""

from __future__ import annotations

import copy

import numpy as np

from mha_gui.engine.attention.validation import out_of_range
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import (
    Parameters,
    random_parameters,
    resize_mask,
    resize_parameters,
)
from mha_gui.engine.layer.session import Session, ViewState, default_tokens, same_array


def resized(session: Session, new: Config) -> Session:
    """`session` under config `new`, keeping every overlapping value, token and mask
    entry (new numbers are seeded), the view clamped to the new sizes."""
    old = session.config
    params = session.params
    if new.parameter_shapes() != old.parameter_shapes():
        params = resize_parameters(params, old, new, seed=new.n * 131 + new.d_model)
    kept = list(session.tokens[: new.n])
    tokens = kept + default_tokens(new.n)[len(kept) :]
    v = session.view
    view = ViewState(v.stage, min(v.head, new.h - 1), min(v.query, new.n - 1))
    return Session(
        new,
        tokens,
        params.copy(),
        view,
        resize_mask(session.mask, new.n),
        source=session.source,  # an edited model layer still names its model
    )


def randomized(session: Session, seed: int, include_x: bool) -> Session:
    """Fresh random weights (and X too if `include_x`), the rest as it is."""
    fresh = random_parameters(session.config, seed=seed)
    params = fresh if include_x else Parameters(**{**fresh.as_dict(), "X": session.params.X.copy()})
    return Session(
        session.config,
        list(session.tokens),
        params,
        session.view,
        session.mask,
        source="",  # fresh numbers: no longer the model's that `source` named
    )


def checked_mask(mask, n: int) -> np.ndarray | None:
    """`mask` as an extra n×n block mask; None for none (or one that blocks nothing)."""
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != (n, n):
        raise ValueError(f"a mask must be a boolean {n}×{n} matrix")
    return mask if mask.any() else None


def toggled(mask: np.ndarray | None, n: int, query: int, key: int) -> np.ndarray:
    """A copy of `mask` (None: nothing blocked) with the pair (query, key) switched."""
    if not (0 <= query < n and 0 <= key < n):
        raise ValueError(f"({query}, {key}) is outside the {n}×{n} mask")
    new = np.zeros((n, n), bool) if mask is None else mask.copy()
    new[query, key] = not new[query, key]
    return new


def switched(config: Config, head: int, off: bool) -> tuple[int, ...]:
    """The ablated heads of `config` with query head `head` switched off or back on."""
    if not 0 <= head < config.h:
        raise ValueError(out_of_range("head", head, config.h, "heads"))
    heads = set(config.ablate)
    return tuple(sorted(heads | {head} if off else heads - {head}))


def twin(session: Session, **changes) -> Session:
    """A new Session object over the same arrays with `changes` (e.g. mask, config): a
    thread still reading the old object keeps what it read."""
    new = copy.copy(session)
    for key, value in changes.items():
        setattr(new, key, value)
    return new


def changes(old: Session, new: Session) -> list[tuple]:
    """The Document signals that moving from `old` to `new` emits, in order, with their
    arguments: shapeChanged then configChanged (shapes follow from the config, so the
    first never comes alone), valuesChanged per matrix whose numbers differ (none after
    a shape change: every view rebuilds), then tokensChanged, maskChanged, viewChanged."""
    out: list[tuple] = []
    shape = old.config.parameter_shapes() != new.config.parameter_shapes()
    if shape:
        out.append(("shapeChanged",))
    if old.config != new.config:
        out.append(("configChanged",))
    if not shape:
        before = old.params.as_dict()
        for name, array in new.params.as_dict().items():
            if not np.array_equal(array, before.get(name)):
                out.append(("valuesChanged", name))
    if old.tokens != new.tokens:
        out.append(("tokensChanged",))
    if not same_array(old.mask, new.mask):
        out.append(("maskChanged",))
    if old.view != new.view:
        out.append(("viewChanged",))
    return out
