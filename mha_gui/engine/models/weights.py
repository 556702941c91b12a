"""A model's tensors by their architecture name, whatever prefix the checkpoint used.

`transformer.h.0.attn.c_attn.weight`, `h.0.attn.c_attn.weight` and
`model.transformer.h.0...` are the same tensor: the prefix is found once, from the word
embedding's name, and every later name is looked up under it. Old BERT checkpoints call
LayerNorm's weight/bias gamma/beta; both are accepted.
"""

from __future__ import annotations

import numpy as np

from mha_gui.engine.attention.validation import out_of_range
from mha_gui.engine.models.safetensors import Checkpoint, check_finite, widen

# Largest float64 block made while multiplying by a big weight matrix (bounded memory).
CHUNK_VALUES = 1 << 22


class Weights:
    def __init__(self, checkpoint: Checkpoint, probe: str, family: str):
        self.ckpt = checkpoint
        names = checkpoint.names()
        self._names = names
        if probe in names:
            self.prefix = ""
        else:
            found = sorted(n for n in names if n.endswith("." + probe))
            if not found:
                raise ValueError(
                    f"tensor {probe!r} (with or without a prefix such as "
                    f"'transformer.', 'bert.' or 'model.') is missing from "
                    f"{checkpoint.where(probe)} in {checkpoint.folder}: is this a {family} "
                    f"checkpoint?"
                )
            self.prefix = min(found, key=len)[: -len(probe)]

    def name(self, short: str) -> str:
        full = self.prefix + short
        if full not in self._names:
            for a, b in ((".weight", ".gamma"), (".bias", ".beta")):
                if full.endswith(a) and full[: -len(a)] + b in self._names:
                    return full[: -len(a)] + b
        return full

    def has(self, short: str) -> bool:
        return self.name(short) in self._names

    def read(self, short: str) -> np.ndarray:
        return self.ckpt.read(self.name(short))

    def optional(self, short: str) -> np.ndarray | None:
        return self.read(short) if self.has(short) else None

    def rows(self, short: str, ids) -> np.ndarray:
        """Rows `ids` of an embedding matrix, read alone (the rest stays on disk)."""
        name = self.name(short)
        raw, _ = self.ckpt.raw(name)
        ids = np.asarray(ids, dtype=np.int64)
        if raw.ndim != 2:
            raise ValueError(f"tensor {name!r} has shape {raw.shape}, expected a matrix")
        if ids.size and (ids.min() < 0 or ids.max() >= raw.shape[0]):
            bad = int(ids[(ids < 0) | (ids >= raw.shape[0])][0])
            raise ValueError(out_of_range("token id", bad, raw.shape[0], "rows", repr(name)))
        return self.ckpt.read(name, rows=ids)

    def shape(self, short: str) -> tuple[int, ...]:
        return self.ckpt.info(self.name(short))[1].shape

    def linear(self, x: np.ndarray, short: str, *, out_in: bool) -> np.ndarray:
        """x @ W for a (in, out) matrix, x @ W.T for an (out, in) one (nn.Linear).

        The matrix is widened to float64 a slice at a time, so a large MLP never needs a
        float64 copy of its whole weight.
        """
        name = self.name(short)
        raw, dtype = self.ckpt.raw(name)
        if raw.ndim != 2 or raw.shape[1 if out_in else 0] != x.shape[-1]:
            raise ValueError(
                f"tensor {name!r} has shape {raw.shape}, which does not fit an input of "
                f"width {x.shape[-1]}"
            )
        rows = max(1, CHUNK_VALUES // max(1, raw.shape[1]))
        out = (
            np.empty((x.shape[0], raw.shape[0])) if out_in else np.zeros((x.shape[0], raw.shape[1]))
        )
        for a in range(0, raw.shape[0], rows):
            w = check_finite(widen(raw[a : a + rows], dtype), name)
            if out_in:
                out[:, a : a + rows] = x @ w.T
            else:
                out += x[:, a : a + rows] @ w
        self.ckpt.release(name)
        return out
