"""Where a student is in a lesson and which tasks they passed, kept per lesson in
QSettings so that the next session starts where this one stopped ("Reset progress"
forgets it)."""

from __future__ import annotations

import hashlib

from mha_gui.engine.lessons import Lesson
from mha_gui.views.settings.display_settings import qsettings


def progress_key(lesson: Lesson) -> str:
    """The QSettings group of a lesson's progress: its built-in name, or its file's path."""
    if lesson.name:
        return f"lessons/{lesson.name}"
    digest = hashlib.sha1(str(lesson.folder or "").encode() + lesson.file.encode()).hexdigest()
    return f"lessons/file-{digest[:12]}"


def load_progress(lesson: Lesson) -> tuple[int, set[int]]:
    """(the step to start at, 0-based and in range; the step numbers passed)."""
    s = qsettings()
    key = progress_key(lesson)
    try:
        step = int(s.value(f"{key}/step", 0))
    except (TypeError, ValueError):
        step = 0
    passed = s.value(f"{key}/passed", [])
    if isinstance(passed, str):  # QSettings gives a one-entry list back as its entry
        passed = [passed] if passed else []
    numbers = {int(p) for p in passed if str(p).isdigit()}
    return max(0, min(step, len(lesson.steps) - 1)), numbers


def save_progress(lesson: Lesson, index: int, passed: set[int]) -> None:
    s = qsettings()
    key = progress_key(lesson)
    s.setValue(f"{key}/step", index)
    s.setValue(f"{key}/passed", [str(p) for p in sorted(passed)])


def forget_progress(lesson: Lesson) -> None:
    qsettings().remove(progress_key(lesson))
