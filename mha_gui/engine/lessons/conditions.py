"""What a lesson's task condition means, evaluated on the window's numbers (no eval).

A condition (parsed by condition_parser.py into the tree of condition_syntax.py) is
checked against what a step shows (`check_condition`: tokens, heads and stage names that
exist) and evaluated on a `Situation` — the session, its trace and the view — by
`evaluate`. `cell_value` and the position helpers also read the cells a step names for
the lesson player and the handout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_gui.engine.attention.validation import out_of_range
from mha_gui.engine.lessons.condition_syntax import (
    CELL_KINDS,
    CONFIG_FLAGS,
    CONFIG_NUMBERS,
    KEYED,
    VARIANTS,
    Blocked,
    BoolOp,
    Cell,
    Compare,
    Contains,
    Index,
    Not,
    Number,
    Word,
)
from mha_gui.engine.panels.stages import STAGE_NAMES


@dataclass
class Situation:
    """What a condition reads: the session's config and tokens, its trace, the view."""

    config: object  # engine Config
    tokens: list[str]
    trace: object | None = None  # engine Trace (None: only static checks)
    x: np.ndarray | None = None
    stage: int = 0
    head: int = 0
    query: int = 0


def token_position(ref: Index, tokens: list[str], what: str) -> int:
    """The position an index names: a number in range, or a token text that occurs once."""
    n = len(tokens)
    if isinstance(ref.value, int):
        if not 0 <= ref.value < n:
            raise ValueError(out_of_range(what, ref.value, n, "tokens"))
        return ref.value
    found = [i for i, t in enumerate(tokens) if t == ref.value]
    if not found:
        shown = ", ".join(tokens[:12]) + (" …" if n > 12 else "")
        raise ValueError(f"no token {ref.value!r} among the tokens ({shown})")
    if len(found) > 1:
        where = ", ".join(str(i) for i in found)
        raise ValueError(
            f"token {ref.value!r} occurs {len(found)} times (positions {where}): use a position"
        )
    return found[0]


def cell_position(cell: Cell, s: Situation) -> tuple[int, int, int | None]:
    """(row, col, head) of a cell in `s`; ValueError naming what does not exist."""
    c = s.config
    _attr, per = CELL_KINDS[cell.kind]
    if per is None and cell.head is not None:
        raise ValueError(f"{cell.kind} has no head subscript: write {cell.kind}[row, column]")
    if per is not None and cell.head is None:
        raise ValueError(f"{cell.kind} needs a head subscript, e.g. {cell.kind}_0[...]")
    if per is not None:
        count, noun = (c.h, "heads") if per == "head" else (c.h_kv, "key/value heads")
        if cell.head >= count:
            raise ValueError(f"{cell.symbol}: this layer has {noun} 0..{count - 1}")
    row = token_position(cell.row, s.tokens, "row")
    if cell.kind in KEYED:
        col = token_position(cell.col, s.tokens, "key")
    else:
        width = {
            "X": c.d_model,
            "Q": c.d_k,
            "K": c.d_k,
            "V": c.d_v,
            "Z": c.d_v,
            "C": c.d_model,
            "H": c.h * c.d_v,
            "Y": c.d_model,
        }[cell.kind]
        if not isinstance(cell.col.value, int):
            raise ValueError(
                f"{cell.symbol}'s columns are features 0..{width - 1}, not tokens "
                f"({cell.col.value!r})"
            )
        if not 0 <= cell.col.value < width:
            raise ValueError(out_of_range("column", cell.col.value, width, "columns", cell.symbol))
        col = cell.col.value
    return row, col, cell.head


def cell_value(cell: Cell, s: Situation) -> float:
    row, col, head = cell_position(cell, s)
    attr, _per = CELL_KINDS[cell.kind]
    if attr is None:
        return float(s.x[row, col])
    array = getattr(s.trace, attr)
    return float(array[row, col] if head is None else array[head, row, col])


def _kind(node) -> str:
    """What a comparison operand is: number, flag, stage, query, variant or word."""
    if isinstance(node, (Number, Cell)):
        return "number"
    if isinstance(node, Blocked):
        return "flag"
    if isinstance(node, Word):
        return "word"
    name = node.name
    if name in CONFIG_FLAGS or name in (f"config.{f}" for f in CONFIG_FLAGS):
        return "flag"
    if name.startswith("config."):
        if name[7:] not in CONFIG_NUMBERS:
            known = ", ".join(f"config.{f}" for f in (*CONFIG_NUMBERS, *CONFIG_FLAGS))
            raise ValueError(f"unknown field {name!r}; choose one of: {known}")
        return "number"
    return {"head": "number", "stage": "stage", "query": "query", "variant": "variant"}[name]


