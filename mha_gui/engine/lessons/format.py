"""Lesson files: TOML read with Python's own `tomllib`, checked field by field.

A lesson is a title, a summary and a list of `[[step]]` tables. A step has a title and
a text, and optionally what it shows (`[step.show]`), what it points at (`[step.point]`)
and a task the student must do (`[step.do]`, checked by a condition or a typed answer):

    title = "Scores"
    summary = "How one query compares itself with every key"

    [[step]]
    title = "Scaled scores"
    text = "Row j of S_i compares query j with every key."
    [step.show]
    preset = "toy"            # or session = "file.json", or model = "builtin" + layer, text
    stage = "scores"          # input projections scores weights mixing concat output
    head = 1
    query = "sat"             # a token's text or its position
    docks = ["kv-cache"]      # views to open, by name
    weights_range = "fixed"   # fixed, head or row
    [step.point]
    cells = ["S_1[sat, the]"]
    tokens = ["the"]
    panel = "S_1"             # or control = "headSelector" (an objectName)
    callout = "the largest score of the row"
    [step.do]
    task = "Make head 0 read 'sat' from 'the'"
    condition = "A_0[the, sat] >= 0.5"  # or answer = "S_1[2, 1]" (+ tolerance)
    hint = "Which feature of 'sat' does head 0's key read?"
    [step.do.show_me]          # what Show me applies (ordinary, undoable edits)
    config = { d_k = 8 }       # also ablate = [1], values = [...], block = [[q, k]],
                               # stage / head / query

Nothing in a file is executed. Every mistake is collected as a `Problem` naming the
file, the step (number and title) and the field; `LessonError` carries them all.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mha_gui.engine.lessons.conditions import CELL_KINDS, Cell, Index, parse_cell, parse_condition
from mha_gui.engine.stages import STAGE_NAMES

MAX_BYTES = 64 * 1024
MAX_STEPS = 60
MAX_TEXT = 4000
MAX_TITLE = 120
MAX_SHORT = 400  # summary, task, callout
MAX_HINT = 1000
MAX_ITEMS = 32  # cells, tokens, docks, values, blocks per step
WEIGHTS_RANGES = ("fixed", "head", "row")
CONFIG_CHANGES = {
    "d_model": int,
    "h": int,
    "h_kv": int,
    "d_k": int,
    "d_v": int,
    "causal": bool,
    "bias": bool,
    "rope": bool,
    "scale": (int, float, str),  # a positive number or "default" (1/√d_k)
}
MATRICES = ("X", "W_Q", "W_K", "W_V", "W_O")


@dataclass(frozen=True)
class Problem:
    """One mistake in a lesson file."""

    file: str
    message: str
    step: int | None = None  # 1-based
    title: str = ""
    field: str = ""

    def __str__(self) -> str:
        where = self.file
        if self.step is not None:
            where += f": step {self.step}" + (f" (“{self.title}”)" if self.title else "")
        if self.field:
            where += f": field '{self.field}'"
        return f"{where}: {self.message}"


class LessonError(ValueError):
    """A lesson file that cannot be played: every problem found, the first as message."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        first = str(self.problems[0])
        more = len(self.problems) - 1
        super().__init__(first + (f" (and {more} more problem{'s' * (more > 1)})" if more else ""))


@dataclass(frozen=True)
class Source:
    """What a step opens: a preset, a session file or a model's layer on a sentence."""

    kind: str  # "preset", "session" or "model"
    name: str  # the preset's name, the file's path, "builtin" or a model folder
    layer: int = 0
    text: str = ""


@dataclass(frozen=True)
class Show:
    source: Source | None = None
    stage: int | None = None
    head: int | None = None
    query: Index | None = None
    docks: tuple[str, ...] = ()
    weights_range: str | None = None


@dataclass(frozen=True)
class Point:
    cells: tuple[Cell, ...] = ()
    tokens: tuple[Index, ...] = ()
    panel: str | None = None  # a panel symbol: A_1, Y, K_0
    control: str | None = None  # a widget's objectName
    callout: str = ""

    @property
    def empty(self) -> bool:
        return not (self.cells or self.tokens or self.panel or self.control or self.callout)


