"""Lessons: guided walkthroughs a teacher writes (TOML), the window plays and checks.

No Qt here: the format (format.py), the task conditions (conditions.py), the step text
markup (markup.py), the checks against the numbers each step opens (check.py) and the
built-in lessons (library.py) are shared by the lesson player, `mha-gui lesson` and the
handout.

    from mha_gui.engine.lessons import load_lesson, check_lesson
    lesson = load_lesson("walkthrough")     # LessonError: file, step, field, reason
    states = check_lesson(lesson)           # what each step shows, Show me applied
"""

from mha_gui.engine.lessons.check import (
    KNOWN_DOCKS,
    StepState,
    apply_show_me,
    check_lesson,
    open_source,
    situation,
)
from mha_gui.engine.lessons.conditions import Situation, evaluate, parse_condition
from mha_gui.engine.lessons.format import Lesson, LessonError, Problem, Step, read_lesson
from mha_gui.engine.lessons.library import Entry, builtin_lessons, load_lesson

__all__ = [
    "KNOWN_DOCKS",
    "Entry",
    "Lesson",
    "LessonError",
    "Problem",
    "Situation",
    "Step",
    "StepState",
    "apply_show_me",
    "builtin_lessons",
    "check_lesson",
    "evaluate",
    "load_lesson",
    "open_source",
    "parse_condition",
    "read_lesson",
    "situation",
]
