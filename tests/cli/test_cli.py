"""The command line: every subcommand, and every bad input → exit 2, one line, no file."""

import json
import subprocess
import sys

import numpy as np
import pytest

from mha_gui.engine import PRESETS, load_preset, load_session, save_session
from tests.cli.cli_helpers import run


def test_presets_lists_every_preset_one_line_each(capsys):
    code, out, _ = run(capsys, "presets")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == len(PRESETS)
    for name, line in zip(PRESETS, lines, strict=True):
        assert line.startswith(name) and ("d_model" in line or "seed" in line)


def test_info_toy_shapes_parameters_flops(capsys):
    code, out, _ = run(capsys, "info", "--preset", "toy")
    assert code == 0
    assert "parameters: 64" in out
    for sym in ("X ", "W_i^Q", "Q_i", "K_i", "V_i", "S_i", "A_i", "Z_i", "H ", "Y "):
        assert sym in out
    assert "attention matrix entries h·n²: 32" in out
    assert "projections" in out and "384" in out  # 2·n·d_model·(3·h·d_k) = 2·4·4·12


def test_info_gqa_and_session_and_random(capsys, tmp_path):
    code, out, _ = run(capsys, "info", "--preset", "gqa")
    assert code == 0 and out.startswith("GQA") and "K_g" in out
    code, out, _ = run(
        capsys,
        "info",
        "--preset",
        "random",
        "--seed",
        "2",
        "--tokens",
        "7",
        "--heads",
        "4",
        "--d-model",
        "8",
    )
    assert code == 0 and "n=7 tokens" in out and "h=4" in out
    path = tmp_path / "s.json"
    assert run(capsys, "export", "--preset", "mqa", "--out", str(path))[0] == 0
    code, out, _ = run(capsys, "info", "--session", str(path))
    assert code == 0 and out.startswith("MQA")


def test_export_json_keeps_view_and_causal(capsys, tmp_path):
    path = tmp_path / "s.json"
    code, _, _ = run(
        capsys,
        "export",
        "--preset",
        "toy",
        "--causal",
        "--stage",
        "weights",
        "--head",
        "1",
        "--query",
        "2",
        "--out",
        str(path),
    )
    assert code == 0
    s = load_session(path)
    assert s.config.causal and (s.view.stage, s.view.head, s.view.query) == (3, 1, 2)
    assert json.loads(path.read_text())["format"] == "mha-gui-session"


@pytest.mark.parametrize("switch", [["--causal"], ["--rope"], ["--causal", "--rope-theta", "500"]])
def test_a_switch_keeps_the_session_it_changes(capsys, tmp_path, switch):
    """--causal and --rope change the config only: tokens, numbers, view, mask and source
    (where the numbers came from) stay as the file has them."""
    session = load_preset("toy")
    session.source = "gpt2 · layer 5 of 12"
    session.mask = np.eye(4, k=1, dtype=bool)
    session.view.head, session.view.query = 1, 3
    saved, out = tmp_path / "s.json", tmp_path / "out.json"
    save_session(session, saved)
    code, text, _ = run(capsys, "info", "--session", saved, *switch)
    assert code == 0 and text.startswith("source: gpt2 · layer 5 of 12\n")
    assert run(capsys, "export", "--session", saved, *switch, "--out", out)[0] == 0
    again = load_session(out)
    assert again.source == session.source and again.tokens == session.tokens
    np.testing.assert_array_equal(again.mask, session.mask)
    np.testing.assert_array_equal(again.params.W_Q, session.params.W_Q)
    assert again.config.causal == ("--causal" in switch)
    assert again.config.rope == ("--causal" not in switch or "--rope-theta" in switch)