@dataclass(frozen=True)
class ValueEdit:
    matrix: str
    at: tuple[int, ...]
    value: float


@dataclass(frozen=True)
class ShowMe:
    config: dict = field(default_factory=dict)
    ablate: tuple[int, ...] | None = None
    values: tuple[ValueEdit, ...] = ()
    block: tuple[tuple[Index, Index], ...] = ()
    stage: int | None = None
    head: int | None = None
    query: Index | None = None

    def config_changes(self) -> dict:
        """The configuration changes as `Config.with_changes` / `Document.set_config`
        take them ("default" scale → None, the ablated heads as a sorted tuple)."""
        changes = dict(self.config)
        if changes.get("scale") == "default":
            changes["scale"] = None
        if self.ablate is not None:
            changes["ablate"] = tuple(sorted(set(self.ablate)))
        return changes


@dataclass(frozen=True)
class Task:
    task: str
    hint: str
    condition: str | None = None
    tree: object = None  # the parsed condition
    answer: Cell | None = None
    tolerance: float | None = None
    show_me: ShowMe | None = None


@dataclass(frozen=True)
class Step:
    number: int  # 1-based
    title: str
    text: str
    show: Show = field(default_factory=Show)
    point: Point = field(default_factory=Point)
    do: Task | None = None


@dataclass(frozen=True)
class Lesson:
    title: str
    summary: str
    steps: tuple[Step, ...]
    file: str  # what messages call it: the built-in name or the path given
    folder: Path | None = None  # where relative session files and model folders are
    name: str | None = None  # the built-in lesson's name


# --------------------------------------------------------------------- reading ------
class _Collector:
    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []
        self.step: int | None = None
        self.title = ""

    def add(self, where: str, message: str) -> None:
        self.problems.append(Problem(self.file, message, self.step, self.title, where))


_TYPE_NAMES = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_TYPE_NAMES.get(x, x.__name__) for x in t)
    return _TYPE_NAMES.get(t, "a " + t.__name__)


def _is(value, t) -> bool:
    types = t if isinstance(t, tuple) else (t,)
    if isinstance(value, bool):
        return bool in types
    if float in types and isinstance(value, int):
        return True
    return isinstance(value, types)


def _given(value) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true/false"
    return f"{type(value).__name__} {value!r}"[:60]


def _fields(c: _Collector, table: dict, where: str, known: dict) -> dict:
    """The known fields of `table` with the right types; every other one is a problem."""
    out = {}
    for key, value in table.items():
        name = f"{where}.{key}" if where else key
        if key not in known:
            choices = ", ".join(known)
            c.add(name, f"unknown field; this table takes: {choices}")
            continue
        want = known[key]
        if not _is(value, want):
            c.add(name, f"must be {_type_name(want)}, got {_given(value)}")
            continue
        out[key] = value
    return out


def _text(c: _Collector, table: dict, key: str, where: str, limit: int, required=False) -> str:
    value = table.get(key)
    name = f"{where}.{key}" if where else key
    if value is None:
        if required:
            c.add(name, "is missing")
        return ""
    if not value.strip():
        if required:
            c.add(name, "is empty")
        return ""
    if len(value) > limit:
        c.add(name, f"has {len(value)} characters; at most {limit}")
        return value[:limit]
    return value


def _index(c: _Collector, value, name: str) -> Index | None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        c.add(name, f"must be a token's text or its position, got {_given(value)}")
        return None
    if isinstance(value, int):
        if value < 0:
            c.add(name, f"a position is ≥ 0, got {value}")
            return None
        return Index(value)
    if not value.strip():
        c.add(name, "a token's text is not empty")
        return None
    return Index(value, quoted=True)


def _stage(c: _Collector, value, name: str) -> int | None:
    if value not in STAGE_NAMES:
        c.add(name, f"unknown stage {value!r}; choose one of: {', '.join(STAGE_NAMES)}")
        return None
    return STAGE_NAMES.index(value)


