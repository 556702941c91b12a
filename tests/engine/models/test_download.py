"""Downloads from a local stand-in for the hub: only the files the app reads, into the
standard cache layout, with progress; Cancel and every failure leave no model that looks
complete, and every failure is one sentence."""

from __future__ import annotations

import socket

import pytest

from mha_gui.engine.models import discover_models, open_layer
from mha_gui.engine.models.download import (
    DownloadCancelled,
    DownloadError,
    check_repo_id,
    download,
    plan_download,
)
from tests.engine.models.builders import SENTENCE, build_model
from tests.engine.models.fake_hub import COMMIT, FakeHub


@pytest.fixture
def hub(tmp_path, monkeypatch):
    cache = tmp_path / "hub-cache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with FakeHub() as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        folder = tmp_path / "gpt2-src"
        folder.mkdir()
        build_model(folder, "gpt2")
        (folder / "pytorch_model.bin").write_bytes(b"pickled weights are never fetched")
        (folder / "README.md").write_text("a model card")
        fake.add_folder("org/tiny-gpt2", folder)
        fake.cache = cache
        yield fake


def test_plan_lists_only_what_the_app_reads_with_sizes(hub):
    plan = plan_download("org/tiny-gpt2")
    names = [name for name, _ in plan.files]
    assert names == ["config.json", "tokenizer.json", "model.safetensors"]
    sizes = dict(plan.files)
    assert sizes["model.safetensors"] == len(hub.repos["org/tiny-gpt2"]["model.safetensors"])
    assert plan.total_bytes == sum(sizes.values())
    assert plan.model_type == "gpt2" and plan.commit == COMMIT


def test_download_fills_the_cache_and_the_model_opens(hub):
    plan = plan_download("org/tiny-gpt2")
    seen = []
    folder = download(plan, progress=lambda done, total: seen.append((done, total)))
    assert folder == hub.cache / "models--org--tiny-gpt2" / "snapshots" / COMMIT
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    ]
    assert seen[-1] == (plan.total_bytes, plan.total_bytes)
    assert all(a <= b for (a, _), (b, _) in zip(seen, seen[1:], strict=False))
    fetched = [r for r in hub.requests if r.startswith("GET") and "/resolve/" in r]
    assert not any("pytorch_model.bin" in r or "README" in r for r in fetched)
    found = [m for m in discover_models() if m.name == "org/tiny-gpt2"]
    assert found and found[0].supported
    session = open_layer(folder, 0, text=SENTENCE)
    assert session.config.n > 1


def test_cancel_keeps_nothing_that_looks_like_a_model(hub):
    plan = plan_download("org/tiny-gpt2")
    calls = []

    def cancelled():
        calls.append(1)
        return len(calls) > 3  # after the config and part of the way

    with pytest.raises(DownloadCancelled):
        download(plan, cancelled=cancelled)
    assert not (hub.cache / "models--org--tiny-gpt2" / "snapshots" / COMMIT).exists()
    assert [m for m in discover_models() if m.name == "org/tiny-gpt2"] == []
    assert list((hub.cache / "models--org--tiny-gpt2" / "blobs").glob("*.incomplete")) == []


def test_unknown_repo_is_one_sentence(hub):
    with pytest.raises(DownloadError, match="no public model 'org/nothing'") as err:
        plan_download("org/nothing")
    assert "\n" not in str(err.value)


def _hosted(hub, folder, config_json: str, weights: str, size: int = 1) -> str:
    """A repo of the stand-in hub holding config.json, tokenizer.json and `weights`."""
    folder.mkdir()
    (folder / "config.json").write_text(config_json)
    (folder / "tokenizer.json").write_text("{}")
    (folder / weights).write_bytes(b"x" * size)
    repo = f"org/{folder.name}"
    hub.add_folder(repo, folder)
    return repo


def test_unsupported_family_is_refused_before_the_weights(hub, tmp_path):
    repo = _hosted(hub, tmp_path / "t5", '{"model_type": "t5"}', "model.safetensors", 64)
    with pytest.raises(DownloadError, match="is t5 model; mha-gui reads"):
        plan_download(repo)
    assert not any("model.safetensors" in r for r in hub.requests)


@pytest.mark.parametrize("model_type", ["{}", "[1]", "null", "42"])
def test_a_config_whose_model_type_is_not_text_is_refused(hub, tmp_path, model_type):
    config = '{"model_type": ' + model_type + "}"
    repo = _hosted(hub, tmp_path / "odd", config, "model.safetensors")
    with pytest.raises(DownloadError, match="unknown kind of model"):
        plan_download(repo)


def test_pickle_only_repo_is_refused(hub, tmp_path):
    repo = _hosted(hub, tmp_path / "bin", '{"model_type": "gpt2"}', "pytorch_model.bin")
    with pytest.raises(DownloadError, match="no .safetensors weights"):
        plan_download(repo)


def test_offline_is_one_sentence(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "c"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(DownloadError, match="cannot reach the Hugging Face hub"):
        plan_download("gpt2")


@pytest.mark.parametrize(
    "bad", ["", " ", "../etc", "a/b/c", "http://x/y", "/abs", "a b", ".hidden", "x" * 100, None]
)
def test_bad_repo_ids_are_refused_before_any_request(bad):
    with pytest.raises(DownloadError, match="is not a Hugging Face model id"):
        check_repo_id(bad)


@pytest.mark.parametrize("good", ["gpt2", "Qwen/Qwen2.5-0.5B", "bert-base-uncased", "a_b/c.d"])
def test_good_repo_ids_pass(good):
    assert check_repo_id(good) == good
