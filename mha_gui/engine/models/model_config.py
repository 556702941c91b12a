"""A model folder's config.json, read and checked: which family it is and its shapes.

`parse_config` turns the dict into a `ModelInfo` (engine/models/families.py runs the
blocks it describes) or says in one sentence what is missing or wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from mha_gui.engine.models.numerics import ACTIVATIONS

FAMILY_NAMES = {
    "gpt2": "GPT-2",
    "bert": "BERT",
    "llama": "Llama",
    "mistral": "Mistral",
    "qwen2": "Qwen2",
}
SUPPORTED = tuple(FAMILY_NAMES)


def _whole(cfg: dict, key: str, default=None, *aliases: str) -> int:
    for k in (key, *aliases):
        if k in cfg and cfg[k] is not None:
            value = cfg[k]
            break
    else:
        if default is None:
            raise ValueError(f"config.json has no {key!r}")
        value = default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"config.json: {key} must be a whole number ≥ 1, got {value!r}")
    return value


def _positive(cfg: dict, key: str, default: float) -> float:
    value = cfg.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"config.json: {key} must be a positive number, got {value!r}")
    return float(value)


def _rope_settings(cfg: dict) -> tuple[float, dict | None]:
    """θ and scaling from `rope_theta` + `rope_scaling` (older) or `rope_parameters`."""
    params = cfg.get("rope_parameters")
    params = dict(params) if isinstance(params, dict) else {}
    theta = cfg.get("rope_theta", params.pop("rope_theta", None))
    params.pop("rope_theta", None)
    scaling = cfg.get("rope_scaling") or params or None
    if isinstance(scaling, dict):
        scaling = {k: v for k, v in scaling.items() if k != "rope_theta"}
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind == "default":
            scaling = None
    return (10000.0 if theta is None else theta), scaling


@dataclass(frozen=True, eq=False)
class ModelInfo:
    """What `describe_model` tells about a model folder (all layers share these shapes).

    Layers are numbered from 0 like Hugging Face's `model.layers[i]`.
    """

    path: Path
    name: str  # short name for titles: "gpt2"
    family: str  # model_type: gpt2, bert, llama, mistral, qwen2
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    max_positions: int
    vocab_size: int
    causal: bool
    rope: bool
    rope_theta: float | None
    rope_scaling: dict | None
    sliding_window: int | None  # tokens a query sees (itself included) on window layers
    window_layers: tuple[int, ...]  # the layers that use the window
    has_tokenizer: bool
    # how the blocks compute (not needed by a GUI)
    qkv_bias: bool = field(default=False, repr=False)
    o_bias: bool = field(default=False, repr=False)
    mlp_bias: bool = field(default=False, repr=False)
    activation: str = field(default="gelu", repr=False)
    norm_eps: float = field(default=1e-5, repr=False)
    d_ff: int = field(default=0, repr=False)
    scale: float | None = field(default=None, repr=False)  # None = 1/√head_dim
    scale_by_layer: bool = field(default=False, repr=False)  # GPT-2 option: ÷ (layer+1)

    @property
    def family_name(self) -> str:
        return FAMILY_NAMES[self.family]

    def source(self, layer: int) -> str:
        """The session's source line: "gpt2 · layer 5 of 12" (layer 0-based)."""
        return f"{self.name} · layer {layer} of {self.n_layers}"

    def summary(self) -> str:
        kv = "" if self.n_kv_heads == self.n_heads else f" ({self.n_kv_heads} K/V)"
        return (
            f"{self.name} ({self.family_name}): {self.n_layers} layers × {self.n_heads} heads"
            f"{kv}, d_model {self.d_model}, up to {self.max_positions} tokens"
        )

    def layer_scale(self, layer: int) -> float | None:
        if not self.scale_by_layer:
            return self.scale
        base = 1.0 / math.sqrt(self.head_dim) if self.scale is None else self.scale
        return base / (layer + 1)

    def window(self, layer: int) -> int | None:
        return self.sliding_window if layer in self.window_layers else None


