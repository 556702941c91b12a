"""GPT-2 (pre-LN): x += attn(ln_1(x)); x += mlp(ln_2(x)), mlp = c_proj(gelu_new(c_fc(·))).

Conv1D weights are stored (in, out): no transpose. One c_attn matrix holds Q, K and V
side by side; the scale can be off (`scale_attn_weights`) or divided by the layer's
number (`scale_attn_by_inverse_layer_idx`).
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.models.architecture import Architecture
from mha_gui.engine.models.model_config import classic_heads, positive, whole


class GPT2(Architecture):
    titles = {"gpt2": "GPT-2"}
    probe = "wte.weight"

    @classmethod
    def parse(cls, cfg: dict, model_type: str) -> dict:
        d = whole(cfg, "n_embd", 768, "hidden_size")
        h = whole(cfg, "n_head", 12, "num_attention_heads")
        return dict(
            n_layers=whole(cfg, "n_layer", 12, "num_hidden_layers"),
            **classic_heads(d, h),
            max_positions=whole(cfg, "n_positions", 1024, "max_position_embeddings"),
            causal=True,
            activation=cfg.get("activation_function", "gelu_new"),
            norm_eps=positive(cfg, "layer_norm_epsilon", 1e-5),
            d_ff=whole(cfg, "n_inner", 4 * d),
            scale=None if cfg.get("scale_attn_weights", True) else 1.0,
            scale_by_layer=bool(cfg.get("scale_attn_by_inverse_layer_idx", False)),
        )

    def embed(self, ids):
        positions = np.arange(len(ids))
        return self.w.rows("wte.weight", ids) + self.w.rows("wpe.weight", positions)

    def attention_input(self, layer, x):
        return self._layer_norm(x, f"h.{layer}.ln_1")

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
        m = self._layer_norm(x, f"h.{layer}.ln_2")
        m = self.activation(self._linear(m, f"h.{layer}.mlp.c_fc", True, out_in=False))
        return x + self._linear(m, f"h.{layer}.mlp.c_proj", True, out_in=False)
