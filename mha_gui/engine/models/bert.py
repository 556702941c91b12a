"""BERT (post-LN): x = LN(x + attn(x)); x = LN(x + dense(gelu(intermediate(x)))).

The embeddings are word + position + token type 0, then LayerNorm; nn.Linear weights
are (out, in). Only absolute position embeddings are read.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.models.architecture import Architecture
from mha_gui.engine.models.model_config import classic_heads, positive, whole


class BERT(Architecture):
    titles = {"bert": "BERT"}
    probe = "embeddings.word_embeddings.weight"

    @classmethod
    def parse(cls, cfg: dict, model_type: str) -> dict:
        d = whole(cfg, "hidden_size", 768)
        h = whole(cfg, "num_attention_heads", 12)
        kind = cfg.get("position_embedding_type", "absolute")
        if kind not in (None, "absolute"):
            raise ValueError(
                f"BERT with position_embedding_type {kind!r} is not supported (only absolute)"
            )
        return dict(
            n_layers=whole(cfg, "num_hidden_layers", 12),
            **classic_heads(d, h),
            max_positions=whole(cfg, "max_position_embeddings", 512),
            causal=bool(cfg.get("is_decoder", False)),
            activation=cfg.get("hidden_act", "gelu"),
            norm_eps=positive(cfg, "layer_norm_eps", 1e-12),
            d_ff=whole(cfg, "intermediate_size", 4 * d),
        )

    def embed(self, ids):
        e = "embeddings"
        x = self.w.rows(f"{e}.word_embeddings.weight", ids)
        x = x + self.w.rows(f"{e}.position_embeddings.weight", np.arange(len(ids)))
        if self.w.has(f"{e}.token_type_embeddings.weight"):
            x = x + self.w.rows(f"{e}.token_type_embeddings.weight", [0])
        return self._layer_norm(x, f"{e}.LayerNorm")

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
        x = self._layer_norm(x + attn, f"{p}.attention.output.LayerNorm")
        m = self.activation(self._linear(x, f"{p}.intermediate.dense", True))
        return self._layer_norm(
            x + self._linear(m, f"{p}.output.dense", True), f"{p}.output.LayerNorm"
        )
