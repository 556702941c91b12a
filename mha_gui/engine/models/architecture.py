"""The part every model family shares: running a layer's attention with the engine.

A family (engine/models/gpt2.py, bert.py, llama.py) subclasses `Architecture`: which
config.json model types it reads and their titles, how their config.json becomes a
ModelInfo, where its tensors are and how its blocks compute. The attention of every
block is the engine's own `forward()`, on the same per-head matrices the opened layer's
session holds, so an earlier block computes exactly what the window would show for it.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.attention.forward import forward
from mha_gui.engine.attention.rope import RoPE
from mha_gui.engine.models.model_config import ModelInfo
from mha_gui.engine.models.numerics import ACTIVATIONS, layer_norm
from mha_gui.engine.models.weights import Weights


class Architecture:
    """Reads one family's tensors and runs its blocks (subclasses per family).

    A subclass is one model family: `titles` maps each config.json `model_type` it
    reads to its display name, `parse` turns a config.json into ModelInfo fields, and the
    block methods compute from the checkpoint's tensors.
    """

    titles: dict[str, str] = {}  # model_type → display name: {"gpt2": "GPT-2"}
    probe = ""  # the word embedding's name without prefix

    @classmethod
    def parse(cls, cfg: dict, model_type: str) -> dict:
        """ModelInfo's fields (all but path, name, family, has_tokenizer, vocab_size)
        from a config.json of `model_type`, or a ValueError naming what is wrong."""
        raise NotImplementedError

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

    def _layer_norm(self, x: np.ndarray, name: str) -> np.ndarray:
        """LayerNorm with the checkpoint's `name.weight` and `name.bias` (GPT-2, BERT)."""
        return layer_norm(
            x, self.w.read(f"{name}.weight"), self.w.read(f"{name}.bias"), self.info.norm_eps
        )

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
