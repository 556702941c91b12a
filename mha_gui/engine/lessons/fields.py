"""Reading a lesson file's tables field by field, collecting every mistake as a Problem.

A `FieldReader` is made per file (format.py); it knows which step it is reading
(`step`, `title`), so each problem names the file, the step and the field. Its methods
return what is usable of a value — or None / nothing — and never raise: the reader
carries on and the file's whole list of problems is reported at once.
"""

from __future__ import annotations

from mha_gui.engine.lessons.condition_parser import parse_cell
from mha_gui.engine.lessons.condition_syntax import Cell, Index
from mha_gui.engine.lessons.lesson import Problem
from mha_gui.engine.panels.stages import STAGE_NAMES

_TYPE_NAMES = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}


def type_name(t) -> str:
    """What a field must be, in words: `(int, float)` → "a whole number or a number"."""
    if isinstance(t, tuple):
        return " or ".join(_TYPE_NAMES.get(x, x.__name__) for x in t)
    return _TYPE_NAMES.get(t, "a " + t.__name__)


def is_a(value, t) -> bool:
    """TOML's types as a lesson means them: true is not a number, 2 is a float too."""
    types = t if isinstance(t, tuple) else (t,)
    if isinstance(value, bool):
        return bool in types
    if float in types and isinstance(value, int):
        return True
    return isinstance(value, types)


def given(value) -> str:
    """What was written instead, short enough for one message."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true/false"
    return f"{type(value).__name__} {value!r}"[:60]


class FieldReader:
    """Checks the fields of one lesson file; `problems` is what it found so far."""

    def __init__(self, file: str, max_items: int):
        self.file = file
        self.max_items = max_items  # cells, tokens, docks, values, blocks per list
        self.problems: list[Problem] = []
        self.step: int | None = None  # the step being read (1-based), for the messages
        self.title = ""

    def add(self, where: str, message: str) -> None:
        self.problems.append(Problem(self.file, message, self.step, self.title, where))

    def fields(self, table: dict, where: str, known: dict) -> dict:
        """The known fields of `table` with the right types; every other one is a problem."""
        out = {}
        for key, value in table.items():
            name = f"{where}.{key}" if where else key
            if key not in known:
                self.add(name, f"unknown field; this table takes: {', '.join(known)}")
                continue
            want = known[key]
            if not is_a(value, want):
                self.add(name, f"must be {type_name(want)}, got {given(value)}")
                continue
            out[key] = value
        return out

    def text(self, table: dict, key: str, where: str, limit: int, required=False) -> str:
        value = table.get(key)
        name = f"{where}.{key}" if where else key
        if value is None:
            if required:
                self.add(name, "is missing")
            return ""
        if not value.strip():
            if required:
                self.add(name, "is empty")
            return ""
        if len(value) > limit:
            self.add(name, f"has {len(value)} characters; at most {limit}")
            return value[:limit]
        return value

    def index(self, value, name: str) -> Index | None:
        """A token's text or its position."""
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            self.add(name, f"must be a token's text or its position, got {given(value)}")
            return None
        if isinstance(value, int):
            if value < 0:
                self.add(name, f"a position is ≥ 0, got {value}")
                return None
            return Index(value)
        if not value.strip():
            self.add(name, "a token's text is not empty")
            return None
        return Index(value, quoted=True)

    def stage(self, value, name: str) -> int | None:
        """A stage's name → its 0-based index."""
        if value not in STAGE_NAMES:
            self.add(name, f"unknown stage {value!r}; choose one of: {', '.join(STAGE_NAMES)}")
            return None
        return STAGE_NAMES.index(value)

    def head(self, value, name: str) -> int | None:
        if value < 0:
            self.add(name, f"a head number is ≥ 0, got {value}")
            return None
        return value

    def items(self, value, name: str) -> list:
        """A list, cut to `max_items` entries (the rest is a problem)."""
        if len(value) > self.max_items:
            self.add(name, f"has {len(value)} entries; at most {self.max_items}")
            return value[: self.max_items]
        return value

    def cell(self, value, name: str) -> Cell | None:
        if not isinstance(value, str):
            self.add(name, f'must be a cell such as "A_0[the, sat]", got {given(value)}')
            return None
        try:
            return parse_cell(value)
        except ValueError as exc:
            self.add(name, str(exc))
            return None
