"""What each supported architecture is: its config.json keys, tensor names and blocks.

Every block runs in float64 NumPy, written from the published formulas:

- GPT-2 (pre-LN): x += attn(ln_1(x)); x += mlp(ln_2(x)), mlp = c_proj(gelu_new(c_fc(·))).
  Conv1D weights are stored (in, out): no transpose.
- BERT (post-LN): x = LN(x + attn(x)); x = LN(x + dense(gelu(intermediate(x)))); the
  embeddings are word + position + token type 0, then LayerNorm. nn.Linear is (out, in).
- Llama, Mistral, Qwen2 (pre-RMSNorm): x += attn(rms(x)); x += down(silu(gate(m)) · up(m))
  with m = rms(x); Q and K are rotated (RoPE) after projection.

The attention of every block is the engine's own `forward()`, on the same per-head
matrices the opened layer's session holds, so an earlier block computes exactly what
the window would show for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from mha_gui.engine.forward import forward
from mha_gui.engine.models.weights import Weights
from mha_gui.engine.rope import RoPE

FAMILY_NAMES = {
    "gpt2": "GPT-2",
    "bert": "BERT",
    "llama": "Llama",
    "mistral": "Mistral",
    "qwen2": "Qwen2",
}
SUPPORTED = tuple(FAMILY_NAMES)


# ------------------------------------------------------------------ numerics ------
def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * weight


ERF_STEP = 1.0 / 32  # grid of the Taylor table; |dx| ≤ 1/64
ERF_TERMS = 10


@cache
def _erf_table() -> np.ndarray:
    """Row n, column i: erf⁽ⁿ⁾(x_i)/n! at x_i = i/32 on [0, 6] (row 0: erf itself).

    erf⁽ⁿ⁾(x) = (2/√π)·(−1)ⁿ⁻¹·Hₙ₋₁(x)·e^(−x²) with the physicists' Hermite polynomials.
    """
    grid = np.arange(0.0, 6.0 + ERF_STEP, ERF_STEP)
    table = np.empty((ERF_TERMS + 1, len(grid)))
    for i, x in enumerate(grid):
        table[0, i] = math.erf(x)
        hermite = [1.0, 2.0 * x]
        for k in range(1, ERF_TERMS):
            hermite.append(2.0 * x * hermite[k] - 2.0 * k * hermite[k - 1])
        g = 2.0 / math.sqrt(math.pi) * math.exp(-x * x)
        for n in range(1, ERF_TERMS + 1):
            table[n, i] = g * (-1) ** (n - 1) * hermite[n - 1] / math.factorial(n)
    return table


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, vectorised: a 10-term Taylor series about the nearest multiple
    of 1/32 (math.erf there). Within 3e-16 of math.erf everywhere (a test checks it), and
    ~3× faster than calling math.erf per element; erf(±6) is ±1 in float64."""
    table = _erf_table()
    a = np.minimum(np.abs(x), 6.0)
    idx = np.rint(a * (1.0 / ERF_STEP)).astype(np.intp)
    dx = a - idx * ERF_STEP
    out = table[ERF_TERMS][idx]
    for n in range(ERF_TERMS - 1, -1, -1):
        out *= dx
        out += table[n][idx]
    return np.copysign(out, x)


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """x·Φ(x) with the exact error function (BERT's "gelu")."""
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GPT-2's "gelu_new": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


ACTIVATIONS = {
    "gelu": gelu_erf,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "gelu_fast": gelu_tanh,
    "silu": silu,
    "swish": silu,
    "relu": lambda x: np.maximum(x, 0.0),
}


# --------------------------------------------------------------- config.json ------
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


