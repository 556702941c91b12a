"""Llama, Mistral, Qwen2 (pre-RMSNorm): x += attn(rms(x)); x += down(silu(gate(m)) · up(m)).

m = rms(x); Q and K are rotated (RoPE) after projection; nn.Linear weights are (out,
in). They differ in biases (Qwen2 has Q/K/V biases) and in which layers use a sliding
window (Mistral: all, Qwen2: from max_window_layers on, when use_sliding_window).
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.models.architecture import Architecture
from mha_gui.engine.models.model_config import check_split, positive, rope_settings, whole
from mha_gui.engine.models.numerics import rms_norm


class Llama(Architecture):
    """Llama, Mistral and Qwen2: the same block, differing in biases and windows."""

    titles = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2"}
    probe = "embed_tokens.weight"

    @classmethod
    def parse(cls, cfg: dict, model_type: str) -> dict:
        d = whole(cfg, "hidden_size", 4096)
        h = whole(cfg, "num_attention_heads", 32)
        layers = whole(cfg, "num_hidden_layers", 32)
        theta, scaling = rope_settings(cfg)
        window, window_layers = _sliding_window(cfg, model_type, layers)
        attention_bias = bool(cfg.get("attention_bias", False))
        info = dict(
            n_layers=layers,
            d_model=d,
            n_heads=h,
            n_kv_heads=whole(cfg, "num_key_value_heads", h),
            head_dim=whole(cfg, "head_dim", max(1, d // h)),
            max_positions=whole(cfg, "max_position_embeddings", 2048),
            causal=True,
            rope=True,
            rope_theta=theta,
            rope_scaling=scaling,
            sliding_window=window,
            window_layers=window_layers,
            qkv_bias=model_type == "qwen2" or attention_bias,
            o_bias=attention_bias and model_type != "qwen2",
            mlp_bias=bool(cfg.get("mlp_bias", False)),
            activation=cfg.get("hidden_act", "silu"),
            norm_eps=positive(cfg, "rms_norm_eps", 1e-6),
            d_ff=whole(cfg, "intermediate_size", 4 * d),
        )
        if cfg.get("partial_rotary_factor", 1.0) != 1.0:
            raise ValueError("partial_rotary_factor other than 1 is not supported")
        if cfg.get("head_dim") is None:  # the head width is d_model / h
            check_split(d, h)
        return info

    def embed(self, ids):
        return self.w.rows("embed_tokens.weight", ids)

    def _rms(self, x, name):
        return rms_norm(x, self.w.read(f"{name}.weight"), self.info.norm_eps)

    def attention_input(self, layer, x):
        return self._rms(x, f"layers.{layer}.input_layernorm")

    def attention_weights(self, layer):
        p = f"layers.{layer}.self_attn"
        info = self.info
        out = {}
        for key, heads in (("Q", info.n_heads), ("K", info.n_kv_heads), ("V", info.n_kv_heads)):
            name = f"{p}.{key.lower()}_proj.weight"
            out[f"W_{key}"] = self._split_out_in(self.w.read(name), heads, name)
            if info.qkv_bias:
                size = heads * info.head_dim
                out[f"b_{key}"] = self._vector(f"{p}.{key.lower()}_proj.bias", size).reshape(
                    heads, -1
                )
        w_o = self.w.read(f"{p}.o_proj.weight")
        if w_o.shape != (info.d_model, info.n_heads * info.head_dim):
            raise ValueError(
                f"tensor {self.w.name(f'{p}.o_proj.weight')!r} has shape {w_o.shape} but the "
                f"config needs {(info.d_model, info.n_heads * info.head_dim)}"
            )
        out["W_O"] = w_o.T.copy()
        if info.qkv_bias or info.o_bias:  # the engine's biases come as a set of four
            out["b_O"] = (
                self._vector(f"{p}.o_proj.bias", info.d_model)
                if info.o_bias
                else np.zeros(info.d_model)
            )
        return out

    def after_attention(self, layer, x, attn):
        p = f"layers.{layer}"
        x = x + attn
        m = self._rms(x, f"{p}.post_attention_layernorm")
        bias = self.info.mlp_bias
        gate = self.activation(self._linear(m, f"{p}.mlp.gate_proj", bias))
        up = self._linear(m, f"{p}.mlp.up_proj", bias)
        return x + self._linear(gate * up, f"{p}.mlp.down_proj", bias)


def _sliding_window(cfg: dict, model_type: str, layers: int) -> tuple[int | None, tuple[int, ...]]:
    window = cfg.get("sliding_window")
    if model_type == "llama" or window is None:
        return None, ()
    if model_type == "qwen2" and not cfg.get("use_sliding_window", False):
        return None, ()
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"config.json: sliding_window must be a whole number ≥ 1, got {window!r}")
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return window, tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    if model_type == "qwen2":
        first = cfg.get("max_window_layers", 28)
        return window, tuple(range(first if isinstance(first, int) else 0, layers))
    return window, tuple(range(layers))
