"""A throw-away Hugging Face cache of tiny checkpoints for the window's model tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.models.builders import SENTENCE, build_model

__all__ = ["SENTENCE", "model_hub", "snapshot"]


def snapshot(root: Path, repo: str, rev: str = "abc123") -> Path:
    """`root/models--ORG--NAME/snapshots/REV/` with refs/main naming it."""
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(rev)
    return folder / "snapshots" / rev


@pytest.fixture
def model_hub(tmp_path, monkeypatch):
    """HF_HUB_CACHE with a tiny GPT-2 (3 layers × 4 heads) and an unsupported model; the
    real home's cache is never read."""
    root = tmp_path / "hub"
    gpt2 = snapshot(root, "openai-community/gpt2")
    build_model(gpt2, "gpt2")
    t5 = snapshot(root, "google/t5-small")
    t5.mkdir(parents=True)
    (t5 / "config.json").write_text(json.dumps({"model_type": "t5"}))
    (t5 / "model.safetensors").write_bytes(b"")
    for key in ("HF_HOME", "XDG_CACHE_HOME", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return gpt2
