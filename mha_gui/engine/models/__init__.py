"""Real models: one attention layer of GPT-2, BERT, Llama, Mistral or Qwen2, read from a
local Hugging Face folder (no torch, nothing downloaded) and opened as a Session.

    from mha_gui.engine.models import discover_models, describe_model, open_layer
    for m in discover_models():                 # the local Hugging Face cache
        print(m.name, m.path, m.supported)
    info = describe_model(path)                 # ModelInfo: family, n_layers, n_heads, ...
    session = open_layer(path, 5, text="The cat sat on the mat")   # layer 5 (0-based)
    grid = attention_maps(path, text="...")    # grid.weights: (layers, h, n, n)
    session = grid.session(3)                   # a clicked layer, no blocks run again
"""

from mha_gui.engine.models.cache import FoundModel, cache_folders, discover_models
from mha_gui.engine.models.families import SUPPORTED, ModelInfo
from mha_gui.engine.models.loader import (
    ModelAttention,
    attention_maps,
    describe_model,
    open_layer,
    tokenize,
)

__all__ = [
    "SUPPORTED",
    "FoundModel",
    "ModelAttention",
    "ModelInfo",
    "attention_maps",
    "cache_folders",
    "describe_model",
    "discover_models",
    "open_layer",
    "tokenize",
]