def _head(c: _Collector, value, name: str) -> int | None:
    if value < 0:
        c.add(name, f"a head number is ≥ 0, got {value}")
        return None
    return value


def _list(c: _Collector, value, name: str) -> list:
    if len(value) > MAX_ITEMS:
        c.add(name, f"has {len(value)} entries; at most {MAX_ITEMS}")
        return value[:MAX_ITEMS]
    return value


SHOW_FIELDS = {
    "preset": str,
    "session": str,
    "model": str,
    "layer": int,
    "text": str,
    "stage": str,
    "head": int,
    "query": (int, str),
    "docks": list,
    "weights_range": str,
}


def _show(c: _Collector, table: dict) -> Show:
    t = _fields(c, table, "show", SHOW_FIELDS)
    sources = [k for k in ("preset", "session", "model") if k in t]
    source = None
    if len(sources) > 1:
        c.add("show", f"give one of preset, session or model, not {' and '.join(sources)}")
    elif sources:
        kind = sources[0]
        name = t[kind].strip()
        if not name:
            c.add(f"show.{kind}", "is empty")
        if kind == "model":
            if "layer" not in t or "text" not in t:
                c.add("show.model", 'a model needs layer = L and text = "a sentence" too')
            layer = t.get("layer", 0)
            if layer < 0:
                c.add("show.layer", f"a layer number is ≥ 0, got {layer}")
            source = Source("model", name, layer, t.get("text", ""))
        else:
            source = Source(kind, name)
    for key in ("layer", "text"):
        if key in t and "model" not in t:
            c.add(f"show.{key}", "goes with model = ... (a model's layer and sentence)")
    stage = _stage(c, t["stage"], "show.stage") if "stage" in t else None
    head = _head(c, t["head"], "show.head") if "head" in t else None
    query = _index(c, t["query"], "show.query") if "query" in t else None
    docks: list[str] = []
    for i, d in enumerate(_list(c, t.get("docks", []), "show.docks")):
        if not isinstance(d, str) or not d.strip():
            c.add(f"show.docks[{i}]", f"must be a view's name, got {_given(d)}")
        else:
            docks.append(d.strip())
    wr = t.get("weights_range")
    if wr is not None and wr not in WEIGHTS_RANGES:
        c.add("show.weights_range", f"unknown range {wr!r}; choose one of: fixed, head, row")
        wr = None
    return Show(source, stage, head, query, tuple(docks), wr)


POINT_FIELDS = {"cells": list, "tokens": list, "panel": str, "control": str, "callout": str}


def _cell(c: _Collector, value, name: str) -> Cell | None:
    if not isinstance(value, str):
        c.add(name, f'must be a cell such as "A_0[the, sat]", got {_given(value)}')
        return None
    try:
        return parse_cell(value)
    except ValueError as exc:
        c.add(name, str(exc))
        return None


def _point(c: _Collector, table: dict) -> Point:
    t = _fields(c, table, "point", POINT_FIELDS)
    cells = [
        _cell(c, v, f"point.cells[{i}]")
        for i, v in enumerate(_list(c, t.get("cells", []), "point.cells"))
    ]
    tokens = [
        _index(c, v, f"point.tokens[{i}]")
        for i, v in enumerate(_list(c, t.get("tokens", []), "point.tokens"))
    ]
    if "panel" in t and "control" in t:
        c.add("point", "point at a panel or a control, not both")
    panel = t.get("panel")
    if panel is not None:
        panel = panel.strip()
        m = re.fullmatch(r"([A-Z])(?:_(\d+))?", panel)
        if m is None or m.group(1) not in CELL_KINDS:
            c.add("point.panel", f"{panel!r} is not a panel such as A_1, S_0, K_0, X, H or Y")
            panel = None
    control = t.get("control")
    if control is not None and not control.strip():
        c.add("point.control", "is empty")
        control = None
    callout = _text(c, t, "callout", "point", MAX_SHORT)
    return Point(
        tuple(x for x in cells if x is not None),
        tuple(x for x in tokens if x is not None),
        panel,
        control.strip() if control else None,
        callout,
    )


