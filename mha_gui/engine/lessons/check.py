"""A lesson checked against the numbers its steps open, and played without a window.

`read_lesson` (format.py) checks the file's form; this module opens what each step
shows — the preset, session file or model layer — and checks that every token, head,
stage, view and cell the step names exists there, that every condition can be
evaluated, and that each task's Show me really meets its condition. It plays the lesson
the way a student who presses Show me at every task would (`walk`), so the window's
player and `mha-gui lesson --check` agree on what is right.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mha_gui.engine.layer.session import Session, ViewState, default_tokens
from mha_gui.engine.lessons.condition_syntax import CELL_KINDS, Index
from mha_gui.engine.lessons.conditions import (
    Situation,
    cell_position,
    check_condition,
    evaluate,
    token_position,
)
from mha_gui.engine.lessons.lesson import (
    Lesson,
    LessonError,
    Problem,
    ShowMe,
    Source,
    Step,
)
from mha_gui.engine.models.builtin import builtin_model_path

# The window's docks by name (View ▸ Panels): its editors and every registered view.
# A views test checks that this list is the window's.
KNOWN_DOCKS = (
    "X",
    "config",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "diff",
    "contributions",
    "stats",
    "kv-cache",
    "neuron",
    "lines",
    "model",
    "exercise",
    "train",
    "lesson",
)
BUILTIN_MODEL = "builtin"


# --------------------------------------------------------------------- sources ------
def model_folder(name: str, folder: Path | None) -> Path:
    """The folder of `model = ...`: the built-in trained model, or a path (relative to
    the lesson file). ValueError when it is not there."""
    if name == BUILTIN_MODEL:
        return builtin_model_path()
    path = Path(name).expanduser()
    if not path.is_absolute() and folder is not None:
        path = folder / path
    if not path.is_dir():
        raise ValueError(f"model folder {str(path)!r} does not exist")
    return path


def open_source(source: Source, folder: Path | None) -> Session:
    """The session a step opens (ValueError / OSError when it cannot be opened)."""
    if source.kind == "preset":
        from mha_gui.engine.layer.presets import load_preset

        return load_preset(source.name)
    if source.kind == "session":
        from mha_gui.engine.layer.session import load_session

        path = Path(source.name).expanduser()
        if not path.is_absolute() and folder is not None:
            path = folder / path
        return load_session(path)
    from mha_gui.engine.models import open_layer

    return open_layer(model_folder(source.name, folder), source.layer, text=source.text)


# ----------------------------------------------------------------------- state ------
@dataclass
class StepState:
    """What the window shows at one step, before and after its task's Show me."""

    step: Step
    session: Session  # after the step's show, before the task
    view: ViewState
    solved: Session | None = None  # after Show me (None: no task, or an answer)
    solved_view: ViewState | None = None


def situation(session: Session, view: ViewState, trace=None) -> Situation:
    return Situation(
        session.config,
        list(session.tokens),
        trace,
        session.params.X,
        view.stage,
        view.head,
        view.query,
    )


def query_position(ref: Index, tokens: list[str]) -> int:
    return token_position(ref, tokens, "query")


def apply_show_me(session: Session, view: ViewState, me: ShowMe) -> tuple[Session, ViewState]:
    """The session and view after Show me, computed as the document's edits do
    (ValueError naming the field for a change that cannot be made)."""
    from mha_gui.engine.layer.parameters import resize_mask, resize_parameters

    s = session.copy(trusted=True)
    changes = me.config_changes()
    if changes:
        old = s.config
        try:
            new = old.with_changes(**changes)
        except ValueError as exc:
            raise _At("config" if "ablate" not in changes else "ablate", str(exc)) from None
        params = s.params
        if new.parameter_shapes() != old.parameter_shapes():
            params = resize_parameters(params, old, new, seed=new.n * 131 + new.d_model)
        tokens = list(s.tokens[: new.n]) + default_tokens(new.n)[len(s.tokens[: new.n]) :]
        s = Session(new, tokens, params.copy(), s.view, resize_mask(s.mask, new.n), s.source)
    arrays = s.params.as_dict()
    for i, e in enumerate(me.values):
        a = arrays[e.matrix]
        if len(e.at) != a.ndim or any(j >= n for j, n in zip(e.at, a.shape, strict=False)):
            shape = "×".join(str(n) for n in a.shape)
            raise _At(f"values[{i}].at", f"{list(e.at)} is not a cell of {e.matrix} ({shape})")
        a[e.at] = e.value
    if me.block:
        n = s.config.n
        mask = np.zeros((n, n), bool) if s.mask is None else s.mask.copy()
        for i, (q, k) in enumerate(me.block):
            try:
                mask[token_position(q, s.tokens, "query"), token_position(k, s.tokens, "key")] = (
                    True
                )
            except ValueError as exc:
                raise _At(f"block[{i}]", str(exc)) from None
        s.mask = mask
    v = ViewState(view.stage, min(view.head, s.config.h - 1), min(view.query, s.config.n - 1))
    if me.stage is not None:
        v.stage = me.stage
    if me.head is not None:
        if me.head >= s.config.h:
            raise _At("head", f"this layer has heads 0..{s.config.h - 1}")
        v.head = me.head
    if me.query is not None:
        try:
            v.query = query_position(me.query, s.tokens)
        except ValueError as exc:
            raise _At("query", str(exc)) from None
    return s, v


