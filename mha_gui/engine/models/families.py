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
the window would show for it. config.json is read in engine/models/model_config.py,
the norms and activations are engine/models/numerics.py (both re-exported here).
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.forward import forward
from mha_gui.engine.models.model_config import FAMILY_NAMES, SUPPORTED, ModelInfo, parse_config
from mha_gui.engine.models.numerics import (
    ACTIVATIONS,
    erf,
    gelu_erf,
    gelu_tanh,
    layer_norm,
    rms_norm,
    silu,
)
from mha_gui.engine.models.weights import Weights
from mha_gui.engine.rope import RoPE


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


__all__ = [
    "ACTIVATIONS",
    "ARCHITECTURES",
    "BERT",
    "FAMILY_NAMES",
    "GPT2",
    "SUPPORTED",
    "Architecture",
    "Llama",
    "ModelInfo",
    "erf",
    "gelu_erf",
    "gelu_tanh",
    "layer_norm",
    "parse_config",
    "rms_norm",
    "silu",
]
