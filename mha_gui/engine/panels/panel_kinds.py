"""The panel kinds: what matrix a panel shows, where it comes from, and when it changes.

A panel is one matrix. Its *kind* says what it is — X, Q, K, V (the projections), QR
and KR (Q and K rotated by RoPE, shown only when the config turns RoPE on), S (scaled
scores), A (weights), Z (a head's output), H (concatenation), Y (output) or C (a
head's contribution Z_i W_O[i·d_v:(i+1)·d_v, :] to Y) — and its *head* which query
head it belongs to: None for the layer-wide X, H and Y.

Each kind carries its source (the numbers), its column labels, how it is drawn (query
rows outlined, blocked pairs hatched) and its dependence rule (`reach`): which edits
make it repaint. Adding a panel kind is one entry in `KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from mha_gui.engine.layer.config import Config


class StageData(Protocol):
    """What a description reads: the session's numbers and their forward pass."""

    config: Config
    tokens: list[str]

    def matrix(self, name: str) -> np.ndarray: ...  # parameters: "X", "W_O", …
    def trace(self): ...  # an engine Trace
    def contribution(self, head: int) -> np.ndarray: ...


# What an edit confined to some heads changes in a panel of a kind (`Kind.reach`). An
# edit that is not confined (X, a new config) changes every panel.
OWN_HEAD = "own head"  # the panel's head is among the heads whose Z changed
ANY_HEAD = "any head"  # H: any head's Z changed
EVERY_EDIT = "every edit"  # Y: every edit reaches the output
CONTRIBUTION = "contribution"  # C_i: head i's Z or its rows of W_O changed
INPUT_ONLY = "input only"  # X: only an edit of X itself (which is never confined)
REACHES = (OWN_HEAD, ANY_HEAD, EVERY_EDIT, CONTRIBUTION, INPUT_ONLY)

# The head slot of a layer-wide panel's key: the views keep panels in dicts keyed
# (kind, head), with this for X, H and Y. Functions take and return the head as None.
LAYER_KEY = -1


@dataclass(frozen=True)
class Kind:
    """A panel kind: where its matrix comes from, how its axes are labelled, what it
    depends on."""

    name: str
    per: str | None  # "head" (query head), "group" (K/V head) or None (whole layer)
    source: Callable[[StageData, int | None], np.ndarray]
    columns: Callable[[Config, list[str]], list[str]]
    reach: str  # one of REACHES: which edits change this kind's panels
    query_rows: bool = True  # rows are query tokens: the followed query is outlined
    masked: bool = False  # blocked (query, key) pairs are hatched

    def changed(self, head: int | None, heads: Collection[int], contributions) -> bool:
        """Does panel (this kind, `head`) change when the Z of `heads` changed and the
        output contributions of `contributions` changed?"""
        if self.reach == EVERY_EDIT:
            return True
        if self.reach == CONTRIBUTION:
            return head in contributions
        if self.reach == ANY_HEAD:
            return bool(heads)
        if self.reach == INPUT_ONLY:
            return False
        return head in heads


def _index(count: int) -> list[str]:
    return list(_index_labels(count))


@lru_cache(maxsize=16)
def _index_labels(count: int) -> tuple[str, ...]:
    """ "0" … "count−1", made once per count: a layout asks for d_model's 768 column
    labels hundreds of times while it tries scales (0.1 ms each, ~30 ms a layout)."""
    return tuple(str(j) for j in range(count))


def _t(attr: str, by: str | None) -> Callable[[StageData, int | None], np.ndarray]:
    def read(data: StageData, head: int | None) -> np.ndarray:
        arr = getattr(data.trace(), attr)
        if by is None:
            return arr
        return arr[data.config.kv_group(head) if by == "group" else head]

    return read


def _d_k(c: Config, _tokens) -> list[str]:
    return _index(c.d_k)


def _d_v(c: Config, _tokens) -> list[str]:
    return _index(c.d_v)


def _d_model(c: Config, _tokens) -> list[str]:
    return _index(c.d_model)


def _keys(_c: Config, tokens) -> list[str]:
    return list(tokens)


def _concat_columns(c: Config, _tokens) -> list[str]:
    return [_index_labels(c.d_v)[j % c.d_v] for j in range(c.h * c.d_v)]


KINDS: dict[str, Kind] = {
    "X": Kind("X", None, lambda d, _h: d.matrix("X"), _d_model, INPUT_ONLY),
    "Q": Kind("Q", "head", _t("q", "head"), _d_k, OWN_HEAD),
    "K": Kind("K", "group", _t("k", "group"), _d_k, OWN_HEAD, query_rows=False),
    "QR": Kind("QR", "head", _t("q_rot", "head"), _d_k, OWN_HEAD),
    "KR": Kind("KR", "group", _t("k_rot", "group"), _d_k, OWN_HEAD, query_rows=False),
    "V": Kind("V", "group", _t("v", "group"), _d_v, OWN_HEAD, query_rows=False),
    "S": Kind("S", "head", _t("scores", "head"), _keys, OWN_HEAD, masked=True),
    "A": Kind("A", "head", _t("weights", "head"), _keys, OWN_HEAD, masked=True),
    "Z": Kind("Z", "head", _t("heads", "head"), _d_v, OWN_HEAD),
    "H": Kind("H", None, _t("concat", None), _concat_columns, ANY_HEAD),
    "Y": Kind("Y", None, _t("output", None), _d_model, EVERY_EDIT),
    "C": Kind("C", "head", lambda d, h: d.contribution(h), _d_model, CONTRIBUTION),
}


def check_kind(kind: str) -> Kind:
    """The Kind named `kind`, or a ValueError listing the kinds."""
    if kind not in KINDS:
        raise ValueError(f"unknown matrix kind {kind!r}; choose one of {', '.join(KINDS)}")
    return KINDS[kind]


def key_head(head: int | None) -> int | None:
    """A panel key's head as the panel's head: None for a layer-wide panel (the key's
    LAYER_KEY, or None already), else the query head."""
    return None if head is None or head == LAYER_KEY else int(head)


def panel_key(kind: str, head: int | None) -> tuple[str, int]:
    """The dict key of panel (kind, head): (kind, LAYER_KEY) for a layer-wide panel."""
    if KINDS[kind].per is None or head is None:
        return (kind, LAYER_KEY)
    return (kind, int(head))


def panel_changed(kind: str, head: int | None, heads: Collection[int], contributions) -> bool:
    """Must panel (kind, head) repaint after an edit that changed the Z of `heads` and the
    output contributions of `contributions`? `Kind.changed`, for a key's head too."""
    return KINDS[kind].changed(key_head(head), heads, contributions)
