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

A condition is parsed once, here (`parse_condition`: a ValueError naming the column);
its tree is condition_syntax.py's, and what it means (`check_condition`, `evaluate` on a
`Situation`) is conditions.py.
"""

from __future__ import annotations

import math
import re

from mha_gui.engine.lessons.condition_syntax import (
    CELL_KINDS,
    CMP_OPS,
    CONFIG_FLAGS,
    KEYWORDS,
    Blocked,
    BoolOp,
    Cell,
    Compare,
    Contains,
    Field,
    Index,
    Not,
    Number,
    Word,
)

MAX_CONDITION = 500  # characters: a sentence, not a program
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
     |(?P<str>'[^']*'|"[^"]*")
     |(?P<op>==|!=|<=|>=|<|>|\[|\]|\(|\)|,|-|\.)
     |(?P<word>[^\W\d]\w*)
    )""",
    re.VERBOSE,
)


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
        return self.joined("or", self.conj)

    def conj(self):
        return self.joined("and", self.negation)

    def joined(self, op: str, part):
        """part (op part)*: one part alone, or a BoolOp of them all."""
        parts = [part()]
        while self.word_is(op):
            self.take()
            parts.append(part())
        return parts[0] if len(parts) == 1 else BoolOp(op, tuple(parts))

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
