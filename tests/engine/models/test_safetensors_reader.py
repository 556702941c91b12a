"""The safetensors reader: exact dtypes, lazy rows, and a clear refusal for every corruption."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mha_gui.engine.models import open_layer
from mha_gui.engine.models.safetensors import Checkpoint, SafetensorsFile
from tests.engine.models.builders import (
    SENTENCE,
    build_model,
    make_config,
    make_weights,
    safetensors_bytes,
    stored,
    write_model,
    write_safetensors,
)


def header_file(path, header: dict, data: bytes = b"") -> None:
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_dtypes_are_read_exactly(tmp_path, dtype):
    values = np.random.default_rng(1).normal(0, 3, (5, 7))
    path = write_safetensors(tmp_path / "w.safetensors", {"a": values, "b": values[:2]}, dtype)
    ckpt = Checkpoint(tmp_path)
    assert np.array_equal(ckpt.read("a"), stored(values, dtype))
    assert np.array_equal(ckpt.read("a", rows=[4, 0]), stored(values, dtype)[[4, 0]])
    assert SafetensorsFile(path).tensors["b"].shape == (2, 7)


def test_bf16_widening_is_exact_for_known_bits(tmp_path):
    # 1.0 = 0x3F80, -2.5 = 0xC020, the smallest subnormal 0x0001
    bits = np.array([0x3F80, 0xC020, 0x0001], dtype="<u2")
    header_file(
        tmp_path / "model.safetensors",
        {"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}},
        bits.tobytes(),
    )
    got = Checkpoint(tmp_path).read("x")
    assert got[0] == 1.0 and got[1] == -2.5 and got[2] == 2.0**-133


def test_files_written_by_the_safetensors_library(tmp_path):
    from safetensors.numpy import save_file

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(-1, 1, 6).astype(np.float16)
    save_file({"a": a, "b": b}, str(tmp_path / "model.safetensors"))
    ckpt = Checkpoint(tmp_path)
    assert np.array_equal(ckpt.read("a"), a) and np.array_equal(ckpt.read("b"), b)


CORRUPT = {
    "too short": (b"\x01\x02", "only 2 bytes"),
    "huge header length": ((10**12).to_bytes(8, "little") + b"{}", "header length"),
    "header not JSON": ((5).to_bytes(8, "little") + b"{oops", "not JSON"),
    "header not an object": ((2).to_bytes(8, "little") + b"[]", "JSON object"),
}


@pytest.mark.parametrize("case", CORRUPT)
def test_corrupt_headers(tmp_path, case):
    data, message = CORRUPT[case]
    (tmp_path / "model.safetensors").write_bytes(data)
    with pytest.raises(ValueError, match=message):
        Checkpoint(tmp_path)


def entry(dtype="F32", shape=(2,), begin=0, end=8):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": [begin, end]}


BAD_ENTRIES = {
    "offsets past the end": ({"w": entry(end=16, shape=(4,))}, 8, "truncated or corrupt"),
    "overlap": ({"a": entry(), "b": entry(begin=4, end=12)}, 12, "overlap"),
    "size mismatch": ({"w": entry(shape=(3,))}, 8, r"shape \(3,\) of F32 needs 12"),
    "unknown dtype": ({"w": entry(dtype="Q4")}, 8, "unknown dtype 'Q4'"),
    "bad shape": ({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}}, 8, "shape"),
    "bad offsets": ({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, 8, "offsets"),
}


@pytest.mark.parametrize("case", BAD_ENTRIES)
def test_corrupt_entries_name_the_tensor(tmp_path, case):
    header, size, message = BAD_ENTRIES[case]
    header_file(tmp_path / "model.safetensors", header, bytes(size))
    with pytest.raises(ValueError, match=message):
        Checkpoint(tmp_path)


def test_truncated_model_file(tmp_path):
    build_model(tmp_path, "gpt2")
    path = tmp_path / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ValueError, match="model.safetensors is truncated or corrupt"):
        open_layer(tmp_path, 0, text=SENTENCE)


def test_dtypes_we_do_not_read_are_named(tmp_path):
    header_file(
        tmp_path / "model.safetensors",
        {"ids": entry(dtype="I64", shape=(1,)), "w": entry(begin=8, end=16)},
        bytes(16),
    )
    ckpt = Checkpoint(tmp_path)
    assert np.array_equal(ckpt.read("w"), [0.0, 0.0])  # an unused int tensor is fine
    with pytest.raises(ValueError, match="'ids' is stored as I64; only F64, F32, F16, BF16"):
        ckpt.read("ids")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_in_a_used_weight_names_it(tmp_path, bad):
    cfg = make_config("gpt2")
    weights = make_weights(cfg)
    weights["h.1.mlp.c_fc.weight"][3, 2] = bad
    write_model(tmp_path, cfg, weights, prefix="transformer.", tokenizer="byte")
    open_layer(tmp_path, 1, text=SENTENCE)  # layer 1 does not need block 1's MLP
    kind = "NaN" if np.isnan(bad) else "Inf"
    with pytest.raises(ValueError, match=rf"'transformer.h.1.mlp.c_fc.weight' holds {kind}"):
        open_layer(tmp_path, 2, text=SENTENCE)


def test_only_the_embedding_rows_used_are_read(tmp_path):
    cfg = make_config("llama")
    weights = make_weights(cfg)
    from tests.engine.models.builders import encode

    used = set(encode("metaspace", SENTENCE))
    unused = [i for i in range(cfg["vocab_size"]) if i not in used]
    weights["embed_tokens.weight"][unused] = np.nan  # never read, so never refused
    weights["lm_head.weight"][:] = np.inf  # not part of any block
    write_model(tmp_path, cfg, weights, prefix="model.", tokenizer="metaspace")
    session = open_layer(tmp_path, 2, text=SENTENCE)
    assert np.isfinite(session.params.X).all()


def test_missing_tensor_names_it_and_the_file(tmp_path):
    cfg = make_config("bert")
    weights = make_weights(cfg)
    del weights["encoder.layer.1.attention.self.key.bias"]
    write_model(tmp_path, cfg, weights, prefix="bert.", tokenizer="wordpiece")
    with pytest.raises(
        ValueError,
        match=r"'bert.encoder.layer.1.attention.self.key.bias' is missing from model.safetensors",
    ):
        open_layer(tmp_path, 1, text=SENTENCE)


def test_sharded_checkpoint_refusals(tmp_path):
    build_model(tmp_path, "qwen2", shards=2)
    index = tmp_path / "model.safetensors.index.json"
    data = json.loads(index.read_text())
    name = "model.layers.0.self_attn.q_proj.weight"
    shard = data["weight_map"][name]
    # a tensor the index does not list
    del data["weight_map"][name]
    index.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"'{name}' is missing from model.safetensors.index.json"):
        open_layer(tmp_path, 0, text=SENTENCE)
    # a shard the index lists but the folder lacks
    data["weight_map"][name] = shard
    index.write_text(json.dumps(data))
    (tmp_path / shard).unlink()
    with pytest.raises(ValueError, match=f"lists the shard '{shard}', which is missing"):
        open_layer(tmp_path, 0, text=SENTENCE)
    index.write_text("{not json")
    with pytest.raises(ValueError, match="model.safetensors.index.json is not valid JSON"):
        open_layer(tmp_path, 0, text=SENTENCE)
    index.write_text(json.dumps({"weight_map": {"a": "../x.safetensors"}}))
    with pytest.raises(ValueError, match="weight_map"):
        open_layer(tmp_path, 0, text=SENTENCE)


def test_folder_without_safetensors_weights(tmp_path):
    build_model(tmp_path, "gpt2")
    (tmp_path / "model.safetensors").rename(tmp_path / "pytorch_model.bin")
    with pytest.raises(ValueError, match=r"no model.safetensors \(only pytorch_model.bin"):
        open_layer(tmp_path, 0, text=SENTENCE)
    (tmp_path / "a.safetensors").write_bytes(safetensors_bytes({"x": np.zeros(2)}))
    (tmp_path / "b.safetensors").write_bytes(safetensors_bytes({"y": np.zeros(2)}))
    with pytest.raises(ValueError, match="2 .safetensors files but no model.safetensors.index"):
        open_layer(tmp_path, 0, text=SENTENCE)


def test_a_checkpoint_of_another_family(tmp_path):
    build_model(tmp_path, "bert")
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["model_type"] = "gpt2"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="'wte.weight'.* is this a GPT-2 checkpoint"):
        open_layer(tmp_path, 0, text=SENTENCE)


def test_shapes_that_contradict_the_config(tmp_path):
    build_model(tmp_path, "llama")
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["num_key_value_heads"] = 4
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="k_proj.weight' has shape .* the config needs"):
        open_layer(tmp_path, 0, text=SENTENCE)
