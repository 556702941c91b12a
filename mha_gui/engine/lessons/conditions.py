"""The conditions a lesson's "do" step checks, in a tiny grammar parsed here (no eval).

A teacher writes what the student must achieve as a sentence about the trace:

    A_0[the, sat] >= 0.5                 a cell: panel symbol, [query token, key token]
    S_1[2, 1] < 0 and not causal         indices or token texts ('quoted' if odd)
    ablated contains 1                   query head 1 is switched off
    config.d_k == 8 or config.h_kv == 1  the configuration
    stage == weights                     what is on screen: stage, head, query
    query == sat and head == 1
    variant == GQA                       MHA, GQA or MQA
    mask[cat, sat]                       the pair is blocked (causal or Ctrl+click)

Grammar (lowest precedence first; `not` binds tighter than `and`, `and` than `or`):

    expr     := and ("or" and)*
    and      := not ("and" not)*
    not      := "not" not | "(" expr ")" | compare
    compare  := "ablated" "contains" INT | operand [CMP operand]
    operand  := NUMBER | "-" NUMBER | cell | field | WORD | 'STRING' | "STRING"
    cell     := SYMBOL "[" index "," index "]"    (X, H, Y, or Q_i K_g V_g S_i A_i Z_i C_i)
    field    := config.NAME | stage | head | query | variant | causal | rope | bias
    CMP      := == != < <= > >=

A condition is parsed once (`parse_condition`: ValueError naming the column), checked
against what a step shows (`check_condition`: tokens, heads and stage names that exist)
and evaluated on a `Situation` — the session, its trace and the view — by `evaluate`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from mha_gui.engine.stages import STAGE_NAMES

MAX_CONDITION = 500  # characters: a sentence, not a program
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

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
     |(?P<str>'[^']*'|"[^"]*")
     |(?P<op>==|!=|<=|>=|<|>|\[|\]|\(|\)|,|-|\.)
     |(?P<word>[^\W\d]\w*)
    )""",
    re.VERBOSE,
)


# --------------------------------------------------------------------- syntax -------
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
        return f"{self.symbol}[{_index_text(self.row)}, {_index_text(self.col)}]"


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


def _index_text(i: Index) -> str:
    return f"'{i.value}'" if i.quoted else str(i.value)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"unexpected {text[pos]!r} at column {pos + 1}")
        kind = m.lastgroup
        out.append((kind, m.group(kind), m.start(kind) + 1))
        pos = m.end()
    out.append(("end", "", len(text) + 1))
    return out


