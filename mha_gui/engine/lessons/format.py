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
from pathlib import Path

from mha_gui.engine.lessons.condition_parser import parse_condition
from mha_gui.engine.lessons.condition_syntax import CELL_KINDS
from mha_gui.engine.lessons.fields import FieldReader, given
from mha_gui.engine.lessons.lesson import (
    Lesson,
    LessonError,
    Point,
    Problem,
    Show,
    ShowMe,
    Source,
    Step,
    Task,
    ValueEdit,
)

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


def _show(r: FieldReader, table: dict) -> Show:
    t = r.fields(table, "show", SHOW_FIELDS)
    sources = [k for k in ("preset", "session", "model") if k in t]
    source = None
    if len(sources) > 1:
        r.add("show", f"give one of preset, session or model, not {' and '.join(sources)}")
    elif sources:
        kind = sources[0]
        name = t[kind].strip()
        if not name:
            r.add(f"show.{kind}", "is empty")
        if kind == "model":
            if "layer" not in t or "text" not in t:
                r.add("show.model", 'a model needs layer = L and text = "a sentence" too')
            layer = t.get("layer", 0)
            if layer < 0:
                r.add("show.layer", f"a layer number is ≥ 0, got {layer}")
            source = Source("model", name, layer, t.get("text", ""))
        else:
            source = Source(kind, name)
    for key in ("layer", "text"):
        if key in t and "model" not in t:
            r.add(f"show.{key}", "goes with model = ... (a model's layer and sentence)")
    stage = r.stage(t["stage"], "show.stage") if "stage" in t else None
    head = r.head(t["head"], "show.head") if "head" in t else None
    query = r.index(t["query"], "show.query") if "query" in t else None
    docks: list[str] = []
    for i, d in enumerate(r.items(t.get("docks", []), "show.docks")):
        if not isinstance(d, str) or not d.strip():
            r.add(f"show.docks[{i}]", f"must be a view's name, got {given(d)}")
        else:
            docks.append(d.strip())
    wr = t.get("weights_range")
    if wr is not None and wr not in WEIGHTS_RANGES:
        r.add("show.weights_range", f"unknown range {wr!r}; choose one of: fixed, head, row")
        wr = None
    return Show(source, stage, head, query, tuple(docks), wr)


POINT_FIELDS = {"cells": list, "tokens": list, "panel": str, "control": str, "callout": str}


def _point(r: FieldReader, table: dict) -> Point:
    t = r.fields(table, "point", POINT_FIELDS)
    cells = [
        r.cell(v, f"point.cells[{i}]")
        for i, v in enumerate(r.items(t.get("cells", []), "point.cells"))
    ]
    tokens = [
        r.index(v, f"point.tokens[{i}]")
        for i, v in enumerate(r.items(t.get("tokens", []), "point.tokens"))
    ]
    if "panel" in t and "control" in t:
        r.add("point", "point at a panel or a control, not both")
    panel = t.get("panel")
    if panel is not None:
        panel = panel.strip()
        m = re.fullmatch(r"([A-Z])(?:_(\d+))?", panel)
        if m is None or m.group(1) not in CELL_KINDS:
            r.add("point.panel", f"{panel!r} is not a panel such as A_1, S_0, K_0, X, H or Y")
            panel = None
    control = t.get("control")
    if control is not None and not control.strip():
        r.add("point.control", "is empty")
        control = None
    callout = r.text(t, "callout", "point", MAX_SHORT)
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


def _do(r: FieldReader, table: dict) -> Task | None:
    t = r.fields(table, "do", DO_FIELDS)
    task = r.text(t, "task", "do", MAX_SHORT, required=True)
    hint = r.text(t, "hint", "do", MAX_HINT, required=True)
    has_c, has_a = "condition" in t, "answer" in t
    if has_c == has_a:
        r.add("do", 'give exactly one of condition = "..." or answer = "S_1[2, 1]"')
    tree = None
    if has_c:
        try:
            tree = parse_condition(t["condition"])
        except ValueError as exc:
            r.add("do.condition", str(exc))
    answer = r.cell(t["answer"], "do.answer") if has_a else None
    tol = t.get("tolerance")
    if tol is not None:
        if not has_a:
            r.add("do.tolerance", "goes with answer = ... (how far a typed value may be)")
        elif not math.isfinite(tol) or tol < 0:
            r.add("do.tolerance", f"must be a finite number ≥ 0, got {tol!r}")
            tol = None
    show_me = _show_me(r, t["show_me"]) if "show_me" in t else None
    if has_c and show_me is None:
        r.add("do.show_me", "is missing: a condition needs what Show me applies to meet it")
    if has_a and show_me is not None:
        r.add("do.show_me", "an answer's Show me reveals the value; it takes no table")
    return Task(task, hint, t.get("condition"), tree, answer, tol, show_me)


