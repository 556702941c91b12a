"""Lessons: guided walkthroughs a teacher writes (TOML), the window plays and checks.

No Qt here, shared by the lesson player, `mha-gui lesson` and the handout: what a
lesson is (lesson.py), reading its TOML file (format.py, each field checked by
fields.py), the task conditions (their tree condition_syntax.py, their parser
condition_parser.py, their meaning conditions.py), the step text markup (markup.py),
the checks against the numbers each step opens (check.py) and the built-in lessons
(library.py).

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
from mha_gui.engine.lessons.condition_parser import parse_condition
from mha_gui.engine.lessons.conditions import Situation, evaluate
from mha_gui.engine.lessons.format import read_lesson
from mha_gui.engine.lessons.lesson import Lesson, LessonError, Problem, Step
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
