"""Lesson files (engine/lessons): the built-in lessons play, bad files get one clear
message naming file, step and field, and the step text is safe rich text. No Qt."""

from __future__ import annotations

import pytest

from mha_gui.engine.lessons import LessonError, check_lesson, evaluate, load_lesson, read_lesson
from mha_gui.engine.lessons.check import situation
from mha_gui.engine.lessons.format import MAX_BYTES, MAX_STEPS, MAX_TEXT
from mha_gui.engine.lessons.library import builtin_name, builtin_paths, read_builtin
from mha_gui.engine.lessons.markup import to_html, to_plain


def needs_model(path):
    """The heads lesson runs the built-in trained model (slower: its tests say so)."""
    lesson = read_builtin(path)
    return any(s.show.source and s.show.source.kind == "model" for s in lesson.steps)


def builtin_params():
    return [pytest.param(path, id=builtin_name(path)) for path in builtin_paths()]


MINIMAL = b"""
title = "T"
summary = "S"
[[step]]
title = "One"
text = "Hello"
[step.show]
preset = "toy"
"""


def problems(data: bytes | str, check=True) -> list[str]:
    if isinstance(data, str):
        data = data.encode()
    try:
        lesson = read_lesson(data, "f.toml")
        if check:
            check_lesson(lesson)
    except LessonError as exc:
        return [str(p) for p in exc.problems]
    return []


# ------------------------------------------------------------------ built-ins -------
def test_there_are_at_least_six_builtin_lessons_with_6_to_15_steps():
    paths = builtin_paths()
    assert len(paths) >= 6
    for path in paths:
        lesson = read_builtin(path)
        assert 6 <= len(lesson.steps) <= 15, path.name
        assert lesson.title and lesson.summary
        assert any(s.do is not None for s in lesson.steps), f"{path.name} asks nothing"


@pytest.mark.parametrize("path", builtin_params())
def test_builtin_lesson_checks_and_every_task_fails_before_and_passes_after_show_me(path):
    lesson = read_builtin(path)
    states = check_lesson(lesson)
    assert len(states) == len(lesson.steps)
    for state in states:
        task = state.step.do
        if task is None or task.tree is None:
            continue
        before = situation(state.session, state.view, state.session.run())
        after = situation(state.solved, state.solved_view, state.solved.run())
        assert not evaluate(task.tree, before), (path.name, state.step.title)
        assert evaluate(task.tree, after), (path.name, state.step.title)


def test_builtin_lessons_load_by_name_and_by_path():
    path = builtin_paths()[0]
    by_name = load_lesson(builtin_name(path))
    by_path = load_lesson(path)
    assert by_name.title == by_path.title and len(by_name.steps) == len(by_path.steps)
    assert by_name.name == builtin_name(path) and by_path.name is None


def test_an_unknown_lesson_name_lists_the_builtin_ones():
    with pytest.raises(LessonError, match="built-in: walkthrough"):
        load_lesson("no-such-lesson")


def test_the_first_lesson_follows_the_interactive_walkthrough():
    lesson = load_lesson("walkthrough")
    stages = [s.show.stage for s in lesson.steps if s.show.stage is not None]
    assert stages == sorted(stages) and len(set(stages)) == 7  # input … output, in order
    tasks = [s.do.condition for s in lesson.steps if s.do and s.do.condition]
    assert "head == 1" in tasks and "query == sat" in tasks


# ----------------------------------------------------------------- problems ---------
def test_a_minimal_lesson_is_fine():
    assert problems(MINIMAL) == []


@pytest.mark.parametrize(
    "change, expected",
    [
        ('colour = "red"', "f.toml: step 1 (“One”): field 'colour': unknown field"),
        ("title = 3", "field 'title': must be text, got int 3"),
    ],
)
def test_step_fields_are_named_with_the_step_number_and_title(change, expected):
    text = MINIMAL.decode().replace('text = "Hello"', f'text = "Hello"\n{change}')
    if change.startswith("title"):
        text = text.replace('title = "One"\n', "")
    found = problems(text)
    assert any(expected in p for p in found), found


@pytest.mark.parametrize(
    "show, field, words",
    [
        ('stage = "score"', "show.stage", "unknown stage 'score'; choose one of: input"),
        ("head = 2", "show.head", "head 2 does not exist: this layer has heads 0..1"),
        ('query = "dog"', "show.query", "no token 'dog'"),
        ("query = 9", "show.query", "out of range"),
        ('docks = ["nope"]', "show.docks[0]", "unknown view 'nope'"),
        ('weights_range = "max"', "show.weights_range", "unknown range"),
        ("head = -1", "show.head", "≥ 0"),
        ("stage = 3", "show.stage", "must be text"),
        ('session = "x.json"', "show", "give one of preset, session or model"),
    ],
)
def test_show_fields_that_do_not_exist_in_what_the_step_shows(show, field, words):
    found = problems(MINIMAL + f"{show}\n".encode())
    assert any(f"field '{field}'" in p and words in p for p in found), found
    assert all(p.startswith("f.toml: step 1 (“One”): ") for p in found)


