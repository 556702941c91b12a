"""`mha-gui models`, `heads`, `download` and `--model builtin` from the command line."""

from __future__ import annotations

import json

import pytest

from mha_gui.engine.models.builtin import builtin_model_path
from mha_gui.engine.teaching.head_roles import ROLES
from tests.cli.cli_helpers import run
from tests.engine.models.builders import SENTENCE, build_model
from tests.engine.models.fake_hub import COMMIT, FakeHub


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A Hugging Face cache with one GPT-2 in the hub's layout."""
    root = tmp_path / "hub"
    snapshot = root / "models--org--tiny" / "snapshots" / COMMIT
    build_model(snapshot, "gpt2")
    (root / "models--org--tiny" / "refs").mkdir()
    (root / "models--org--tiny" / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return snapshot


def test_models_json_lists_the_builtin_model_first_then_the_cache(capsys, cache):
    code, out, err = run(capsys, "models", "--json")
    assert code == 0, err
    entries = json.loads(out)
    first = entries[0]
    assert first["name"] == "builtin" and first["builtin"] is True
    assert first["family"] == "gpt2" and first["layers"] >= 2 and first["heads"] >= 2
    assert first["path"] == str(builtin_model_path())
    tiny = [e for e in entries if e["name"] == "org/tiny"]
    assert tiny and tiny[0]["path"] == str(cache) and tiny[0]["builtin"] is False
    assert tiny[0]["layers"] == 3 and tiny[0]["family"] == "gpt2"
    for e in entries:
        assert {"name", "path", "family", "layers", "heads", "builtin"} <= set(e)


def test_models_table_has_one_line_per_model(capsys, cache):
    code, out, _ = run(capsys, "models")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("builtin") and any(line.startswith("org/tiny") for line in lines)


def test_heads_json_on_the_probe_has_every_role_per_layer_and_head(capsys):
    code, out, err = run(
        capsys, "heads", "--model", "builtin", "--probe", "repeated", "--seed", 3, "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert set(data) >= {"tokens", "layers", "heads", "scores"}
    assert set(data["scores"]) == set(ROLES)
    for role in ROLES:
        grid = data["scores"][role]
        assert len(grid) == data["layers"] and all(len(row) == data["heads"] for row in grid)
    # the shipped model has a previous-token head and an induction head on this probe
    assert max(max(row) for row in data["scores"]["previous"]) >= 0.8
    assert (
        max(max(v for v in row if v is not None) for row in data["scores"]["induction"][1:]) >= 0.6
    )


def test_heads_table_on_a_text(capsys, tmp_path):
    build_model(tmp_path / "m", "gpt2")
    code, out, err = run(capsys, "heads", "--model", tmp_path / "m", "--text", SENTENCE)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["layer", "head"]
    assert len(lines) == 2 + 3 * 4  # 3 layers × 4 heads of the tiny GPT-2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["heads", "--model", "builtin"], "one of the arguments --text --token-ids --probe"),
        (["heads", "--model", "builtin", "--text", "the cat", "--seed", "1"], "--seed goes with"),
        (["heads", "--model", "/nonexistent/folder", "--text", "x"], "nonexistent"),
        (["heads", "--model", "builtin", "--probe", "mixed"], "invalid choice"),
    ],
)
def test_heads_refuses_bad_arguments_in_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("mha-gui: error:") and message in err and err.count("\n") == 1


def test_info_and_export_take_builtin(capsys, tmp_path):
    code, out, err = run(capsys, "info", "--model", "builtin", "--layer", 0, "--text", "mary runs")
    assert code == 0, err
    assert "source: builtin" in out or "classroom" in out
    target = tmp_path / "layer.json"
    code, _, err = run(
        capsys,
        "export",
        "--model",
        "builtin",
        "--layer",
        1,
        "--text",
        "the cat runs",
        "--out",
        target,
    )
    assert code == 0, err
    assert json.loads(target.read_text())["config"]["causal"] is True


@pytest.fixture
def tiny_hub(tmp_path, monkeypatch):
    """A local stand-in for the hub serving a tiny GPT-2 as org/tiny; an empty cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    build_model(src, "gpt2")
    with FakeHub() as hub:
        hub.add_folder("org/tiny", src)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        yield hub


def test_download_with_yes_fills_the_cache(capsys, tmp_path, tiny_hub):
    code, out, err = run(capsys, "download", "org/tiny", "--yes")
    assert code == 0, err
    assert "org/tiny (gpt2): 3 files" in out and "downloaded to" in out
    assert (
        tmp_path / "cache" / "models--org--tiny" / "snapshots" / COMMIT / "model.safetensors"
    ).is_file()


def test_download_never_happens_unasked(capsys, tmp_path, tiny_hub):
    code, out, err = run(capsys, "download", "org/tiny")  # stdin is not a terminal here
    assert code == 2 and "add --yes" in err
    snap = tmp_path / "cache" / "models--org--tiny" / "snapshots" / COMMIT
    assert not (snap / "model.safetensors").exists()


def test_download_of_an_unknown_repo_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        code, _, err = run(capsys, "download", "org/none", "--yes")
    assert code == 2 and err.count("\n") == 1 and "no public model 'org/none'" in err
