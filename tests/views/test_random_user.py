"""No sequence of user actions may crash the window or raise in a slot (issue 21).

A seeded random user (tests/views/random_user.py) drives the real main window — menus,
the configuration (1 and each maximum), typing junk, huge and negative numbers into the
editors, pasting, the stage, every dock shown and hidden and its own controls (lessons
and training among them), undo and redo — in a child process (a segfault fails the test
instead of killing the run): 150 actions for each of four seeds over three presets, two
runs at a time (about three minutes on a busy two-core machine, load 5). A run fails on
any uncaught exception, any painter warning, a crash, or a final trace that differs from
a fresh forward of the document's numbers. A dimension's "maximum" here is SUITE_LIMITS'
(n = 96, …: what stays interactive; one n = 4096 edit takes 10–70 s);
benchmarks/soak.py runs the same user at the true limits for tens of thousands of
actions. Every wait is for a run to end, never for a time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.views.random_user import describe, run_in_subprocess

ACTIONS = 150
# a stuck or endlessly slow window fails here rather than hanging the suite (not a wait:
# a run ends as soon as its actions are done)
TIMEOUT_S = 1200
RUNS = [("toy", 1), ("causal-6x16", 3), ("gqa", 2), ("toy", 4)]
AT_ONCE = 2  # child processes at a time (each is one event loop: one core at most)
# every kind of action the random user has (RandomUser.actions), each done at least once
# over the runs
KINDS = [
    "menu_action",
    "config_spin",
    "config_limit",
    "config_switch",
    "config_text",
    "type_in_cell",
    "paste_in_cell",
    "nudge_cell",
    "head_tab",
    "token_buttons",
    "stage_slider",
    "selectors",
    "stage_buttons",
    "stage_click",
    "stage_hover",
    "undo_redo",
    "toggle_dock",
    "dock_control",
    "learning_dock",
    "mouse_in_dock",
    "tool_window",
    "resize_window",
    "grab",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every run started at once, AT_ONCE at a time; each test waits for its own."""
    folder = tmp_path_factory.mktemp("random-user")
    pool = ThreadPoolExecutor(AT_ONCE)
    futures = {
        (preset, seed): pool.submit(
            run_in_subprocess,
            preset,
            seed,
            ACTIONS,
            str(folder / f"{preset}-{seed}.log"),
            TIMEOUT_S,
            suite_limits=True,
        )
        for preset, seed in RUNS
    }
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize(("preset", "seed"), RUNS)
def test_a_random_user_cannot_break_the_window(runs, preset, seed):
    result = runs[(preset, seed)].result()
    assert not result["failures"], describe(result)
    assert result["actions"] == ACTIONS, describe(result)


def test_the_runs_did_every_kind_of_action(runs):
    done: dict[str, int] = {}
    for future in runs.values():
        for kind, count in future.result().get("kinds", {}).items():
            done[kind] = done.get(kind, 0) + count
    assert sorted(set(KINDS) - set(done)) == [], done


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
