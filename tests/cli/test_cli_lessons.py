"""`mha-gui lessons` and `mha-gui lesson FILE|NAME --check`: the built-ins are listed and
pass; mutated built-in files (byte flips, truncation, wrong types, unknown fields, steps
pointing at tokens or heads that do not exist) are refused with one line and exit 2 —
never a traceback."""

from __future__ import annotations

import random
import re

import pytest

from mha_gui.engine.lessons.library import builtin_lessons, builtin_name, builtin_paths
from tests.cli.cli_helpers import run
from tests.engine.lessons.test_lessons import builtin_params, needs_model

PLAYABLE = [p for p in builtin_paths() if not needs_model(p)]


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mha-gui: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_lessons_lists_every_builtin_one_line_each(capsys):
    code, out, err = run(capsys, "lessons")
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    entries = builtin_lessons()
    assert len(lines) == len(entries) >= 6
    for line, e in zip(lines, entries, strict=True):
        assert line.split()[0] == e.name and e.title in line and f"{e.steps} steps" in line


@pytest.mark.parametrize("path", builtin_params())
def test_check_of_every_builtin_lesson_says_ok(capsys, path):
    code, out, err = run(capsys, "lesson", builtin_name(path), "--check")
    assert (code, err) == (0, "")
    assert out.startswith(f"ok: {builtin_name(path)}: ") and out.count("\n") == 1


def test_check_of_a_file_by_path(capsys, tmp_path):
    f = tmp_path / "mine.toml"
    f.write_bytes(PLAYABLE[0].read_bytes())
    code, out, _err = run(capsys, "lesson", f, "--check")
    assert code == 0 and out.startswith(f"ok: {f}: ")


def refused(capsys, tmp_path, data: bytes, name="mutant.toml") -> tuple[int, str]:
    f = tmp_path / name
    f.write_bytes(data)
    code, out, err = run(capsys, "lesson", f, "--check")
    if code == 0:
        assert err == "" and out.startswith("ok: ")
        return 0, ""
    assert code == 2 and out == ""
    return code, one_error_line(err)


def test_byte_flips_and_truncations_never_give_a_traceback(capsys, tmp_path):
    rng = random.Random(7)
    refusals = total = 0
    for path in PLAYABLE:
        data = path.read_bytes()
        for _ in range(40):
            b = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
            code, line = refused(capsys, tmp_path, bytes(b))
            total += 1
            refusals += code == 2
            if code == 2:
                assert str(tmp_path / "mutant.toml") in line
        for _ in range(15):
            cut = rng.randrange(1, len(data))
            code, _line = refused(capsys, tmp_path, data[:cut])
            total += 1
            refusals += code == 2
    # prose has room for a flipped letter; most flips land in a key, a value or a quote
    assert refusals > total * 0.3, (refusals, total)


def test_truncation_inside_a_string_is_refused(capsys, tmp_path):
    data = PLAYABLE[0].read_bytes()
    cut = data.index(b'text = """') + 20
    code, line = refused(capsys, tmp_path, data[:cut])
    assert code == 2 and "is not valid TOML" in line


def step_text(data: bytes, k: int) -> tuple[int, int]:
    """Byte range of the k-th [[step]] table (0-based)."""
    starts = [m.start() for m in re.finditer(rb"^\[\[step\]\]", data, re.M)]
    end = starts[k + 1] if k + 1 < len(starts) else len(data)
    return starts[k], end


MUTATIONS = [
    # (what to find in a step, what to put instead, the field the message must name)
    (rb'stage = "(\w+)"', b'stage = "stages"', "stage"),
    (rb'stage = "(\w+)"', b"stage = 4", "stage"),
    (rb"head = (\d+)", b"head = 99", "head"),
    (rb"head = (\d+)", b'head = "one"', "head"),
    (rb'title = "([^"]+)"', b'title = "x"\ncolour = "red"', "colour"),
    (rb'title = "([^"]+)"', b"title = 12", "title"),
    (rb'query = "(\w+)"', b'query = "nobody"', "query"),
    (rb'callout = "([^"]+)"', b'callout = ["a"]', "point.callout"),
    (rb'cells = \["(\w+)_(\d+)\[', b'cells = ["A_42[', "point.cells[0]"),
    (rb'condition = "([^"]+)"', b'condition = "A_9[0, 0] > 1"', "do.condition"),
    (rb'condition = "([^"]+)"', b'condition = "A_0[zebra, 0] > 1"', "do.condition"),
    (rb'condition = "([^"]+)"', b'condition = "head === 1"', "do.condition"),
    (rb'answer = "([^"]+)"', b'answer = "S_0[0, 99]"', "do.answer"),
    (rb'hint = "([^"]+)"', b"hint = false", "do.hint"),
    (rb"\[step\.do\.show_me\]", b"[step.do.show_me]\nteleport = true", "do.show_me.teleport"),
    (rb'preset = "([\w-]+)"', b'preset = "no-such-preset"', "show.preset"),
    (rb'docks = \["', b'docks = ["nowhere", "', "show.docks[0]"),
]