def _show_me(r: FieldReader, table: dict) -> ShowMe:
    w = "do.show_me"
    t = r.fields(table, w, SHOW_ME_FIELDS)
    config = r.fields(t.get("config", {}), f"{w}.config", CONFIG_CHANGES)
    if isinstance(config.get("scale"), str) and config["scale"] != "default":
        r.add(f"{w}.config.scale", f'a positive number or "default", got {config["scale"]!r}')
        config.pop("scale")
    ablate = None
    if "ablate" in t:
        ablate = []
        for i, v in enumerate(r.items(t["ablate"], f"{w}.ablate")):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                r.add(f"{w}.ablate[{i}]", f"must be a head number ≥ 0, got {given(v)}")
            else:
                ablate.append(v)
    values = []
    for i, v in enumerate(r.items(t.get("values", []), f"{w}.values")):
        name = f"{w}.values[{i}]"
        if not isinstance(v, dict):
            r.add(
                name,
                f'must be a table {{ matrix = "W_Q", at = [0, 1, 0], value = 2 }}, got {given(v)}',
            )
            continue
        e = r.fields(v, name, {"matrix": str, "at": list, "value": (int, float)})
        if set(e) != {"matrix", "at", "value"}:
            if len(e) == len(v):
                r.add(name, "needs matrix, at and value")
            continue
        if e["matrix"] not in MATRICES:
            r.add(
                f"{name}.matrix",
                f"unknown matrix {e['matrix']!r}; choose one of: {', '.join(MATRICES)}",
            )
            continue
        at = e["at"]
        if not at or not all(isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in at):
            r.add(f"{name}.at", f"must be a list of positions ≥ 0, got {at!r}"[:120])
            continue
        if not math.isfinite(e["value"]):
            r.add(f"{name}.value", "must be a finite number")
            continue
        values.append(ValueEdit(e["matrix"], tuple(at), float(e["value"])))
    blocks = []
    for i, pair in enumerate(r.items(t.get("block", []), f"{w}.block")):
        name = f"{w}.block[{i}]"
        if not isinstance(pair, list) or len(pair) != 2:
            r.add(name, f"must be a pair [query, key], got {given(pair)}")
            continue
        q, k = r.index(pair[0], name), r.index(pair[1], name)
        if q is not None and k is not None:
            blocks.append((q, k))
    stage = r.stage(t["stage"], f"{w}.stage") if "stage" in t else None
    head = r.head(t["head"], f"{w}.head") if "head" in t else None
    query = r.index(t["query"], f"{w}.query") if "query" in t else None
    changes = config or ablate is not None or values or blocks
    if not (changes or t.keys() & {"stage", "head", "query"}) and len(t) == len(table):
        r.add(
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
    r = FieldReader(file, MAX_ITEMS)
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
    top = r.fields(doc, "", LESSON_FIELDS)
    title = r.text(top, "title", "", MAX_TITLE, required=True)
    summary = r.text(top, "summary", "", MAX_SHORT, required=True)
    if "version" in top and top["version"] != 1:
        r.add("version", f"this mha-gui reads lesson version 1, got {top['version']}")
    raw = top.get("step", [])
    if "step" not in doc:
        r.add("step", "the lesson has no steps: add [[step]] tables")
    elif len(raw) > MAX_STEPS:
        r.add("step", f"the lesson has {len(raw)} steps; at most {MAX_STEPS}")
        raw = raw[:MAX_STEPS]
    steps = []
    for k, table in enumerate(raw, start=1):
        r.step, r.title = k, ""
        if not isinstance(table, dict):
            r.add("", f"must be a [[step]] table, got {given(table)}")
            continue
        st = table.get("title")
        r.title = st[:MAX_TITLE] if isinstance(st, str) else ""
        t = r.fields(table, "", STEP_FIELDS)
        step_title = r.text(t, "title", "", MAX_TITLE, required=True)
        body = r.text(t, "text", "", MAX_TEXT, required=True)
        show = _show(r, t["show"]) if "show" in t else Show()
        point = _point(r, t["point"]) if "point" in t else Point()
        task = _do(r, t["do"]) if "do" in t else None
        steps.append(Step(k, step_title, body, show, point, task))
    r.step, r.title = None, ""
    if (
        steps
        and steps[0].show.source is None
        and not any(p.step == 1 and p.field.startswith("show") for p in r.problems)
    ):
        r.problems.append(
            Problem(
                file,
                "the first step says what the lesson opens: preset, session or model",
                1,
                steps[0].title,
                "show",
            )
        )
    if r.problems:
        raise LessonError(r.problems)
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
