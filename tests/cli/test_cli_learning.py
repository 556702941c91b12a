"""`mha-gui train` and `mha-gui worksheet`: files written, reproducible worksheets, and
every bad input → exit 2, one line, nothing written."""

import shutil
import subprocess

import numpy as np
import pytest

from mha_gui.cli import main
from mha_gui.engine import Session, load_preset, load_session, save_session
from mha_gui.engine.teaching.exercises import make_exercise
from mha_gui.export.worksheet import plan_worksheets
from tests.cli.cli_helpers import run


def assert_refused(capsys, folder, *argv, match=""):
    before = sorted(p.name for p in folder.iterdir())
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mha-gui: error: "), err
    assert match in lines[0], lines[0]
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written, no temp file


# ------------------------------------------------------------------- train --------
def test_train_toy_head1_previous_writes_the_trained_session(capsys, tmp_path):
    out = tmp_path / "trained.json"
    code, text, err = run(
        capsys, "train", "--preset", "toy", "--head", 1, "--target", "previous", "--steps", 300,
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    losses = [float(line.split("loss ")[1].split()[0]) for line in text.splitlines()
              if line.startswith("step")]  # fmt: skip
    assert len(losses) == 11 and losses[-1] < 0.1 * losses[0]
    assert "plateau" not in text and f"wrote {out}" in text
    trained, toy = load_session(out), load_preset("toy")
    assert list(trained.run().weights[1].argmax(axis=1)) == [0, 0, 1, 2]
    np.testing.assert_array_equal(trained.params.W_Q[0], toy.params.W_Q[0])
    np.testing.assert_array_equal(trained.params.W_V, toy.params.W_V)
    assert trained.view.head == 1 and trained.view.stage == 3


def test_train_head0_reports_the_plateau_and_reinit_leaves_it(capsys, tmp_path):
    code, text, _ = run(
        capsys, "train", "--head", 0, "--target", "previous", "--out", tmp_path / "a.json"
    )
    assert code == 0 and "plateau: " in text and "--reinit SEED" in text
    code, text, _ = run(
        capsys, "train", "--head", 0, "--target", "previous", "--reinit", 3, "--optimizer",
        "sgd", "--out", tmp_path / "b.json",
    )  # fmt: skip
    assert code == 0 and "plateau" not in text
    assert "largest weight per row on keys [0, 0, 1, 2]" in text


def test_train_from_session_with_npy_target_and_token_target(capsys, tmp_path):
    session = tmp_path / "in.json"
    save_session(load_preset("toy"), session)
    target = tmp_path / "t.npy"
    np.save(target, np.eye(4))
    out = tmp_path / "out.json"
    code, text, err = run(
        capsys, "train", "--session", session, "--head", 1, "--target", target, "--steps", 50,
        "--lr", 0.1, "--out", out,
    )  # fmt: skip
    assert code == 0 and out.exists(), err
    assert "lr 0.1, 50 steps" in text
    code, _, err = run(
        capsys, "train", "--head", 1, "--target", "token:2", "--steps", 5, "--out", out
    )
    assert code == 0, err


def test_train_refusals(capsys, tmp_path):
    base = ("train", "--preset", "toy", "--head", 1)
    out = ("--out", tmp_path / "x.json")
    np.save(tmp_path / "wrong.npy", np.eye(3))
    np.save(tmp_path / "neg.npy", -np.eye(4))
    nan = np.eye(4)
    nan[1, 1] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    np.save(tmp_path / "upper.npy", np.ones((4, 4)))
    cases = [
        (("--target", "next"), "unknown target 'next'"),
        (("--target", "token"), "unknown target"),
        (("--target", tmp_path / "wrong.npy"), "shape (3, 3)"),
        (("--target", tmp_path / "neg.npy"), "negative"),
        (("--target", tmp_path / "nan.npy"), "finite"),
        (("--target", tmp_path / "upper.npy", "--causal"), "cannot see key 1"),
        (("--target", tmp_path / "missing.npy"), "does not exist"),
        (("--target", "previous", "--steps", 0), "--steps 0"),
        (("--target", "previous", "--steps", -5), "--steps -5"),
        (("--target", "previous", "--steps", "ten"), "not a whole number"),
        (("--target", "previous", "--lr", 0), "--lr 0"),
        (("--target", "previous", "--lr", -0.1), "--lr"),
        (("--target", "previous", "--lr", "nan"), "--lr nan"),
        (("--target", "previous", "--lr", "inf"), "--lr inf"),
        (("--target", "previous", "--lr", 1e12, "--optimizer", "sgd"), "diverged"),
    ]
    for extra, match in cases:
        assert_refused(capsys, tmp_path, *base, *extra, *out, match=match)
    assert_refused(
        capsys, tmp_path, "train", "--head", 2, "--target", "self", *out, match="--head 2"
    )
    assert_refused(
        capsys, tmp_path, "train", "--head", 0, "--target", "self", "--out", tmp_path / "x.pdf",
        match="must end in .json",
    )  # fmt: skip


# --------------------------------------------------------------- worksheet --------
def pdf_text(path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_worksheet_same_seed_same_worksheet(capsys, tmp_path):
    a, b, c = (tmp_path / f"{k}.pdf" for k in "abc")
    args = ("worksheet", "--preset", "toy", "--stage", "weights", "--blanks", 4)
    assert run(capsys, *args, "--seed", 7, "--out", a)[0] == 0
    assert run(capsys, *args, "--seed", 7, "--out", b)[0] == 0
    assert run(capsys, *args, "--seed", 8, "--out", c)[0] == 0
    assert a.read_bytes()[:5] == b"%PDF-" and a.stat().st_size > 1000
    # the cells come from the engine: same seed, same cells; another seed, others
    toy = load_preset("toy")
    assert make_exercise(toy, "weights", 4, 7).cells != make_exercise(toy, "weights", 4, 8).cells
    if shutil.which("pdftotext"):
        ta, tb, tc = pdf_text(a), pdf_text(b), pdf_text(c)
        assert ta == tb and ta != tc
        assert "Answer key" in ta and "softmax(" in ta
        for cell in make_exercise(toy, "weights", 4, 7).cells:
            assert f"{cell.name} = " in ta  # the key lists every blank, by its tokens


def test_worksheet_students_and_keys_at_the_end(capsys, tmp_path):
    out = tmp_path / "class.pdf"
    code, text, err = run(
        capsys, "worksheet", "--stage", "scores", "--blanks", 3, "--seed", 5, "--students", 3,
        "--out", out,
    )  # fmt: skip
    assert code == 0 and "seeds 5–7" in text, err
    sheets = plan_worksheets(load_preset("toy"), "scores", 3, 5, 3)
    assert [s.exercise.seed for s in sheets] == [5, 6, 7]
    assert len({tuple(c.key for c in s.exercise.cells) for s in sheets}) == 3
    if shutil.which("pdftotext"):
        pages = pdf_text(out).split("\f")
        pages = [p for p in pages if p.strip()]
        assert len(pages) == 6
        assert all("Answer key" not in p for p in pages[:3])
        assert all("Answer key" in p for p in pages[3:])
        assert "worksheet 2 of 3 · seed 6" in pages[4]


def test_worksheet_every_stage_and_a_session(capsys, tmp_path):
    session = tmp_path / "s.json"
    save_session(load_preset("gqa"), session)
    for stage in ("input", "projections", "scores", "weights", "mixing", "concat", "output"):
        out = tmp_path / f"{stage}.pdf"
        code, _, err = run(
            capsys, "worksheet", "--session", session, "--stage", stage, "--blanks", 3,
            "--seed", 1, "--out", out,
        )  # fmt: skip
        assert code == 0 and out.exists(), err


def test_worksheet_refusals(capsys, tmp_path):
    base = ("worksheet", "--preset", "toy", "--out", tmp_path / "w.pdf")
    cases = [
        (("--stage", "softmax", "--blanks", 2, "--seed", 1), "unknown stage 'softmax'"),
        (("--stage", "weights", "--blanks", 0, "--seed", 1), "--blanks 0"),
        (("--stage", "weights", "--blanks", -1, "--seed", 1), "--blanks -1"),
        (("--stage", "weights", "--blanks", 33, "--seed", 1), "only 32 cells"),
        (("--stage", "weights", "--blanks", 2, "--seed", 1, "--students", 0), "--students 0"),
        (("--stage", "weights", "--blanks", 2, "--seed", -3), "--seed -3"),
        (("--stage", "weights", "--blanks", 2), "--seed"),
    ]
    for extra, match in cases:
        assert_refused(capsys, tmp_path, *base, *extra, match=match)
    assert_refused(
        capsys, tmp_path, "worksheet", "--preset", "bert-base", "--stage", "weights",
        "--blanks", 2, "--seed", 0, "--out", tmp_path / "w.pdf", match="up to 24×16",
    )  # fmt: skip
    assert_refused(
        capsys, tmp_path, "worksheet", "--stage", "weights", "--blanks", 2, "--seed", 0,
        "--out", tmp_path / "w.png", match="must end in .pdf",
    )  # fmt: skip


@pytest.mark.parametrize("command", ["train", "worksheet"])
def test_help_lists_the_subcommands(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--out" in capsys.readouterr().out


def test_worksheet_plan_operands_and_greyed_cells():
    toy = load_preset("toy")
    causal = Session(toy.config.with_changes(causal=True), toy.tokens, toy.params)
    sheet = plan_worksheets(causal, "projections", 6, 1)[0]
    assert sheet.given[0].title == "X" and not any(t.muted for t in sheet.given + sheet.fill)
    sheet = plan_worksheets(causal, "weights", 3, 1)[0]
    assert {t.title for t in sheet.given} <= {"S_0", "S_1"}
    assert all(len(t.muted) == 6 for t in sheet.given + sheet.fill)  # 4·3/2 blocked pairs
    boxes = sorted(n for t in sheet.fill for n in t.boxes.values())
    assert boxes == [1, 2, 3] and len(sheet.key) == 3
    roped = Session(toy.config.with_changes(rope=True), toy.tokens, toy.params)
    sheet = plan_worksheets(roped, "scores", 2, 0)[0]
    assert all("after RoPE" in t.title for t in sheet.given)
    # with RoPE the projections stage has rotated panels too: a worksheet can blank them
    sheet = plan_worksheets(roped, "projections", 40, 0)[0]
    assert {"Q̃_0", "K̃_1"} <= {t.title for t in sheet.fill}
    # a rotated blank comes with what it is computed from: the projection and the angles
    given = {t.title for t in sheet.given}
    assert {"Q_0", "K_1"} <= given and any(t.startswith("angle m·ω_j") for t in given)
