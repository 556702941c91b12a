"""The supported model families, registered once: every list of them is derived from here.

Each family is an `Architecture` subclass in its own module (engine/models/gpt2.py,
bert.py, llama.py) that carries the config.json model types it reads with their titles,
its config.json parsing and its blocks. Adding a family is a new module and one entry
in `FAMILIES`; the supported model types, their display names (the command line's help,
the window's menus and hints) and the refusal of an unknown one all follow.

Every block runs in float64 NumPy, written from the published formulas; the attention
of every block is the engine's own `forward()`.
"""

from __future__ import annotations

from pathlib import Path

from mha_gui.engine.models.architecture import Architecture
from mha_gui.engine.models.bert import BERT
from mha_gui.engine.models.gpt2 import GPT2
from mha_gui.engine.models.llama import Llama
from mha_gui.engine.models.model_config import ModelInfo, whole
from mha_gui.engine.models.numerics import ACTIVATIONS

FAMILIES: tuple[type[Architecture], ...] = (GPT2, BERT, Llama)

# model_type → the Architecture that reads it, and its display name
ARCHITECTURES: dict[str, type[Architecture]] = {
    model_type: arch for arch in FAMILIES for model_type in arch.titles
}
FAMILY_NAMES: dict[str, str] = {
    model_type: title for arch in FAMILIES for model_type, title in arch.titles.items()
}
SUPPORTED = tuple(FAMILY_NAMES)


def family_titles(last: str = " or ") -> str:
    """The supported families for a sentence: `GPT-2, BERT, Llama, Mistral or Qwen2`
    (`last` joins the final two: " or ", ", ", " and ")."""
    titles = list(FAMILY_NAMES.values())
    return ", ".join(titles[:-1]) + last + titles[-1] if len(titles) > 1 else titles[0]


def parse_config(cfg: dict, path: Path, name: str, has_tokenizer: bool) -> ModelInfo:
    """The ModelInfo of a model folder's config.json, or a ValueError in one sentence."""
    family = cfg.get("model_type")
    if not isinstance(family, str) or family not in ARCHITECTURES:
        raise ValueError(
            f"model_type {family!r} in {path / 'config.json'} is not supported "
            f"(supported: {', '.join(SUPPORTED)})"
        )
    info = ARCHITECTURES[family].parse(cfg, family)
    info.setdefault("rope_theta", None)
    info.setdefault("rope_scaling", None)
    info.setdefault("sliding_window", None)
    info.setdefault("window_layers", ())
    if not isinstance(info["activation"], str) or info["activation"] not in ACTIVATIONS:
        raise ValueError(
            f"activation {info['activation']!r} is not supported "
            f"(supported: {', '.join(ACTIVATIONS)})"
        )
    if info["n_heads"] % info["n_kv_heads"]:
        raise ValueError(
            f"num_key_value_heads={info['n_kv_heads']} does not divide "
            f"num_attention_heads={info['n_heads']}"
        )
    info["vocab_size"] = whole(cfg, "vocab_size", 1)
    return ModelInfo(
        path=path,
        name=name,
        family=family,
        family_name=FAMILY_NAMES[family],
        has_tokenizer=has_tokenizer,
        **info,
    )


__all__ = [
    "ARCHITECTURES",
    "BERT",
    "FAMILIES",
    "FAMILY_NAMES",
    "GPT2",
    "SUPPORTED",
    "Architecture",
    "Llama",
    "ModelInfo",
    "family_titles",
    "parse_config",
]
