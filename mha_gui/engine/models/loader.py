"""Open one attention layer of a real model, on a sentence, as an ordinary Session.

    from mha_gui.engine.models import describe_model, open_layer, attention_maps
    info = describe_model("~/models/gpt2")          # family, layers, heads, positions
    session = open_layer("~/models/gpt2", 5, text="The cat sat on the mat")
    maps = attention_maps("~/models/gpt2", text="The cat sat on the mat")  # every layer

Layers are numbered from 0, like Hugging Face's `model.h[i]` / `model.layers[i]`; the
session's source reads "gpt2 · layer 5 of 12" (index 5 of 12 layers, 0..11).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mha_gui.engine.attention.validation import out_of_range
from mha_gui.engine.layer.config import MAX_MEMORY_BYTES, Config
from mha_gui.engine.layer.parameters import Parameters
from mha_gui.engine.layer.session import Session
from mha_gui.engine.models.families import ARCHITECTURES, ModelInfo, parse_config
from mha_gui.engine.models.safetensors import Checkpoint
from mha_gui.engine.models.tokens import TOKENIZER_NAME, TokenizerFile, id_labels
from mha_gui.engine.models.weights import Weights

# progress(done, total): called after each block; raise from it to cancel.
Progress = Callable[[int, int], object] | None


def model_folder(path: str | Path) -> Path:
    """The folder as a Path, or a ValueError saying why it is not a model folder."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise ValueError(f"model folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is a file, not a model folder")
    if not (folder / "config.json").is_file():
        raise ValueError(
            f"{str(folder)!r} is not a model folder: it has no config.json (a Hugging Face "
            f"model folder holds config.json, model.safetensors and tokenizer.json)"
        )
    return folder


def model_name(folder: Path) -> str:
    """A short name for titles: the repository name for a Hugging Face cache snapshot."""
    folder = folder.resolve()
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        return folder.parent.parent.name.split("--")[-1]
    return folder.name or str(folder)


def _read_config(folder: Path) -> dict:
    path = folder / "config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{path} must hold a JSON object")
    return cfg


def describe_model(path: str | Path) -> ModelInfo:
    """Family, layers, heads, widths and positions of a model folder (reads no weights)."""
    folder = model_folder(path)
    info = parse_config(
        _read_config(folder), folder, model_name(folder), (folder / TOKENIZER_NAME).is_file()
    )
    Checkpoint(folder)  # the weights are there (and their index or header is sound)
    return info


def _layer_index(info: ModelInfo, layer) -> int:
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise ValueError(f"layer must be a whole number, got {layer!r}")
    layer = int(layer)
    if not -info.n_layers <= layer < info.n_layers:
        raise ValueError(out_of_range("layer", layer, info.n_layers, "layers", info.name))
    return layer % info.n_layers


def tokenize(
    path: str | Path,
    text: str | None = None,
    token_ids: Sequence[int] | None = None,
    info: ModelInfo | None = None,
) -> tuple[list[int], list[str]]:
    """Token ids and readable labels of `text` (or of `token_ids`) for a model folder.

    The text goes through the folder's tokenizer.json (special tokens included, e.g.
    BERT's [CLS] … [SEP]); without a tokenizer.json pass `token_ids` (labels "#id").
    """
    info = info or describe_model(path)
    folder = info.path
    tok_path = folder / TOKENIZER_NAME
    if (text is None) == (token_ids is None):
        raise ValueError("give either a text or token ids (not both)")
    if text is not None:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the text is empty: type a sentence to run the model on")
        if not tok_path.is_file():
            raise ValueError(
                f"{folder} has no {TOKENIZER_NAME}: give token ids instead of a text "
                f"(--token-ids 1,2,3)"
            )
        ids, labels = TokenizerFile(tok_path).encode(text)
        if not ids:
            raise ValueError("the text gives no tokens")
    else:
        ids = list(token_ids)
        if not ids:
            raise ValueError("the token ids are empty: give at least one")
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise ValueError(f"token id {i!r} is not a whole number")
            if not 0 <= i < info.vocab_size:
                vocabulary = f"{info.name}'s vocabulary"
                raise ValueError(out_of_range("token id", i, info.vocab_size, "ids", vocabulary))
        ids = [int(i) for i in ids]
        labels = TokenizerFile(tok_path).labels(ids) if tok_path.is_file() else id_labels(ids)
    if len(ids) > info.max_positions:
        raise ValueError(
            f"the text is {len(ids)} tokens long but {info.name} takes at most "
            f"{info.max_positions} (max_position_embeddings)"
        )
    return ids, labels


def layer_config(info: ModelInfo, layer: int, n: int) -> Config:
    """The engine Config of layer `layer` on n tokens, or the reason it is too large."""
    bias = info.qkv_bias or info.o_bias
    try:
        return Config(
            n=n,
            d_model=info.d_model,
            h=info.n_heads,
            d_k=info.head_dim,
            d_v=info.head_dim,
            h_kv=info.n_kv_heads,
            causal=info.causal,
            bias=bias,
            scale=info.layer_scale(layer),
            rope=info.rope,
            **(
                {"rope_theta": info.rope_theta, "rope_scaling": info.rope_scaling}
                if info.rope
                else {}
            ),
        )
    except ValueError as exc:
        raise ValueError(f"{info.source(layer)} cannot be opened: {exc}") from None