# -------------------------------------------------------------------- blocks ------
class Architecture:
    """Reads one family's tensors and runs its blocks (subclasses per family)."""

    probe = ""  # the word embedding's name without prefix

    def __init__(self, info: ModelInfo, weights: Weights):
        self.info = info
        self.w = weights
        self._rope = RoPE.make(info.rope_theta, info.rope_scaling) if info.rope else None

    # -- per-family pieces --
    def embed(self, ids: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def attention_input(self, layer: int, x: np.ndarray) -> np.ndarray:
        """The exact input of layer `layer`'s attention, from the residual stream x."""
        raise NotImplementedError

    def attention_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V, W_O (+ b_Q, b_K, b_V, b_O) in the engine's per-head shapes."""
        raise NotImplementedError

    def after_attention(self, layer: int, x: np.ndarray, attn: np.ndarray) -> np.ndarray:
        """The residual stream after the whole block, given its input and attention output."""
        raise NotImplementedError

    # -- shared --
    def mask(self, layer: int, n: int) -> np.ndarray | None:
        """Sliding-window extra mask (True = blocked), only when it blocks something."""
        window = self.info.window(layer)
        if window is None or n <= window:
            return None
        i, j = np.indices((n, n))
        return (i - j) >= window

    def attend(self, layer: int, x_attn: np.ndarray, params: dict):
        return forward(
            x_attn,
            params["W_Q"],
            params["W_K"],
            params["W_V"],
            params["W_O"],
            b_q=params.get("b_Q"),
            b_k=params.get("b_K"),
            b_v=params.get("b_V"),
            b_o=params.get("b_O"),
            mask=self.mask(layer, x_attn.shape[0]),
            causal=self.info.causal,
            scale=self.info.layer_scale(layer),
            rope=self._rope,
        )

    def activation(self, x: np.ndarray) -> np.ndarray:
        return ACTIVATIONS[self.info.activation](x)

    def _linear(self, x, name: str, bias: bool, out_in: bool = True) -> np.ndarray:
        y = self.w.linear(x, f"{name}.weight", out_in=out_in)
        if bias:
            y += self.w.read(f"{name}.bias")
        return y

    def _split_out_in(self, weight: np.ndarray, heads: int, name: str) -> np.ndarray:
        """(heads·d_k, d_model) nn.Linear weight → (heads, d_model, d_k)."""
        d, dk = self.info.d_model, self.info.head_dim
        if weight.shape != (heads * dk, d):
            raise ValueError(
                f"tensor {self.w.name(name)!r} has shape {weight.shape} but the config "
                f"needs {(heads * dk, d)}"
            )
        return weight.reshape(heads, dk, d).transpose(0, 2, 1).copy()

    def _vector(self, name: str, size: int) -> np.ndarray:
        v = self.w.read(name)
        if v.shape != (size,):
            raise ValueError(
                f"tensor {self.w.name(name)!r} has shape {v.shape} but the config needs ({size},)"
            )
        return v


class GPT2(Architecture):
    probe = "wte.weight"

    def embed(self, ids):
        positions = np.arange(len(ids))
        return self.w.rows("wte.weight", ids) + self.w.rows("wpe.weight", positions)

    def _ln(self, x, name):
        return layer_norm(
            x, self.w.read(f"{name}.weight"), self.w.read(f"{name}.bias"), self.info.norm_eps
        )

    def attention_input(self, layer, x):
        return self._ln(x, f"h.{layer}.ln_1")

    def attention_weights(self, layer):
        d, h, dk = self.info.d_model, self.info.n_heads, self.info.head_dim
        c_attn = self.w.read(f"h.{layer}.attn.c_attn.weight")  # (in, out) = (d, 3d)
        if c_attn.shape != (d, 3 * d):
            raise ValueError(
                f"tensor {self.w.name(f'h.{layer}.attn.c_attn.weight')!r} has shape "
                f"{c_attn.shape} but the config needs {(d, 3 * d)}"
            )
        bias = self._vector(f"h.{layer}.attn.c_attn.bias", 3 * d)
        split = [
            c_attn[:, i * d : (i + 1) * d].reshape(d, h, dk).transpose(1, 0, 2) for i in range(3)
        ]
        b = [bias[i * d : (i + 1) * d].reshape(h, dk) for i in range(3)]
        w_o = self.w.read(f"h.{layer}.attn.c_proj.weight")  # (in, out): already H → d
        return dict(
            W_Q=split[0].copy(),
            W_K=split[1].copy(),
            W_V=split[2].copy(),
            W_O=w_o,
            b_Q=b[0].copy(),
            b_K=b[1].copy(),
            b_V=b[2].copy(),
            b_O=self._vector(f"h.{layer}.attn.c_proj.bias", d),
        )

    def after_attention(self, layer, x, attn):
        x = x + attn
        m = self._ln(x, f"h.{layer}.ln_2")
        m = self.activation(self._linear(m, f"h.{layer}.mlp.c_fc", True, out_in=False))
        return x + self._linear(m, f"h.{layer}.mlp.c_proj", True, out_in=False)


class BERT(Architecture):
    probe = "embeddings.word_embeddings.weight"

    def _ln(self, x, name):
        return layer_norm(
            x, self.w.read(f"{name}.weight"), self.w.read(f"{name}.bias"), self.info.norm_eps
        )

    def embed(self, ids):
        e = "embeddings"
        x = self.w.rows(f"{e}.word_embeddings.weight", ids)
        x = x + self.w.rows(f"{e}.position_embeddings.weight", np.arange(len(ids)))
        if self.w.has(f"{e}.token_type_embeddings.weight"):
            x = x + self.w.rows(f"{e}.token_type_embeddings.weight", [0])
        return self._ln(x, f"{e}.LayerNorm")

    def attention_input(self, layer, x):
        return x  # post-LN: the previous layer's output goes straight in

    def attention_weights(self, layer):
        p = f"encoder.layer.{layer}.attention"
        h, d = self.info.n_heads, self.info.d_model
        out = {}
        for key, part in (("Q", "query"), ("K", "key"), ("V", "value")):
            out[f"W_{key}"] = self._split_out_in(
                self.w.read(f"{p}.self.{part}.weight"), h, f"{p}.self.{part}.weight"
            )
            out[f"b_{key}"] = self._vector(f"{p}.self.{part}.bias", d).reshape(h, -1)
        out["W_O"] = self.w.read(f"{p}.output.dense.weight").T.copy()
        out["b_O"] = self._vector(f"{p}.output.dense.bias", d)
        return out

    def after_attention(self, layer, x, attn):
        p = f"encoder.layer.{layer}"
        x = self._ln(x + attn, f"{p}.attention.output.LayerNorm")
        m = self.activation(self._linear(x, f"{p}.intermediate.dense", True))
        return self._ln(x + self._linear(m, f"{p}.output.dense", True), f"{p}.output.LayerNorm")


class Llama(Architecture):
    """Llama, Mistral and Qwen2: the same block, differing in biases and windows."""

    probe = "embed_tokens.weight"

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


ARCHITECTURES = {"gpt2": GPT2, "bert": BERT, "llama": Llama, "mistral": Llama, "qwen2": Llama}