@pytest.mark.parametrize("find, put, field", MUTATIONS, ids=[m[2] for m in MUTATIONS])
def test_targeted_mutations_are_refused_naming_the_step_and_field(
    capsys, tmp_path, find, put, field
):
    tried = 0
    for path in PLAYABLE:
        data = path.read_bytes()
        steps = len(re.findall(rb"^\[\[step\]\]", data, re.M))
        for k in range(steps):
            lo, hi = step_text(data, k)
            m = re.search(find, data[lo:hi])
            if m is None:
                continue
            mutated = data[: lo + m.start()] + put + data[lo + m.end() :]
            code, line = refused(capsys, tmp_path, mutated)
            assert code == 2, (path.name, k + 1, put)
            # the step by number, and by title unless the title itself is what broke
            named = f": step {k + 1}: " if field == "title" else f": step {k + 1} (“"
            assert named in line, line
            assert re.search(rf"field '(show\.|do\.show_me\.)?{re.escape(field)}'", line), line
            tried += 1
    assert tried, f"no built-in lesson has {find!r} to mutate"


def test_a_non_lesson_argument_and_missing_options(capsys, tmp_path):
    code, _out, err = run(capsys, "lesson", "walkthrough")
    assert code == 2 and "--check" in one_error_line(err)
    code, _out, err = run(capsys, "lesson", tmp_path / "none.toml", "--check")
    assert code == 2 and "cannot be read" in one_error_line(err)
    code, _out, err = run(capsys, "lesson", "walkthrough", "--handout", tmp_path / "x.png")
    assert code == 2 and "must end in .pdf" in one_error_line(err)
    assert list(tmp_path.iterdir()) == []


def test_open_on_a_lesson_refuses_a_bad_lesson_before_any_window(capsys, tmp_path):
    code, _out, err = run(capsys, "--lesson", "no-such-lesson")
    assert code == 2 and "neither a lesson file" in one_error_line(err)
    code, _out, err = run(capsys, "--lesson", "walkthrough", "--preset", "toy")
    assert code == 2 and "--lesson" in one_error_line(err)


# ------------------------------------------------------------------ handout --------
def pdf_pages(path) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", path.read_bytes()))


@pytest.mark.parametrize("name", ["walkthrough", "masks"])
def test_handout_has_a_page_per_step_and_an_answer_page(capsys, tmp_path, name):
    out = tmp_path / f"{name}.pdf"
    code, text, err = run(capsys, "lesson", name, "--handout", out)
    assert (code, err) == (0, "")
    steps = next(e.steps for e in builtin_lessons() if e.name == name)
    assert pdf_pages(out) == steps + 1
    assert text.startswith(f"wrote {out}: {steps + 1} pages, one per step of ")
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no temporary file left


def test_handout_page_renders_to_a_printable_png(capsys, tmp_path):
    import shutil
    import subprocess

    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    from PIL import Image

    out = tmp_path / "w.pdf"
    assert run(capsys, "lesson", "walkthrough", "--handout", out)[0] == 0
    subprocess.run(
        ["pdftoppm", "-r", "50", "-png", "-f", "3", "-l", "3", str(out), str(tmp_path / "p")],
        check=True,
    )
    (png,) = tmp_path.glob("p*.png")
    image = Image.open(png).convert("RGB")
    assert image.width < image.height  # portrait A4
    colours = image.getcolors(maxcolors=1 << 20)
    assert len(colours) > 50  # text and a coloured heatmap, not a blank page
    white = max(colours)[1]
    assert white == (255, 255, 255)  # printed on white


def test_handout_of_a_bad_lesson_writes_nothing(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'title = "x"\nsummary = "y"\n[[step]]\ntitle = "a"\ntext = "b"\n[step.show]\npreset = "nope"\n'
    )
    code, _out, err = run(capsys, "lesson", bad, "--handout", tmp_path / "h.pdf")
    assert code == 2 and "field 'show.preset'" in one_error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]
    code, _out, err = run(capsys, "lesson", "walkthrough", "--handout", tmp_path / "no" / "h.pdf")
    assert code == 2 and "does not exist" in one_error_line(err)


def test_handout_steps_without_a_task_carry_a_worked_example(capsys, tmp_path, rich_texts):
    """A step that only shows gets the followed query's worked example in the room below
    its figure; a step with a task does not (its answer would be printed beside it)."""
    from mha_gui.engine.lessons.format import read_lesson_file

    drawn = rich_texts
    out = tmp_path / "w.pdf"
    assert run(capsys, "lesson", "walkthrough", "--handout", out)[0] == 0
    path = next(p for p in builtin_paths() if builtin_name(p) == "walkthrough")
    lesson = read_lesson_file(path)
    titles = [f"{step.number}. {step.title}" for step in lesson.steps]
    pages: dict[str, list[str]] = {}
    page = None
    for text in drawn:
        page = text if text in titles else page
        if page is not None:
            pages.setdefault(page, []).append(text)
    examples = {True: 0, False: 0}
    for step, title in zip(lesson.steps, titles, strict=True):
        has = any(t.startswith("Worked example · ") for t in pages[title])
        examples[step.do is None] += has
        if step.do is not None:
            assert not has, title  # a task's page keeps its answer to itself
    assert examples[True] >= 3 and examples[False] == 0