DO_FIELDS = {
    "task": str,
    "condition": str,
    "answer": str,
    "tolerance": (int, float),
    "hint": str,
    "show_me": dict,
}
SHOW_ME_FIELDS = {
    "config": dict,
    "ablate": list,
    "values": list,
    "block": list,
    "stage": str,
    "head": int,
    "query": (int, str),
}


def _do(c: _Collector, table: dict) -> Task | None:
    t = _fields(c, table, "do", DO_FIELDS)
    task = _text(c, t, "task", "do", MAX_SHORT, required=True)
    hint = _text(c, t, "hint", "do", MAX_HINT, required=True)
    has_c, has_a = "condition" in t, "answer" in t
    if has_c == has_a:
        c.add("do", 'give exactly one of condition = "..." or answer = "S_1[2, 1]"')
    tree = None
    if has_c:
        try:
            tree = parse_condition(t["condition"])
        except ValueError as exc:
            c.add("do.condition", str(exc))
    answer = _cell(c, t["answer"], "do.answer") if has_a else None
    tol = t.get("tolerance")
    if tol is not None:
        if not has_a:
            c.add("do.tolerance", "goes with answer = ... (how far a typed value may be)")
        elif not math.isfinite(tol) or tol < 0:
            c.add("do.tolerance", f"must be a finite number ≥ 0, got {tol!r}")
            tol = None
    show_me = _show_me(c, t["show_me"]) if "show_me" in t else None
    if has_c and show_me is None:
        c.add("do.show_me", "is missing: a condition needs what Show me applies to meet it")
    if has_a and show_me is not None:
        c.add("do.show_me", "an answer's Show me reveals the value; it takes no table")
    return Task(task, hint, t.get("condition"), tree, answer, tol, show_me)


def _show_me(c: _Collector, table: dict) -> ShowMe:
    w = "do.show_me"
    t = _fields(c, table, w, SHOW_ME_FIELDS)
    config = _fields(c, t.get("config", {}), f"{w}.config", CONFIG_CHANGES)
    if isinstance(config.get("scale"), str) and config["scale"] != "default":
        c.add(f"{w}.config.scale", f'a positive number or "default", got {config["scale"]!r}')
        config.pop("scale")
    ablate = None
    if "ablate" in t:
        ablate = []
        for i, v in enumerate(_list(c, t["ablate"], f"{w}.ablate")):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                c.add(f"{w}.ablate[{i}]", f"must be a head number ≥ 0, got {_given(v)}")
            else:
                ablate.append(v)
    values = []
    for i, v in enumerate(_list(c, t.get("values", []), f"{w}.values")):
        name = f"{w}.values[{i}]"
        if not isinstance(v, dict):
            c.add(
                name,
                f'must be a table {{ matrix = "W_Q", at = [0, 1, 0], value = 2 }}, got {_given(v)}',
            )
            continue
        e = _fields(c, v, name, {"matrix": str, "at": list, "value": (int, float)})
        if set(e) != {"matrix", "at", "value"}:
            if len(e) == len(v):
                c.add(name, "needs matrix, at and value")
            continue
        if e["matrix"] not in MATRICES:
            c.add(
                f"{name}.matrix",
                f"unknown matrix {e['matrix']!r}; choose one of: {', '.join(MATRICES)}",
            )
            continue
        at = e["at"]
        if not at or not all(isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in at):
            c.add(f"{name}.at", f"must be a list of positions ≥ 0, got {at!r}"[:120])
            continue
        if not math.isfinite(e["value"]):
            c.add(f"{name}.value", "must be a finite number")
            continue
        values.append(ValueEdit(e["matrix"], tuple(at), float(e["value"])))
    blocks = []
    for i, pair in enumerate(_list(c, t.get("block", []), f"{w}.block")):
        name = f"{w}.block[{i}]"
        if not isinstance(pair, list) or len(pair) != 2:
            c.add(name, f"must be a pair [query, key], got {_given(pair)}")
            continue
        q, k = _index(c, pair[0], name), _index(c, pair[1], name)
        if q is not None and k is not None:
            blocks.append((q, k))
    stage = _stage(c, t["stage"], f"{w}.stage") if "stage" in t else None
    head = _head(c, t["head"], f"{w}.head") if "head" in t else None
    query = _index(c, t["query"], f"{w}.query") if "query" in t else None
    changes = config or ablate is not None or values or blocks
    if not (changes or t.keys() & {"stage", "head", "query"}) and len(t) == len(table):
        c.add(
            w,
            "is empty: say what Show me changes (config, ablate, values, block, stage, head, query)",
        )
    return ShowMe(
        config,
        None if ablate is None else tuple(ablate),
        tuple(values),
        tuple(blocks),
        stage,
        head,
        query,
    )