def _literal(word: Word, kind: str, s: Situation):
    """A word's meaning beside an operand of `kind` (a stage name, token, variant, flag)."""
    if kind == "stage":
        if word.text not in STAGE_NAMES:
            raise ValueError(
                f"unknown stage {word.text!r}; choose one of: {', '.join(STAGE_NAMES)}"
            )
        return STAGE_NAMES.index(word.text)
    if kind == "query":
        return token_position(Index(word.text, word.quoted), s.tokens, "query")
    if kind == "variant":
        if word.text not in VARIANTS:
            raise ValueError(f"unknown variant {word.text!r}; choose one of: {', '.join(VARIANTS)}")
        return word.text
    if kind == "flag":
        if word.text not in ("true", "false"):
            raise ValueError(f"compare a switch with true or false, not {word.text!r}")
        return word.text == "true"
    raise ValueError(f"{word.text!r} is not a number or a known name")


def _value(node, s: Situation, live: bool):
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Cell):
        pos = cell_position(node, s)
        return cell_value(node, s) if live else pos
    if isinstance(node, Blocked):
        row = token_position(node.row, s.tokens, "query")
        col = token_position(node.col, s.tokens, "key")
        return bool(s.trace.mask[row, col]) if live else False
    c = s.config
    name = node.name.removeprefix("config.")
    if name == "scale":
        return c.effective_scale
    if name in CONFIG_NUMBERS or name in CONFIG_FLAGS:
        return getattr(c, name)
    if name == "variant":
        return c.variant
    return {"stage": s.stage, "head": s.head, "query": s.query}[name]


def _compare(node: Compare, s: Situation, live: bool) -> bool:
    if node.op is None:
        if isinstance(node.left, Word):
            raise ValueError(f"{node.left.text!r} alone is not a condition (compare it with ==)")
        if _kind(node.left) != "flag":
            raise ValueError("a number alone is not a condition: compare it, e.g. >= 0.5")
        return bool(_value(node.left, s, live))
    lk = "word" if isinstance(node.left, Word) else _kind(node.left)
    rk = "word" if isinstance(node.right, Word) else _kind(node.right)
    if lk == "word" and rk == "word":
        raise ValueError("compare a field or a cell with a value, not two words")
    if lk == "word":  # `weights == stage` reads as `stage == weights`
        flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(node.op, node.op)
        return _compare(Compare(node.right, flipped, node.left), s, live)
    for k in (lk, rk):
        if k in ("flag", "variant") and node.op not in ("==", "!="):
            raise ValueError(f"a {k} is compared with == or !=, not {node.op}")
    numeric = {"number", "stage", "query"}
    if rk != "word" and lk != rk and not (lk in numeric and rk in numeric):
        raise ValueError(f"cannot compare a {lk} with a {rk}")
    a = _value(node.left, s, live)
    b = _literal(node.right, lk, s) if rk == "word" else _value(node.right, s, live)
    return _apply(node.op, a, b) if live else False


def _apply(op: str, a, b) -> bool:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def _walk(tree, s: Situation, live: bool) -> bool:
    if isinstance(tree, BoolOp):
        if not live:  # every part is checked, none is skipped
            for part in tree.parts:
                _walk(part, s, live)
            return False
        if tree.op == "and":
            return all(_walk(p, s, live) for p in tree.parts)
        return any(_walk(p, s, live) for p in tree.parts)
    if isinstance(tree, Not):
        return not _walk(tree.inner, s, live)
    if isinstance(tree, Contains):
        if not 0 <= tree.head < s.config.h:
            raise ValueError(
                f"ablated contains {tree.head}: this layer has heads 0..{s.config.h - 1}"
            )
        return tree.head in s.config.ablate
    return _compare(tree, s, live)


def check_condition(tree, situation: Situation) -> None:
    """ValueError if the condition names a token, head, stage or field that does not
    exist in `situation` (its trace is not needed)."""
    _walk(tree, situation, live=False)


def evaluate(tree, situation: Situation) -> bool:
    """Whether the condition holds; ValueError when it names something that no longer
    exists (the student renamed a token, say)."""
    return bool(_walk(tree, situation, live=True))
