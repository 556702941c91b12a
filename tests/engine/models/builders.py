"""Tiny checkpoints of every supported family, written here with numpy (nothing downloaded).

`build_model(folder, family, ...)` writes config.json, the weights (F32, F16 or BF16, one
file or shards + index) and a tokenizer.json trained on a few sentences with the
`tokenizers` library, and returns the weights exactly as stored (float64), for the
reference in `reference_models.py`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

CORPUS = [
    "The cat sat on the mat.",
    "A quick brown fox jumps over the lazy dog.",
    "Attention is all you need, said the paper.",
    "the dog and the cat are friends",
    "naïve café — naïve café — naïve",
]
SENTENCE = "The quick cat sat on the lazy dog."

# ------------------------------------------------------------------ tokenizers ----


@cache
def tokenizer_json(kind: str) -> str:
    """A trained tokenizer as JSON text: 'byte' (GPT-2 style), 'wordpiece' (BERT with
    [CLS]/[SEP]) or 'metaspace' (SentencePiece style '▁', with <s>)."""
    if kind == "byte":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=320,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train_from_iterator(CORPUS, trainer)
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(
            vocab_size=120, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        )
        tok.train_from_iterator(CORPUS, trainer)
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
    elif kind == "metaspace":
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(vocab_size=150, special_tokens=["<unk>", "<s>", "</s>"])
        tok.train_from_iterator(CORPUS, trainer)
        bos = tok.token_to_id("<s>")
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", bos)]
        )
    else:
        raise ValueError(kind)
    return tok.to_str()


def vocab_size(kind: str) -> int:
    return Tokenizer.from_str(tokenizer_json(kind)).get_vocab_size()


def encode(kind: str, text: str) -> list[int]:
    return Tokenizer.from_str(tokenizer_json(kind)).encode(text).ids


# ----------------------------------------------------------------- safetensors ----
def to_bits(values: np.ndarray, dtype: str) -> np.ndarray:
    """float64 → the stored little-endian representation (bf16 rounds to nearest even)."""
    if dtype == "F32":
        return values.astype("<f4")
    if dtype == "F16":
        return values.astype("<f2")
    if dtype == "BF16":
        bits = values.astype("<f4").view("<u4").astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype("<u2")
    raise ValueError(dtype)


def from_bits(bits: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "BF16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.astype(np.float64)


def stored(values: np.ndarray, dtype: str) -> np.ndarray:
    """What a value becomes once written as `dtype` and read back."""
    return from_bits(to_bits(values, dtype), dtype)


def safetensors_bytes(tensors: dict[str, np.ndarray], dtype: str = "F32", pad: bool = True):
    header, blobs, offset = {}, [], 0
    for name, values in tensors.items():
        raw = to_bits(np.asarray(values, dtype=np.float64), dtype).tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(np.shape(values)),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def write_safetensors(path: Path, tensors: dict[str, np.ndarray], dtype: str = "F32") -> Path:
    path.write_bytes(safetensors_bytes(tensors, dtype))
    return path


# ---------------------------------------------------------------------- models ----
DEFAULTS = {
    "gpt2": dict(d=24, layers=3, heads=4, kv=4, positions=40, tokenizer="byte"),
    "bert": dict(d=24, layers=3, heads=4, kv=4, positions=40, tokenizer="wordpiece"),
    "llama": dict(d=32, layers=3, heads=4, kv=2, positions=64, tokenizer="metaspace"),
    "mistral": dict(d=32, layers=3, heads=4, kv=1, positions=64, tokenizer="byte"),
    "qwen2": dict(d=32, layers=3, heads=4, kv=2, positions=64, tokenizer="byte"),
}
PREFIX = {
    "gpt2": "transformer.",
    "bert": "bert.",
    "llama": "model.",
    "mistral": "model.",
    "qwen2": "model.",
}


def make_config(family: str, **over) -> dict:
    p = {**DEFAULTS[family], **over}
    d, L, h, kv, npos = p["d"], p["layers"], p["heads"], p["kv"], p["positions"]
    vocab = p.get("vocab") or vocab_size(p["tokenizer"])
    if family == "gpt2":
        return dict(
            model_type="gpt2",
            n_embd=d,
            n_layer=L,
            n_head=h,
            n_positions=npos,
            vocab_size=vocab,
            n_inner=2 * d,
            layer_norm_epsilon=1e-5,
            activation_function="gelu_new",
        )
    if family == "bert":
        return dict(
            model_type="bert",
            hidden_size=d,
            num_hidden_layers=L,
            num_attention_heads=h,
            intermediate_size=2 * d,
            max_position_embeddings=npos,
            vocab_size=vocab,
            type_vocab_size=2,
            layer_norm_eps=1e-12,
            hidden_act="gelu",
        )
    cfg = dict(
        model_type=family,
        hidden_size=d,
        num_hidden_layers=L,
        num_attention_heads=h,
        num_key_value_heads=kv,
        intermediate_size=48,
        max_position_embeddings=npos,
        vocab_size=vocab,
        rms_norm_eps=1e-6,
        hidden_act="silu",
        rope_theta=10000.0,
    )
    if "head_dim" in p:
        cfg["head_dim"] = p["head_dim"]
    if family == "mistral":
        cfg["sliding_window"] = p.get("window", 4)
    if family == "qwen2":
        cfg.update(use_sliding_window=True, sliding_window=p.get("window", 5), max_window_layers=1)
    return cfg


def make_weights(cfg: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights, large enough that attention is far from uniform (no prefix)."""
    rng = np.random.default_rng(seed)
    family = cfg["model_type"]

    def mat(*shape, s=0.35):
        return rng.normal(0.0, s, shape)

    def norm(size):
        return 1.0 + rng.normal(0.0, 0.2, size)

    w: dict[str, np.ndarray] = {}
    if family == "gpt2":
        d, V, P, ff = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_inner"]
        w["wte.weight"], w["wpe.weight"] = mat(V, d, s=1.0), mat(P, d, s=0.5)
        for i in range(cfg["n_layer"]):
            p = f"h.{i}."
            w |= {
                p + "ln_1.weight": norm(d),
                p + "ln_1.bias": mat(d, s=0.1),
                p + "attn.c_attn.weight": mat(d, 3 * d),
                p + "attn.c_attn.bias": mat(3 * d, s=0.2),
                p + "attn.c_proj.weight": mat(d, d),
                p + "attn.c_proj.bias": mat(d, s=0.2),
                p + "ln_2.weight": norm(d),
                p + "ln_2.bias": mat(d, s=0.1),
                p + "mlp.c_fc.weight": mat(d, ff),
                p + "mlp.c_fc.bias": mat(ff, s=0.2),
                p + "mlp.c_proj.weight": mat(ff, d),
                p + "mlp.c_proj.bias": mat(d, s=0.2),
            }
        w["ln_f.weight"], w["ln_f.bias"] = norm(d), mat(d, s=0.1)
    elif family == "bert":
        d, V, P, ff = (
            cfg["hidden_size"],
            cfg["vocab_size"],
            cfg["max_position_embeddings"],
            cfg["intermediate_size"],
        )
        e = "embeddings."
        w |= {
            e + "word_embeddings.weight": mat(V, d, s=1.0),
            e + "position_embeddings.weight": mat(P, d, s=0.5),
            e + "token_type_embeddings.weight": mat(2, d, s=0.5),
            e + "LayerNorm.weight": norm(d),
            e + "LayerNorm.bias": mat(d, s=0.1),
        }
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            for part in ("query", "key", "value"):
                w[p + f"attention.self.{part}.weight"] = mat(d, d)
                w[p + f"attention.self.{part}.bias"] = mat(d, s=0.2)
            w |= {
                p + "attention.output.dense.weight": mat(d, d),
                p + "attention.output.dense.bias": mat(d, s=0.2),
                p + "attention.output.LayerNorm.weight": norm(d),
                p + "attention.output.LayerNorm.bias": mat(d, s=0.1),
                p + "intermediate.dense.weight": mat(ff, d),
                p + "intermediate.dense.bias": mat(ff, s=0.2),
                p + "output.dense.weight": mat(d, ff),
                p + "output.dense.bias": mat(d, s=0.2),
                p + "output.LayerNorm.weight": norm(d),
                p + "output.LayerNorm.bias": mat(d, s=0.1),
            }
    else:
        d, V, ff = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
        h, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        hd = cfg.get("head_dim") or d // h
        qkv_bias = family == "qwen2" or cfg.get("attention_bias", False)
        w["embed_tokens.weight"] = mat(V, d, s=1.0)
        for i in range(cfg["num_hidden_layers"]):
            p = f"layers.{i}."
            w |= {
                p + "input_layernorm.weight": norm(d),
                p + "self_attn.q_proj.weight": mat(h * hd, d),
                p + "self_attn.k_proj.weight": mat(kv * hd, d),
                p + "self_attn.v_proj.weight": mat(kv * hd, d),
                p + "self_attn.o_proj.weight": mat(d, h * hd),
                p + "post_attention_layernorm.weight": norm(d),
                p + "mlp.gate_proj.weight": mat(ff, d),
                p + "mlp.up_proj.weight": mat(ff, d),
                p + "mlp.down_proj.weight": mat(d, ff),
            }
            if qkv_bias:
                w[p + "self_attn.q_proj.bias"] = mat(h * hd, s=0.3)
                w[p + "self_attn.k_proj.bias"] = mat(kv * hd, s=0.3)
                w[p + "self_attn.v_proj.bias"] = mat(kv * hd, s=0.3)
            if cfg.get("attention_bias", False) and family != "qwen2":
                w[p + "self_attn.o_proj.bias"] = mat(d, s=0.3)
        w["norm.weight"] = norm(d)
        w["lm_head.weight"] = mat(V, d)
    return w