class _Parser:
    def __init__(self, text: str):
        self.items = _tokens(text)
        self.i = 0

    def peek(self, ahead: int = 0) -> tuple[str, str, int]:
        return self.items[min(self.i + ahead, len(self.items) - 1)]

    def take(self) -> tuple[str, str, int]:
        item = self.items[self.i]
        self.i = min(self.i + 1, len(self.items) - 1)
        return item

    def fail(self, what: str):
        kind, value, col = self.peek()
        found = "the end" if kind == "end" else repr(value)
        raise ValueError(f"expected {what} at column {col}, found {found}")

    def expect(self, value: str) -> None:
        if self.peek()[1] != value or self.peek()[0] not in ("op", "word"):
            self.fail(repr(value))
        self.take()

    def word_is(self, word: str) -> bool:
        kind, value, _ = self.peek()
        return kind == "word" and value == word

    # expr := and ("or" and)*
    def expr(self):
        parts = [self.conj()]
        while self.word_is("or"):
            self.take()
            parts.append(self.conj())
        return parts[0] if len(parts) == 1 else BoolOp("or", tuple(parts))

    def conj(self):
        parts = [self.negation()]
        while self.word_is("and"):
            self.take()
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else BoolOp("and", tuple(parts))

    def negation(self):
        if self.word_is("not"):
            self.take()
            return Not(self.negation())
        if self.peek()[1] == "(" and self.peek()[0] == "op":
            self.take()
            inner = self.expr()
            self.expect(")")
            return inner
        return self.compare()

    def compare(self):
        if self.word_is("ablated"):
            self.take()
            if not self.word_is("contains"):
                self.fail("'contains' after 'ablated'")
            self.take()
            return Contains(self.integer("a head number"))
        left = self.operand()
        kind, value, _ = self.peek()
        if kind == "op" and value in CMP_OPS:
            self.take()
            return Compare(left, value, self.operand())
        return Compare(left, None)

    def integer(self, what: str) -> int:
        kind, value, _ = self.peek()
        if kind != "num" or not value.isdigit():
            self.fail(what)
        self.take()
        return int(value)

    def operand(self):
        kind, value, _ = self.peek()
        if kind == "num":
            self.take()
            return Number(float(value))
        if kind == "op" and value == "-":
            self.take()
            if self.peek()[0] == "word" and self.peek()[1] == "inf":
                self.take()
                return Number(-math.inf)
            if self.peek()[0] != "num":
                self.fail("a number after '-'")
            return Number(-float(self.take()[1]))
        if kind == "str":
            self.take()
            return Word(value[1:-1], quoted=True)
        if kind != "word" or value in KEYWORDS:
            if kind == "word" and value in ("true", "false"):
                self.take()
                return Word(value)
            self.fail("a number, a cell such as A_0[the, sat], or a name")
        self.take()
        if value == "config":
            self.expect(".")
            name_kind, name, _ = self.peek()
            if name_kind != "word":
                self.fail("a configuration field after 'config.'")
            self.take()
            return Field(f"config.{name}")
        if value == "mask" and self.peek()[1] == "[":
            row, col = self.subscripts()
            return Blocked(row, col)
        cell = re.fullmatch(r"([A-Z])(?:_(\d+))?", value)
        if cell and self.peek()[1] == "[":
            letter, head = cell.group(1), cell.group(2)
            if letter not in CELL_KINDS:
                raise ValueError(
                    f"unknown matrix {value!r}; cells are read from {', '.join(_symbol_forms())}"
                )
            row, col = self.subscripts()
            return Cell(letter, None if head is None else int(head), row, col)
        if value == "inf":
            return Number(math.inf)
        if value in ("stage", "head", "query", "variant", *CONFIG_FLAGS):
            return Field(value)
        return Word(value)

    def subscripts(self) -> tuple[Index, Index]:
        self.expect("[")
        row = self.index()
        self.expect(",")
        col = self.index()
        self.expect("]")
        return row, col

    def index(self) -> Index:
        kind, value, _ = self.peek()
        if kind == "num" and value.isdigit():
            self.take()
            return Index(int(value))
        if kind == "str":
            self.take()
            return Index(value[1:-1], quoted=True)
        if kind == "word":
            self.take()
            return Index(value)
        self.fail("a token or a position")


def _symbol_forms() -> list[str]:
    return [k if CELL_KINDS[k][1] is None else f"{k}_i" for k in CELL_KINDS]


def parse_condition(text: str):
    """The condition's syntax tree; ValueError saying what is wrong and where."""
    if not isinstance(text, str):
        raise ValueError(f"a condition is text, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("the condition is empty")
    if len(text) > MAX_CONDITION:
        raise ValueError(f"a condition has at most {MAX_CONDITION} characters, got {len(text)}")
    p = _Parser(text)
    tree = p.expr()
    if p.peek()[0] != "end":
        p.fail("'and', 'or' or the end")
    return tree


def parse_cell(text: str) -> Cell:
    """A single cell reference such as `A_0[the, sat]` (a lesson's outlines, answers)."""
    tree = parse_condition(text)
    if not (isinstance(tree, Compare) and tree.op is None and isinstance(tree.left, Cell)):
        raise ValueError(f"{text!r} is not a cell such as A_0[the, sat] or S_1[2, 1]")
    return tree.left


# ------------------------------------------------------------------- meaning --------
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
            raise ValueError(f"{what} {ref.value} is out of range: the tokens are 0..{n - 1}")
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
            raise ValueError(
                f"{cell.symbol}: column {cell.col.value} is out of range 0..{width - 1}"
            )
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
        return f"mask[{_index_text(node.row)}, {_index_text(node.col)}]"
    if isinstance(node, Word):
        return f"'{node.text}'" if node.quoted else node.text
    return node.name
