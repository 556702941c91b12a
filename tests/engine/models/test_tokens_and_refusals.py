"""Readable token labels, the Hugging Face cache, and one clear sentence for every bad input."""

from __future__ import annotations

import json

import pytest

from mha_gui.engine.layer.session import validate_tokens
from mha_gui.engine.models import (
    attention_maps,
    cache_folders,
    describe_model,
    discover_models,
    open_layer,
    tokenize,
)
from mha_gui.engine.models.tokens import readable
from tests.engine.models.builders import SENTENCE, build_model


def test_byte_level_labels_show_spaces_newlines_and_unicode(tmp_path):
    build_model(tmp_path, "gpt2")
    text = "The cat\n\tsat  on the mat — naïve 🐈"
    ids, labels = tokenize(tmp_path, text)
    validate_tokens(labels, len(labels))  # what every Session demands
    joined = "".join(labels)
    assert "Ġ" not in joined and "Ċ" not in joined
    assert labels[0] == "The" and "␣cat" in labels
    assert "↵" in joined and "⇥" in joined and "—" in joined
    assert "ï" in joined  # bytes decoded back to text, not 'Ã¯'
    assert "\\xf0" in joined  # a byte of a character split over tokens stays visible
    # the same ids given directly get the same labels
    assert tokenize(tmp_path, token_ids=ids)[1] == labels


def test_sentencepiece_and_wordpiece_labels(tmp_path):
    build_model(tmp_path / "llama", "llama")
    _, labels = tokenize(tmp_path / "llama", "The cat sat")
    assert labels[0] == "<s>" and labels[1].startswith("␣") and "▁" not in "".join(labels)
    build_model(tmp_path / "bert", "bert")
    _, labels = tokenize(tmp_path / "bert", "the cats sat")
    assert labels[0] == "[CLS]" and labels[-1] == "[SEP]"


def test_readable_never_gives_an_empty_or_overlong_label():
    assert readable("", 7) == "#7"
    assert readable("\x00", 3) == "\\x00"
    assert readable(" ", 1) == "␣"
    long = readable("x" * 100, 1)
    assert len(long) == 40 and long.endswith("…")


def test_token_labels_without_a_tokenizer(tmp_path):
    build_model(tmp_path, "gpt2", tokenizer=False)
    assert tokenize(tmp_path, token_ids=[4, 0, 9]) == ([4, 0, 9], ["#4", "#0", "#9"])
    with pytest.raises(ValueError, match="no tokenizer.json: give token ids instead"):
        tokenize(tmp_path, "hello")


def test_discover_models_in_the_hub_cache(tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    snap = hub / "models--openai-community--gpt2" / "snapshots" / "abc123"
    build_model(snap, "gpt2")
    (hub / "models--openai-community--gpt2" / "refs").mkdir()
    (hub / "models--openai-community--gpt2" / "refs" / "main").write_text("abc123")
    other = hub / "models--org--no-weights" / "snapshots" / "r1"
    other.mkdir(parents=True)
    (other / "config.json").write_text("{}")
    t5 = hub / "models--google--t5-small" / "snapshots" / "r2"
    t5.mkdir(parents=True)
    (t5 / "config.json").write_text(json.dumps({"model_type": "t5"}))
    (t5 / "model.safetensors").write_bytes(b"")
    env = {"HF_HUB_CACHE": str(hub), "HOME": str(tmp_path / "home")}
    found = discover_models(env)
    assert [(m.name, m.supported) for m in found] == [
        ("google/t5-small", False),
        ("openai-community/gpt2", True),
    ]
    gpt2 = found[1]
    assert gpt2.revision == "abc123" and describe_model(gpt2.path).name == "gpt2"
    assert open_layer(gpt2, 0, text="the cat").source == "gpt2 · layer 0 of 3"
    # HF_HOME/hub and ~/.cache/huggingface/hub are looked at too
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(key, raising=False)
    assert cache_folders() == [tmp_path / "home" / ".cache" / "huggingface" / "hub"]
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert [m.name for m in discover_models()] == ["google/t5-small", "openai-community/gpt2"]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2")
    build_model(folder, "gpt2", positions=20)
    return folder


REFUSALS = [
    ("missing folder", dict(path="nowhere"), "model folder '.*nowhere' does not exist"),
    ("a file", dict(path="config.json"), "is a file, not a model folder"),
    ("layer too big", dict(layer=3), "layer 3 is out of range: .* has layers 0..2"),
    ("layer negative", dict(layer=-4), "layer -4 is out of range"),
    ("layer not int", dict(layer="1"), "layer must be a whole number"),
    ("empty text", dict(text="   "), "the text is empty"),
    (
        "long text",
        dict(text="the cat " * 20),
        r"is \d+ tokens long but .* takes at most 20 \(max_position_embeddings\)",
    ),
    ("text and ids", dict(token_ids=[1]), "either a text or token ids"),
    ("neither", dict(text=None), "either a text or token ids"),
    ("empty ids", dict(text=None, token_ids=[]), "token ids are empty"),
    ("bad id", dict(text=None, token_ids=[1, 10**6]), "token id 1000000 is out of range"),
]


@pytest.mark.parametrize(("case", "change", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals(gpt2, case, change, message):
    args = {"path": gpt2, "layer": 0, "text": SENTENCE, **change}
    if args["path"] in ("nowhere", "config.json"):
        args["path"] = gpt2 / args["path"]
    with pytest.raises(ValueError, match=message):
        open_layer(args["path"], args["layer"], args["text"], args.get("token_ids"))


def test_not_a_model_folder_and_unsupported_types(tmp_path):
    with pytest.raises(ValueError, match="is not a model folder: it has no config.json"):
        describe_model(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}))
    with pytest.raises(
        ValueError, match="model_type 't5' .* not supported .*gpt2, bert, llama, mistral, qwen2"
    ):
        describe_model(tmp_path)
    (tmp_path / "config.json").write_text("[1, 2")
    with pytest.raises(ValueError, match="cannot read .*config.json"):
        describe_model(tmp_path)


def test_a_layer_beyond_the_engine_limits_is_refused_with_the_reason(tmp_path):
    build_model(tmp_path, "gpt2", positions=5000)
    name = tmp_path.name
    with pytest.raises(ValueError, match=f"{name} · layer 0 of 3 cannot be opened: n must be"):
        open_layer(tmp_path, 0, token_ids=[1] * 4097)


def test_attention_maps_refuse_a_grid_beyond_the_memory_limit(tmp_path, monkeypatch):
    from mha_gui.engine.models import loader

    build_model(tmp_path, "gpt2")
    monkeypatch.setattr(loader, "MAX_MEMORY_BYTES", 1000)
    with pytest.raises(ValueError, match="attention maps of 3 layers × 4 heads on 20 tokens"):
        attention_maps(tmp_path, token_ids=[1] * 20)
