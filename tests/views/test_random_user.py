"""No sequence of user actions may crash the window or raise in a slot (issue 21).

A seeded random user (tests/views/random_user.py) drives the real main window — menus,
the configuration (1 and each maximum), typing into the editors, the stage, every dock
and its own controls, undo and redo — in a child process, a hundred actions for each of
three seeds (about a minute on a busy two-core machine: a toy action with its redraw
takes ~0.1–0.3 s there, a dimension at its maximum seconds). A run fails on any uncaught
exception, any painter warning, a crash, or a final trace that differs from a fresh
forward of the document's numbers. Every wait is for the window to be idle, never for a
time. benchmarks/soak.py runs the same user for tens of thousands of actions.
"""

from __future__ import annotations

import pytest

from tests.views.random_user import describe, run_in_subprocess

ACTIONS = 100
# a stuck or endlessly slow window fails here rather than hanging the suite (not a wait:
# a run ends as soon as its actions are done)
TIMEOUT_S = 1200

RUNS = [("toy", 1), ("toy", 4), ("causal-6x16", 3)]


@pytest.mark.parametrize(("preset", "seed"), RUNS)
def test_a_random_user_cannot_break_the_window(preset, seed, tmp_path):
    result = run_in_subprocess(preset, seed, ACTIONS, str(tmp_path / "actions.log"), TIMEOUT_S)
    assert not result["failures"], describe(result)
    assert result["actions"] == ACTIONS, describe(result)


def test_the_harness_reports_an_exception_a_painter_warning_and_a_crash(tmp_path):
    """The random user's own check: deliberate faults are each reported (the first two
    as they happen, on stderr, the segmentation fault as the child's end), so a green
    run means none happened."""
    log = str(tmp_path / "actions.log")
    result = run_in_subprocess("toy", 0, 4, log, TIMEOUT_S, inject="exception,painter,crash")
    assert [f["kind"] for f in result["failures"]] == ["crash"], describe(result)
    said = result["failures"][0]["text"]
    assert "FAILURE exception" in said and "ZeroDivisionError" in said
    assert "FAILURE qt" in said and "QPainter::end" in said
    assert "Segmentation fault" in said