def write_model(
    folder: Path,
    cfg: dict,
    weights: dict[str, np.ndarray],
    *,
    dtype: str = "F32",
    prefix: str = "",
    shards: int = 1,
    tokenizer: str | None = None,
) -> dict:
    """Write a model folder; returns the weights as stored (rounded to `dtype`), no prefix."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    names = list(weights)
    if shards == 1:
        write_safetensors(
            folder / "model.safetensors", {prefix + k: weights[k] for k in names}, dtype
        )
    else:
        weight_map = {}
        for s in range(shards):
            part = names[s::shards]
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            write_safetensors(folder / fname, {prefix + k: weights[k] for k in part}, dtype)
            weight_map |= {prefix + k: fname for k in part}
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map})
        )
    if tokenizer:
        (folder / "tokenizer.json").write_text(tokenizer_json(tokenizer))
    return {k: stored(v, dtype) for k, v in weights.items()}


def build_model(
    folder: Path,
    family: str,
    *,
    dtype: str = "F32",
    prefix: bool = True,
    shards: int = 1,
    tokenizer: bool = True,
    seed: int = 0,
    **over,
):
    """A whole tiny model folder; returns (config dict, stored weights without prefix)."""
    cfg = make_config(family, **over)
    weights = make_weights(cfg, seed)
    kind = {**DEFAULTS[family], **over}["tokenizer"]
    stored_weights = write_model(
        folder,
        cfg,
        weights,
        dtype=dtype,
        prefix=PREFIX[family] if prefix else "",
        shards=shards,
        tokenizer=kind if tokenizer else None,
    )
    return cfg, stored_weights