def parse_config(cfg: dict, path: Path, name: str, has_tokenizer: bool) -> ModelInfo:
    family = cfg.get("model_type")
    if family not in FAMILY_NAMES:
        raise ValueError(
            f"model_type {family!r} in {path / 'config.json'} is not supported "
            f"(supported: {', '.join(SUPPORTED)})"
        )
    common = dict(path=path, name=name, family=family, has_tokenizer=has_tokenizer)
    if family == "gpt2":
        d = _whole(cfg, "n_embd", 768, "hidden_size")
        h = _whole(cfg, "n_head", 12, "num_attention_heads")
        act = cfg.get("activation_function", "gelu_new")
        info = dict(
            n_layers=_whole(cfg, "n_layer", 12, "num_hidden_layers"),
            d_model=d,
            n_heads=h,
            n_kv_heads=h,
            head_dim=d // h,
            max_positions=_whole(cfg, "n_positions", 1024, "max_position_embeddings"),
            causal=True,
            rope=False,
            qkv_bias=True,
            o_bias=True,
            mlp_bias=True,
            activation=act,
            norm_eps=_positive(cfg, "layer_norm_epsilon", 1e-5),
            d_ff=_whole(cfg, "n_inner", 4 * d),
            scale=None if cfg.get("scale_attn_weights", True) else 1.0,
            scale_by_layer=bool(cfg.get("scale_attn_by_inverse_layer_idx", False)),
        )
    elif family == "bert":
        d = _whole(cfg, "hidden_size", 768)
        h = _whole(cfg, "num_attention_heads", 12)
        kind = cfg.get("position_embedding_type", "absolute")
        if kind not in (None, "absolute"):
            raise ValueError(
                f"BERT with position_embedding_type {kind!r} is not supported (only absolute)"
            )
        info = dict(
            n_layers=_whole(cfg, "num_hidden_layers", 12),
            d_model=d,
            n_heads=h,
            n_kv_heads=h,
            head_dim=d // h,
            max_positions=_whole(cfg, "max_position_embeddings", 512),
            causal=bool(cfg.get("is_decoder", False)),
            rope=False,
            qkv_bias=True,
            o_bias=True,
            mlp_bias=True,
            activation=cfg.get("hidden_act", "gelu"),
            norm_eps=_positive(cfg, "layer_norm_eps", 1e-12),
            d_ff=_whole(cfg, "intermediate_size", 4 * d),
        )
    else:
        d = _whole(cfg, "hidden_size", 4096)
        h = _whole(cfg, "num_attention_heads", 32)
        layers = _whole(cfg, "num_hidden_layers", 32)
        theta, scaling = _rope_settings(cfg)
        window, window_layers = _sliding_window(cfg, family, layers)
        attention_bias = bool(cfg.get("attention_bias", False))
        info = dict(
            n_layers=layers,
            d_model=d,
            n_heads=h,
            n_kv_heads=_whole(cfg, "num_key_value_heads", h),
            head_dim=_whole(cfg, "head_dim", max(1, d // h)),
            max_positions=_whole(cfg, "max_position_embeddings", 2048),
            causal=True,
            rope=True,
            rope_theta=theta,
            rope_scaling=scaling,
            sliding_window=window,
            window_layers=window_layers,
            qkv_bias=family == "qwen2" or attention_bias,
            o_bias=attention_bias and family != "qwen2",
            mlp_bias=bool(cfg.get("mlp_bias", False)),
            activation=cfg.get("hidden_act", "silu"),
            norm_eps=_positive(cfg, "rms_norm_eps", 1e-6),
            d_ff=_whole(cfg, "intermediate_size", 4 * d),
        )
        if cfg.get("partial_rotary_factor", 1.0) != 1.0:
            raise ValueError("partial_rotary_factor other than 1 is not supported")
    info.setdefault("rope_theta", None)
    info.setdefault("rope_scaling", None)
    info.setdefault("sliding_window", None)
    info.setdefault("window_layers", ())
    if info["activation"] not in ACTIVATIONS:
        raise ValueError(
            f"activation {info['activation']!r} is not supported "
            f"(supported: {', '.join(ACTIVATIONS)})"
        )
    needs_split = family in ("gpt2", "bert") or cfg.get("head_dim") is None
    if needs_split and info["d_model"] % info["n_heads"]:
        raise ValueError(
            f"hidden size {info['d_model']} is not a multiple of {info['n_heads']} heads"
        )
    if info["n_heads"] % info["n_kv_heads"]:
        raise ValueError(
            f"num_key_value_heads={info['n_kv_heads']} does not divide "
            f"num_attention_heads={info['n_heads']}"
        )
    info["vocab_size"] = _whole(cfg, "vocab_size", 1)
    return ModelInfo(**common, **info)


def _sliding_window(cfg: dict, family: str, layers: int) -> tuple[int | None, tuple[int, ...]]:
    window = cfg.get("sliding_window")
    if family == "llama" or window is None:
        return None, ()
    if family == "qwen2" and not cfg.get("use_sliding_window", False):
        return None, ()
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"config.json: sliding_window must be a whole number ≥ 1, got {window!r}")
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return window, tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    if family == "qwen2":
        first = cfg.get("max_window_layers", 28)
        return window, tuple(range(first if isinstance(first, int) else 0, layers))
    return window, tuple(range(layers))