@pytest.mark.parametrize(
    "point, field, words",
    [
        ('cells = ["A_0[the, dog]"]', "point.cells[0]", "no token 'dog'"),
        ('cells = ["A_5[the, cat]"]', "point.cells[0]", "heads 0..1"),
        ('cells = ["W[0, 0]"]', "point.cells[0]", "unknown matrix"),
        ('tokens = ["dog"]', "point.tokens[0]", "no token 'dog'"),
        ('panel = "A_7"', "point.panel", "does not exist"),
        ('panel = "banana"', "point.panel", "is not a panel"),
        ("callout = 1", "point.callout", "must be text"),
    ],
)
def test_point_fields_are_checked(point, field, words):
    found = problems(MINIMAL + f"[step.point]\n{point}\n".encode())
    assert any(f"field '{field}'" in p and words in p for p in found), found


DO = """
[step.do]
task = "Do it"
hint = "Like this"
"""


@pytest.mark.parametrize(
    "body, field, words",
    [
        (
            'condition = "A_0[the, sat] >>= 1"\n[step.do.show_me]\nhead = 1',
            "do.condition",
            "column",
        ),
        (
            'condition = "A_0[the, dog] > 0.5"\n[step.do.show_me]\nhead = 1',
            "do.condition",
            "no token 'dog'",
        ),
        (
            'condition = "stage == scoress"\n[step.do.show_me]\nstage = "scores"',
            "do.condition",
            "unknown stage",
        ),
        ('condition = "head == 1"', "do.show_me", "is missing"),
        ('condition = "head == 1"\n[step.do.show_me]\nhead = 0', "do.show_me", "still false"),
        ('condition = "head == 1"\n[step.do.show_me]\nhead = 5', "do.show_me.head", "heads 0..1"),
        (
            'condition = "causal"\n[step.do.show_me]\nconfig = { h_kv = 3 }',
            "do.show_me.config",
            "divide",
        ),
        (
            'condition = "causal"\n[step.do.show_me]\nconfig = { colour = 3 }',
            "do.show_me.config.colour",
            "unknown field",
        ),
        ('answer = "S_1[2, 9]"', "do.answer", "key 9 is out of range"),
        ('answer = "S_1[2, 1]"\ntolerance = -1', "do.tolerance", "≥ 0"),
        ('answer = "S_1[2, 1]"\ncondition = "causal"', "do", "exactly one"),
        (
            'condition = "causal"\n[step.do.show_me]\nvalues = [{ matrix = "W_Q", at = [0, 9, 0], value = 1 }]',
            "do.show_me.values[0].at",
            "is not a cell of W_Q",
        ),
        (
            'condition = "causal"\n[step.do.show_me]\nblock = [["the", "dog"]]',
            "do.show_me.block[0]",
            "no token 'dog'",
        ),
    ],
)
def test_tasks_are_checked_and_show_me_must_meet_the_condition(body, field, words):
    found = problems(MINIMAL + (DO + body + "\n").encode())
    assert any(f"field '{field}'" in p and words in p for p in found), found


def test_every_problem_is_reported_not_only_the_first():
    text = MINIMAL + b'stage = "nope"\nhead = "one"\nbanana = 1\n'
    found = problems(text)
    assert len(found) == 3
    with pytest.raises(LessonError, match=r"\(and 2 more problems\)"):
        read_lesson(text, "f.toml")


def test_lesson_level_problems():
    assert any(
        "field 'title': is missing" in p for p in problems(MINIMAL.replace(b'title = "T"\n', b""))
    )
    assert any("has no steps" in p for p in problems(b'title = "T"\nsummary = "S"\n'))
    assert any(
        "first step says what the lesson opens" in p
        for p in problems(MINIMAL.replace(b'preset = "toy"', b'stage = "input"'))
    )
    assert any("lesson version 1" in p for p in problems(b"version = 2\n" + MINIMAL))


def test_limits_on_size_counts_and_lengths():
    assert any("a lesson is at most" in p for p in problems(MINIMAL + b"#" * MAX_BYTES))
    many = MINIMAL + b'[[step]]\ntitle = "x"\ntext = "y"\n' * MAX_STEPS
    assert any(f"at most {MAX_STEPS}" in p for p in problems(many))
    long = MINIMAL.replace(b'"Hello"', b'"' + b"a" * (MAX_TEXT + 1) + b'"')
    assert any(f"at most {MAX_TEXT}" in p and "field 'text'" in p for p in problems(long))


def test_broken_files_are_one_message_not_a_traceback():
    assert problems(b"\xff\xfe title")[0].startswith("f.toml: is not UTF-8")
    assert problems(b'title = "unterminated')[0].startswith("f.toml: is not valid TOML")
    assert problems(b"step = 3\n")  # wrong type at the top


# ------------------------------------------------------------------- markup ---------
def test_step_text_is_escaped_then_typeset():
    html = to_html("Token <s> & **bold** *it* `W_Q` A_0 W_i^Q sqrt(d_k) d_model")
    assert "&lt;s&gt; &amp;" in html
    assert "<b>bold</b>" in html and "<i>it</i>" in html
    assert "<code>W_Q</code>" in html  # code keeps its underscore
    assert "A<sub>0</sub>" in html and "W<sub>i</sub><sup>Q</sup>" in html
    assert "√d<sub>k</sub>" in html and "d<sub>model</sub>" in html


def test_paragraphs_and_lists():
    html = to_html("First line\nsame paragraph\n\n- one\n- two\n\nLast")
    assert html == ("<p>First line same paragraph</p><ul><li>one</li><li>two</li></ul><p>Last</p>")
    assert to_plain("**a**  `b`\n*c*") == "a b c"


def test_no_html_survives_from_the_text():
    html = to_html('<script>alert(1)</script> <b onclick="x">')
    assert "<script>" not in html and "<b " not in html