class _At(ValueError):
    """A Show me problem at a sub-field of do.show_me."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where


def walk(lesson: Lesson, docks=KNOWN_DOCKS, opened=None) -> Iterator[StepState | Problem]:
    """Play the lesson step by step; yields a StepState per step or the Problems found.

    `opened` caches sessions by Source (a model's layer runs once for every step).
    """
    opened = {} if opened is None else opened
    session: Session | None = None
    view = ViewState()
    for step in lesson.steps:
        problems: list[Problem] = []

        def bad(where: str, message: str, step=step, problems=problems) -> None:
            problems.append(Problem(lesson.file, message, step.number, step.title, where))

        show = step.show
        if show.source is not None:
            src = show.source
            try:
                if src not in opened:
                    opened[src] = open_source(src, lesson.folder)
                session = opened[src].copy(trusted=True)
                view = session.view.copy()
            except (ValueError, OSError) as exc:
                field = "show.model" if src.kind == "model" else f"show.{src.kind}"
                bad(field, str(exc))
                yield from problems
                return  # nothing after this step can be checked without its numbers
        if session is None:
            return
        c = session.config
        if show.stage is not None:
            view.stage = show.stage
        if show.head is not None:
            if show.head >= c.h:
                bad(
                    "show.head",
                    f"head {show.head} does not exist: this layer has heads 0..{c.h - 1}",
                )
            else:
                view.head = show.head
        if show.query is not None:
            try:
                view.query = query_position(show.query, session.tokens)
            except ValueError as exc:
                bad("show.query", str(exc))
        for i, d in enumerate(show.docks):
            if d not in docks:
                bad(f"show.docks[{i}]", f"unknown view {d!r}; choose one of: {', '.join(docks)}")
        here = situation(session, view)
        _check_point(step, here, bad)
        state = StepState(step, session.copy(trusted=True), view.copy())
        task = step.do
        if task is not None:
            if task.answer is not None:
                try:
                    cell_position(task.answer, here)
                except ValueError as exc:
                    bad("do.answer", str(exc))
            if task.tree is not None:
                try:
                    check_condition(task.tree, here)
                except ValueError as exc:
                    bad("do.condition", str(exc))
            if task.show_me is not None and not problems:
                try:
                    solved, solved_view = apply_show_me(session, view, task.show_me)
                except _At as exc:
                    bad(f"do.show_me.{exc.where}", str(exc))
                else:
                    after = situation(solved, solved_view, solved.run())
                    try:
                        met = evaluate(task.tree, after)
                    except ValueError as exc:
                        bad("do.condition", f"after Show me: {exc}")
                    else:
                        if not met:
                            bad(
                                "do.show_me",
                                "does not meet the condition: after it, "
                                f"{task.condition!r} is still false",
                            )
                    state.solved, state.solved_view = solved, solved_view
                    session, view = solved, solved_view.copy()
        if problems:
            yield from problems
        else:
            yield state


_PANEL = re.compile(r"([A-Z])(?:_(\d+))?")


def _check_point(step: Step, here: Situation, bad) -> None:
    p = step.point
    for i, cell in enumerate(p.cells):
        try:
            cell_position(cell, here)
        except ValueError as exc:
            bad(f"point.cells[{i}]", str(exc))
    for i, ref in enumerate(p.tokens):
        try:
            token_position(ref, here.tokens, "token")
        except ValueError as exc:
            bad(f"point.tokens[{i}]", str(exc))
    if p.panel is not None:
        m = _PANEL.fullmatch(p.panel)
        c = here.config
        kind, head = m.group(1), m.group(2)
        per = CELL_KINDS[kind][1]
        count = c.h if per == "head" else c.h_kv
        if per is not None and head is not None and int(head) >= count:
            bad("point.panel", f"{p.panel} does not exist: this layer has heads 0..{count - 1}")
        if per is not None and head is None:
            bad("point.panel", f"{kind} needs a head, e.g. {kind}_0")
        if per is None and head is not None:
            bad("point.panel", f"{kind} has no head subscript")


def check_lesson(lesson: Lesson, docks=KNOWN_DOCKS, opened=None) -> list[StepState]:
    """Every step's state, or LessonError listing everything that does not exist."""
    states: list[StepState] = []
    problems: list[Problem] = []
    for item in walk(lesson, docks, opened):
        (problems if isinstance(item, Problem) else states).append(item)
    if problems:
        raise LessonError(problems)
    return states


def with_view(session: Session, view: ViewState) -> Session:
    return replace(session, view=view.copy())
