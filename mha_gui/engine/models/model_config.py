"""What a model folder's config.json says (`ModelInfo`), and the readers of its keys.

Each family (engine/models/gpt2.py, bert.py, llama.py) reads its own keys with these
readers; engine/models/families.py picks the family by `model_type` and builds the
ModelInfo, or says in one sentence what is missing or wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

#: no real model has a width, a layer count or a vocabulary this large; past it a number
#: is a corrupt file (and would overflow the sizes computed from it)
MAX_WHOLE = 1 << 31


def whole(cfg: dict, key: str, default=None, *aliases: str) -> int:
    for k in (key, *aliases):
        if k in cfg and cfg[k] is not None:
            value = cfg[k]
            break
    else:
        if default is None:
            raise ValueError(f"config.json has no {key!r}")
        value = default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WHOLE:
        raise ValueError(
            f"config.json: {key} must be a whole number from 1 to {MAX_WHOLE}, got {value!r}"
        )
    return value


def positive(cfg: dict, key: str, default: float) -> float:
    value = cfg.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"config.json: {key} must be a positive number, got {value!r}")
    return float(value)


def rope_settings(cfg: dict) -> tuple[float, dict | None]:
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
    family_name: str  # its title: GPT-2, BERT, Llama, Mistral, Qwen2
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


def check_split(d_model: int, n_heads: int) -> None:
    """A family whose head width is d_model / h needs h to divide d_model."""
    if d_model % n_heads:
        raise ValueError(f"hidden size {d_model} is not a multiple of {n_heads} heads")


def classic_heads(d_model: int, n_heads: int) -> dict:
    """ModelInfo's fields of the original transformer's attention (GPT-2, BERT): d_model
    split evenly into heads that each have their own keys and values, a bias on every
    linear map, learned positions (no RoPE)."""
    check_split(d_model, n_heads)
    return dict(
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=n_heads,
        head_dim=d_model // n_heads,
        rope=False,
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
    )
