"""What a lesson is once read: its steps and what each shows, points at and asks, and
the problems a file can have (`Problem`, all of them carried by `LessonError`).

Frozen dataclasses, made by format.py from a TOML file and read by the checks
(check.py), the lesson player and the handout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mha_gui.engine.lessons.condition_syntax import Cell, Index


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
