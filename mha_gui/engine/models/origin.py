"""Where an opened layer came from: the model folder, the sentence and the layer.

The window keeps it beside the session (File ▸ Open model…, `mha-gui --model`), so the
model view can draw every layer × head of the same sentence and open another layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mha_gui.engine.models.loader import Progress, attention_maps, open_layer


@dataclass(frozen=True)
class ModelOrigin:
    path: Path
    layer: int
    text: str | None = None
    token_ids: tuple[int, ...] | None = None

    @classmethod
    def make(cls, path, layer: int, text=None, token_ids=None) -> ModelOrigin:
        ids = None if token_ids is None else tuple(int(i) for i in token_ids)
        return cls(Path(path), int(layer), text, ids)

    def _input(self) -> dict:
        ids = None if self.token_ids is None else list(self.token_ids)
        return {"text": self.text, "token_ids": ids}

    def open(self, progress: Progress = None):
        """The layer as a Session (engine.models.open_layer)."""
        return open_layer(self.path, self.layer, progress=progress, **self._input())

    def maps(self, progress: Progress = None):
        """Every layer × head's attention weights on the same sentence (ModelAttention)."""
        return attention_maps(self.path, progress=progress, **self._input())

    def at_layer(self, layer: int) -> ModelOrigin:
        return ModelOrigin(self.path, int(layer), self.text, self.token_ids)
