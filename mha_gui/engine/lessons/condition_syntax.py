"""The syntax tree of a lesson's task condition, and a tree written back as text.

What the parser (condition_parser.py) builds and what conditions.py evaluates: the
tree's nodes, the matrices a cell may name (CELL_KINDS) and the fields and words a
condition may use. `describe` writes a tree in the grammar's own spelling (the tests
round-trip it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CMP_OPS = ("==", "!=", "<=", ">=", "<", ">")
# symbol → (trace attribute, which index its subscript is: "head", "group" or None)
CELL_KINDS = {
    "X": (None, None),
    "Q": ("q", "head"),
    "K": ("k", "group"),
    "V": ("v", "group"),
    "S": ("scores", "head"),
    "A": ("weights", "head"),
    "Z": ("heads", "head"),
    "C": ("contributions", "head"),
    "H": ("concat", None),
    "Y": ("output", None),
}
KEYED = ("S", "A")  # columns are key tokens; the others' columns are feature indices
CONFIG_NUMBERS = ("n", "d_model", "h", "h_kv", "d_k", "d_v", "scale")
CONFIG_FLAGS = ("causal", "rope", "bias")
VARIANTS = ("MHA", "GQA", "MQA")
KEYWORDS = ("and", "or", "not", "contains", "true", "false")


@dataclass(frozen=True)
class Index:
    """One subscript of a cell: a position (int) or a token's text (str)."""

    value: int | str
    quoted: bool = False


@dataclass(frozen=True)
class Cell:
    kind: str  # a key of CELL_KINDS
    head: int | None  # the subscript of Q_i, K_g, …; None for X, H, Y
    row: Index
    col: Index

    @property
    def symbol(self) -> str:
        return self.kind if self.head is None else f"{self.kind}_{self.head}"

    def text(self) -> str:
        return f"{self.symbol}[{index_text(self.row)}, {index_text(self.col)}]"


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Word:
    """A bare word or quoted text on one side of a comparison (a stage, token, variant)."""

    text: str
    quoted: bool = False


@dataclass(frozen=True)
class Field:
    name: str  # "config.d_k", "stage", "head", "query", "variant", "causal", …


@dataclass(frozen=True)
class Blocked:
    row: Index
    col: Index


@dataclass(frozen=True)
class Compare:
    left: object
    op: str | None  # None: the operand alone must be true (a flag, a mask cell)
    right: object = None


@dataclass(frozen=True)
class Contains:
    head: int


@dataclass(frozen=True)
class Not:
    inner: object


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" or "or"
    parts: tuple


def written(value: int | str, quoted: bool) -> str:
    """A subscript or a word as the grammar spells it: in quotes if it was quoted."""
    return f"'{value}'" if quoted else str(value)


def index_text(i: Index) -> str:
    return written(i.value, i.quoted)


def describe(tree) -> str:
    """The condition written back in the grammar's own spelling (tests round-trip it)."""
    if isinstance(tree, BoolOp):
        return f" {tree.op} ".join(f"({describe(p)})" for p in tree.parts)
    if isinstance(tree, Not):
        return f"not ({describe(tree.inner)})"
    if isinstance(tree, Contains):
        return f"ablated contains {tree.head}"
    parts = [_operand_text(tree.left)]
    if tree.op is not None:
        parts += [tree.op, _operand_text(tree.right)]
    return " ".join(parts)


def _operand_text(node) -> str:
    if isinstance(node, Number):
        if math.isinf(node.value):
            return "inf" if node.value > 0 else "-inf"
        return repr(node.value)
    if isinstance(node, Cell):
        return node.text()
    if isinstance(node, Blocked):
        return f"mask[{index_text(node.row)}, {index_text(node.col)}]"
    if isinstance(node, Word):
        return written(node.text, node.quoted)
    return node.name