LESSON_FIELDS = {"title": str, "summary": str, "version": int, "author": str, "step": list}
STEP_FIELDS = {"title": str, "text": str, "show": dict, "point": dict, "do": dict}


def read_lesson(
    data: bytes, file: str, folder: Path | None = None, name: str | None = None
) -> Lesson:
    """The lesson in `data` (a TOML file's bytes), its format checked; LessonError lists
    every problem. What the steps name (tokens, heads, files) is checked by
    `check_lesson`, which needs the numbers the steps open."""
    c = _Collector(file)
    if len(data) > MAX_BYTES:
        raise LessonError(
            [Problem(file, f"is {len(data):,} bytes; a lesson is at most {MAX_BYTES:,}")]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LessonError([Problem(file, f"is not UTF-8 text (byte {exc.start})")]) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LessonError([Problem(file, f"is not valid TOML: {exc}")]) from None
    top = _fields(c, doc, "", LESSON_FIELDS)
    title = _text(c, top, "title", "", MAX_TITLE, required=True)
    summary = _text(c, top, "summary", "", MAX_SHORT, required=True)
    if "version" in top and top["version"] != 1:
        c.add("version", f"this mha-gui reads lesson version 1, got {top['version']}")
    raw = top.get("step", [])
    if "step" not in doc:
        c.add("step", "the lesson has no steps: add [[step]] tables")
    elif len(raw) > MAX_STEPS:
        c.add("step", f"the lesson has {len(raw)} steps; at most {MAX_STEPS}")
        raw = raw[:MAX_STEPS]
    steps = []
    for k, table in enumerate(raw, start=1):
        c.step, c.title = k, ""
        if not isinstance(table, dict):
            c.add("", f"must be a [[step]] table, got {_given(table)}")
            continue
        st = table.get("title")
        c.title = st[:MAX_TITLE] if isinstance(st, str) else ""
        t = _fields(c, table, "", STEP_FIELDS)
        step_title = _text(c, t, "title", "", MAX_TITLE, required=True)
        body = _text(c, t, "text", "", MAX_TEXT, required=True)
        show = _show(c, t["show"]) if "show" in t else Show()
        point = _point(c, t["point"]) if "point" in t else Point()
        task = _do(c, t["do"]) if "do" in t else None
        steps.append(Step(k, step_title, body, show, point, task))
    c.step, c.title = None, ""
    if (
        steps
        and steps[0].show.source is None
        and not any(p.step == 1 and p.field.startswith("show") for p in c.problems)
    ):
        c.problems.append(
            Problem(
                file,
                "the first step says what the lesson opens: preset, session or model",
                1,
                steps[0].title,
                "show",
            )
        )
    if c.problems:
        raise LessonError(c.problems)
    return Lesson(title, summary, tuple(steps), file, folder, name)


def read_lesson_file(path) -> Lesson:
    """A lesson from a file; LessonError (a ValueError) for anything wrong with it."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise LessonError([Problem(str(path), f"cannot be read: {reason}")]) from None
    return read_lesson(data, str(path), p.resolve().parent)
