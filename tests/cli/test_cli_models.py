"""`--model DIR --layer L --text ...` on info, export (every format) and the window."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mha_gui.app
from mha_gui.engine.layer.session import load_session
from mha_gui.engine.models import open_layer
from tests.cli.cli_helpers import run
from tests.engine.models.builders import SENTENCE, build_model


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / "gpt2"
    build_model(folder, "gpt2")
    return folder


def test_info_names_the_source(capsys, gpt2):
    code, out, err = run(capsys, "info", "--model", gpt2, "--layer", 1, "--text", SENTENCE)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "source: gpt2 · layer 1 of 3"
    assert "d_model=24, h=4" in out and "causal=yes" in out and "biases=yes" in out
    assert "tokens: The ␣" in out and "␣cat" in out


def test_info_of_a_llama_layer_with_token_ids(capsys, tmp_path):
    build_model(tmp_path / "tiny-llama", "llama", tokenizer=False)
    code, out, err = run(
        capsys, "info", "--model", tmp_path / "tiny-llama", "--layer", -1, "--token-ids", "1,5,7"
    )
    assert code == 0, err
    assert "source: tiny-llama · layer 2 of 3" in out and "RoPE θ=10000" in out
    assert "tokens: #1 #5 #7" in out and "GQA" in out


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".gif", ".tex", ".npz", ".json"])
def test_export_every_format(capsys, gpt2, tmp_path, suffix):
    out = tmp_path / f"layer{suffix}"
    code, _, err = run(
        capsys, "export", "--model", gpt2, "--layer", 2, "--text", SENTENCE,
        "--stage", "weights", "--out", out,
    )  # fmt: skip
    assert code == 0, err
    assert out.stat().st_size > 0
    expected = open_layer(gpt2, 2, text=SENTENCE)
    if suffix == ".npz":
        arrays = np.load(out)
        assert np.array_equal(arrays["X"], expected.params.X)
        assert np.allclose(arrays["weights"], expected.run().weights)
    if suffix == ".json":
        session = load_session(out)
        assert session.source == "gpt2 · layer 2 of 3"
        assert np.array_equal(session.params.X, expected.params.X)
        assert json.loads(out.read_text())["view"]["stage"] == "weights"


def test_the_window_opens_on_the_layer(capsys, gpt2, monkeypatch):
    opened = {}
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(mha_gui.app, "run_app", lambda **kw: opened.update(kw) or 0)
    code, _, err = run(capsys, "--model", gpt2, "--layer", 0, "--text", SENTENCE)
    assert code == 0, err
    assert opened["session"].source == "gpt2 · layer 0 of 3"


def test_create_main_window_accepts_a_model_session(qtbot, gpt2):
    window = mha_gui.app.create_main_window(session=open_layer(gpt2, 1, text=SENTENCE))
    qtbot.addWidget(window)
    assert window.document.session.source == "gpt2 · layer 1 of 3"


ERRORS = [
    (["--layer", 9, "--text", "x"], "layer 9 is out of range: gpt2 has layers 0..2"),
    (["--layer", 0, "--text", "  "], "the text is empty"),
    (["--layer", 0], "either --text"),
    (["--layer", 0, "--text", "a", "--token-ids", "1"], "either --text"),
    (["--text", "a"], "--model needs --layer"),
    (["--layer", "one", "--text", "a"], "'one' is not a whole number"),
    (["--layer", 0, "--token-ids", "1,a"], "not a comma-separated list of token ids"),
    (["--layer", 0, "--token-ids", "999999"], "token id 999999 is out of range"),
    (["--layer", 0, "--text", "a", "--preset", "toy"], "not allowed with argument"),
]


@pytest.mark.parametrize(("argv", "message"), ERRORS)
@pytest.mark.parametrize("command", ["info", "export", "open"])
def test_errors_are_one_line_exit_2_and_write_nothing(
    capsys, gpt2, tmp_path, monkeypatch, command, argv, message
):
    monkeypatch.setattr(mha_gui.app, "run_app", lambda **kw: pytest.fail("no window"))
    out = tmp_path / "x.png"
    head = {"info": ["info"], "export": ["export", "--out", out], "open": []}[command]
    if command == "open" and "--preset" in argv:
        message = "give one of SESSION_FILE, --preset or --model"
    code, _, err = run(capsys, *head, "--model", gpt2, *argv)
    assert code == 2
    assert err.startswith("mha-gui: error: ") and err.count("\n") == 1, err
    assert message in err
    assert not out.exists()


def test_model_options_need_a_model_and_bad_folders_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "info", "--layer", 0, "--text", "a")
    assert code == 2 and "--layer, --text and --token-ids go with --model DIR" in err
    code, _, err = run(capsys, "info", "--model", tmp_path / "none", "--layer", 0, "--text", "a")
    assert code == 2 and "does not exist" in err
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    (tmp_path / "model.safetensors").write_bytes(b"\xff" * 20)
    code, _, err = run(capsys, "info", "--model", tmp_path, "--layer", 0, "--text", "a")
    assert code == 2 and "header length" in err and err.count("\n") == 1
