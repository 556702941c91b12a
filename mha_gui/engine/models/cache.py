"""Find model folders in the local Hugging Face cache (nothing is downloaded).

The hub cache lays a repository out as `models--ORG--NAME/snapshots/REVISION/`, with
`refs/main` naming the revision last downloaded. Its location is `$HF_HUB_CACHE`, else
`$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from mha_gui.engine.models.families import SUPPORTED
from mha_gui.engine.models.safetensors import INDEX_NAME


@dataclass(frozen=True)
class FoundModel:
    """A model folder in the cache: `name` like "openai-community/gpt2"."""

    name: str
    path: Path
    model_type: str | None
    revision: str

    @property
    def supported(self) -> bool:
        return self.model_type in SUPPORTED

    def __fspath__(self) -> str:  # open_layer(found, ...) works like open_layer(found.path)
        return str(self.path)


def cache_folders(environ: dict | None = None) -> list[Path]:
    """Where the hub cache may be, most specific first (duplicates removed)."""
    env = os.environ if environ is None else environ
    candidates = []
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(key):
            candidates.append(Path(env[key]))
    if env.get("HF_HOME"):
        candidates.append(Path(env["HF_HOME"]) / "hub")
    if env.get("XDG_CACHE_HOME"):
        candidates.append(Path(env["XDG_CACHE_HOME"]) / "huggingface" / "hub")
    home = env.get("HOME")
    if home:
        candidates.append(Path(home) / ".cache" / "huggingface" / "hub")
    out: list[Path] = []
    for c in candidates:
        c = c.expanduser()
        if c not in out:
            out.append(c)
    return out


def _has_weights(folder: Path) -> bool:
    return (folder / INDEX_NAME).is_file() or any(folder.glob("*.safetensors"))


def _model_type(folder: Path) -> str | None:
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    kind = data.get("model_type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def discover_models(environ: dict | None = None) -> list[FoundModel]:
    """Model folders (config.json + safetensors weights) in the local Hugging Face cache.

    For each repository, the revision `refs/main` points to, or else every snapshot.
    Sorted by name; unsupported model types are listed too (see `FoundModel.supported`).
    """
    found: dict[Path, FoundModel] = {}
    for root in cache_folders(environ):
        if not root.is_dir():
            continue
        for repo in sorted(root.glob("models--*")):
            snapshots = repo / "snapshots"
            if not snapshots.is_dir():
                continue
            name = "/".join(repo.name.split("--")[1:])
            main = repo / "refs" / "main"
            revisions = []
            try:
                if main.is_file():
                    revisions = [main.read_text(encoding="utf-8").strip()]
            except (OSError, UnicodeDecodeError):
                revisions = []
            if not revisions or not (snapshots / revisions[0]).is_dir():
                revisions = sorted(p.name for p in snapshots.iterdir() if p.is_dir())
            for rev in revisions:
                folder = snapshots / rev
                if (folder / "config.json").is_file() and _has_weights(folder):
                    key = folder.resolve()
                    if key not in found:
                        found[key] = FoundModel(name, folder, _model_type(folder), rev)
    return sorted(found.values(), key=lambda m: (m.name.lower(), m.revision))
