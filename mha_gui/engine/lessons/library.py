"""The built-in lessons (resources/lessons/*.toml) and finding a lesson by name or path.

for entry in builtin_lessons(): print(entry.name, entry.title)
lesson = load_lesson("walkthrough")       # a built-in name
lesson = load_lesson("my-lesson.toml")    # or a file
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mha_gui.engine.lessons.format import read_lesson, read_lesson_file
from mha_gui.engine.lessons.lesson import Lesson, LessonError, Problem
from mha_gui.engine.resources import resources_folder


def lessons_folder() -> Path:
    return resources_folder() / "lessons"


@dataclass(frozen=True)
class Entry:
    """One built-in lesson as the chooser and `mha-gui lessons` list it."""

    name: str  # the file's stem: what `mha-gui lesson NAME` takes
    path: Path
    title: str
    summary: str
    steps: int


def builtin_paths() -> list[Path]:
    """The built-in lesson files in teaching order (their names start with a number)."""
    return sorted(lessons_folder().glob("*.toml"))


def builtin_name(path: Path) -> str:
    """`01-walkthrough.toml` → `walkthrough`: the order prefix is not part of the name."""
    stem = path.stem
    head, _, rest = stem.partition("-")
    return rest if head.isdigit() and rest else stem


def builtin_lessons() -> list[Entry]:
    """Every built-in lesson, read (a broken one raises LessonError)."""
    out = []
    for path in builtin_paths():
        lesson = read_builtin(path)
        out.append(Entry(lesson.name, path, lesson.title, lesson.summary, len(lesson.steps)))
    return out


def read_builtin(path: Path) -> Lesson:
    name = builtin_name(path)
    return read_lesson(path.read_bytes(), name, path.parent, name=name)


def load_lesson(name_or_path) -> Lesson:
    """A built-in lesson by name (`walkthrough`) or a lesson file by path; LessonError
    (a ValueError) names what is wrong."""
    text = str(name_or_path)
    path = Path(text)
    if path.suffix.lower() == ".toml" or path.exists() or "/" in text or "\\" in text:
        return read_lesson_file(path)
    for candidate in builtin_paths():
        if builtin_name(candidate) == text.strip().lower():
            return read_builtin(candidate)
    names = ", ".join(builtin_name(p) for p in builtin_paths())
    raise LessonError(
        [Problem(text, f"is neither a lesson file nor a built-in lesson; built-in: {names}")]
    )