def _open(path, text, token_ids, layers=()):
    info = describe_model(path)
    layers = [_layer_index(info, layer) for layer in layers]
    ids, labels = tokenize(path, text, token_ids, info=info)
    kind = ARCHITECTURES[info.family]
    arch = kind(info, Weights(Checkpoint(info.path), kind.probe, info.family_name))
    return info, arch, ids, labels, layers


def _residual_streams(arch, ids, last: int, progress: Progress, on_attention=None):
    """Run blocks 0..last-1; yields nothing, returns the stream entering block `last`."""
    x = arch.embed(np.asarray(ids))
    total = last + 1
    for layer in range(last):
        params = arch.attention_weights(layer)
        x_attn = arch.attention_input(layer, x)
        trace = arch.attend(layer, x_attn, params)
        if on_attention is not None:
            on_attention(layer, x_attn, trace)
        x = arch.after_attention(layer, x, trace.output)
        if progress is not None:
            progress(layer + 1, total)
    return x


def open_layer(
    path: str | Path,
    layer: int,
    text: str | None = None,
    token_ids: Sequence[int] | None = None,
    *,
    progress: Progress = None,
) -> Session:
    """Layer `layer` (0-based; negative counts from the end) of the model in `path` on a
    sentence, as a Session whose X is the exact input of that layer's attention.

    Raises ValueError with one readable sentence for any bad folder, file, layer or text.
    """
    info, arch, ids, labels, (layer,) = _open(path, text, token_ids, [layer])
    layer_config(info, layer, len(ids))  # refuse a layer too large before any work
    x = _residual_streams(arch, ids, layer, progress)
    session = _layer_session(arch, layer, arch.attention_input(layer, x), labels)
    if progress is not None:
        progress(layer + 1, layer + 1)
    return session


def _layer_session(arch, layer: int, x_attn: np.ndarray, labels: list[str]) -> Session:
    info, n = arch.info, x_attn.shape[0]
    params = Parameters(X=x_attn, **arch.attention_weights(layer))
    return Session(
        layer_config(info, layer, n),
        labels,
        params,
        mask=arch.mask(layer, n),
        source=info.source(layer),
    )


@dataclass
class ModelAttention:
    """Every layer × head's attention weights for one sentence (the model view's grid)."""

    info: ModelInfo
    token_ids: list[int]
    tokens: list[str]
    layers: tuple[int, ...]
    weights: np.ndarray  # (len(layers), h, n, n) float32, rows sum to 1
    inputs: dict[int, np.ndarray] = field(repr=False)  # layer → X of its attention
    _arch: object = field(repr=False)

    def of(self, layer: int) -> np.ndarray:
        """The (h, n, n) weights of model layer `layer`."""
        return self.weights[self.layers.index(layer)]

    def session(self, layer: int) -> Session:
        """Layer `layer` as a Session, like `open_layer`, without running the blocks again."""
        if layer not in self.inputs:
            raise ValueError(f"layer {layer} is not among the maps' layers {list(self.layers)}")
        return _layer_session(self._arch, layer, self.inputs[layer].copy(), list(self.tokens))


def attention_maps(
    path: str | Path,
    text: str | None = None,
    token_ids: Sequence[int] | None = None,
    *,
    layers: Sequence[int] | None = None,
    progress: Progress = None,
) -> ModelAttention:
    """Attention weights of every layer (or of `layers`) in one pass through the blocks."""
    info, arch, ids, labels, chosen = _open(path, text, token_ids, layers or ())
    wanted = tuple(sorted(set(chosen))) if layers is not None else tuple(range(info.n_layers))
    if not wanted:
        raise ValueError("no layers asked for")
    n = len(ids)
    need = len(wanted) * (info.n_heads * n * n * 4 + n * info.d_model * 8)
    if need > MAX_MEMORY_BYTES:
        raise ValueError(
            f"the attention maps of {len(wanted)} layers × {info.n_heads} heads on {n} tokens "
            f"need {need / 1e9:.1f} GB (limit {MAX_MEMORY_BYTES / 1e9:.1f} GB): use fewer "
            f"tokens or layers"
        )
    out = np.empty((len(wanted), info.n_heads, n, n), dtype=np.float32)
    inputs: dict[int, np.ndarray] = {}

    def keep(layer, x_attn, trace):
        if layer in wanted:
            out[wanted.index(layer)] = trace.weights
            inputs[layer] = x_attn

    x = _residual_streams(arch, ids, wanted[-1], progress, keep)
    last = wanted[-1]
    x_attn = arch.attention_input(last, x)
    keep(last, x_attn, arch.attend(last, x_attn, arch.attention_weights(last)))
    if progress is not None:
        progress(last + 1, last + 1)
    return ModelAttention(info, ids, labels, wanted, out, inputs, arch)