def test_export_npz_matches_engine(capsys, tmp_path):
    path = tmp_path / "a.npz"
    assert run(capsys, "export", "--preset", "causal-6x16", "--out", str(path))[0] == 0
    with np.load(path) as d:
        assert np.array_equal(d["output"], load_preset("causal-6x16").run().output)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["info", "--preset", "nope"], "unknown preset"),
        (["info", "--session", "missing.json"], "does not exist"),
        (["info", "--preset", "toy", "--seed", "3"], "only go with --preset random"),
        (["info", "--preset", "random", "--tokens", "0"], "at least 1"),
        (["info", "--preset", "random", "--tokens", "x"], "whole number"),
        (["export", "--preset", "toy"], "--out"),
        (["export", "--out", "OUT/x.docx"], "suffix"),
        (["export", "--stage", "dance", "--out", "OUT/x.json"], "unknown stage"),
        (["export", "--head", "2", "--out", "OUT/x.json"], "--head 2 is out of range"),
        (["export", "--query", "9", "--out", "OUT/x.npz"], "--query 9 is out of range"),
        (["export", "--handout", "--out", "OUT/x.png"], "--handout"),
        (["export", "--out", "OUT/missing-dir/x.json"], "does not exist"),
        (["export", "--theme", "pink", "--out", "OUT/x.png"], "invalid choice"),
        (["frobnicate"], "unrecognized"),
        (["--preset", "nope"], "unknown preset"),
        (["missing-session.json"], "does not exist"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_file(capsys, tmp_path, argv, words):
    argv = [a.replace("OUT", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("mha-gui: error: ") and err.count("\n") == 1, err
    assert words in err
    assert list(tmp_path.iterdir()) == []


def test_bad_session_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "mha-gui-session", "version": 99}')
    code, _, err = run(capsys, "info", "--session", str(bad))
    assert code == 2 and "version" in err and err.count("\n") == 1


def test_python_dash_m_entry_point_and_no_traceback(tmp_path):
    ok = subprocess.run(
        [sys.executable, "-m", "mha_gui", "presets"], capture_output=True, text=True
    )
    assert ok.returncode == 0 and "toy" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "mha_gui", "export", "--out", str(tmp_path / "x.bmp")],
        capture_output=True,
        text=True,
    )
    assert (
        bad.returncode == 2
        and "Traceback" not in bad.stderr
        and bad.stderr.startswith("mha-gui: error:")
    )


@pytest.mark.parametrize("suffix", [".json", ".npz", ".png"])
def test_export_onto_an_existing_folder_names_it(capsys, tmp_path, suffix):
    (tmp_path / f"out{suffix}").mkdir()
    code, _, err = run(capsys, "export", "--out", str(tmp_path / f"out{suffix}"))
    assert code == 2 and "is a folder" in err and err.count("\n") == 1
    assert ".part" not in err
    assert [p.name for p in tmp_path.iterdir()] == [f"out{suffix}"]


def test_export_into_a_folder_without_write_permission(capsys, tmp_path, monkeypatch):
    import tempfile

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    code, _, err = run(capsys, "export", "--out", str(tmp_path / "s.json"))
    assert code == 2 and err.count("\n") == 1
    assert "cannot write in folder" in err and "Permission denied" in err


def test_export_replaces_an_existing_file(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_text("old")
    path.chmod(0o640)
    assert run(capsys, "export", "--preset", "gqa", "--out", str(path))[0] == 0
    assert load_session(path).config.h == 8 and (path.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_opening_the_window_without_a_display_is_one_line(capsys, monkeypatch):
    import mha_gui.app

    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(mha_gui.app, "run_app", lambda **kw: pytest.fail("Qt would abort"))
    code, _, err = run(capsys)
    assert code == 2 and "no display" in err and err.count("\n") == 1


def test_x11_without_qt_system_libraries_is_one_clear_line(capsys, monkeypatch):
    import ctypes

    def refuse(path, mode=0):
        raise OSError(
            "libxcb-icccm.so.4: cannot open shared object file: No such file or directory"
        )

    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr(ctypes, "CDLL", refuse)
    code, _, err = run(capsys, "--preset", "toy")
    assert code == 2 and err.count("\n") == 1
    assert "libxcb-icccm.so.4 is missing" in err and "apt-get install" in err


def test_export_colormap_changes_the_figure(capsys, tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert run(capsys, "export", "--stage", "scores", "--out", str(a))[0] == 0
    assert run(capsys, "export", "--stage", "scores", "--colormap", "grey", "--out", str(b))[0] == 0
    assert a.read_bytes() != b.read_bytes()
    code, _, err = run(capsys, "export", "--colormap", "rainbow", "--out", str(tmp_path / "c.png"))
    assert code == 2 and "invalid choice" in err
