"""Download a model from the Hugging Face hub — only when the user asks for it.

Nothing in mha-gui downloads anything on its own: this module runs from File ▸ Open
model… ▸ Download and from `mha-gui download REPO_ID`, nowhere else. It fetches only what
the app reads (config.json, tokenizer.json, the .safetensors weights and their index) with
`huggingface_hub` into the standard cache, where `discover_models` finds them next time.

    plan = plan_download("openai-community/gpt2")     # asks the hub for names and sizes
    print(plan.total_bytes, plan.files)                 # shown to the user before anything
    folder = download(plan, progress=print, cancelled=lambda: False)

Two steps so that a window can show the size and ask first. A download that fails or is
cancelled removes the snapshot folder it started, so no half model is left looking
complete (the weights index, the file that makes a sharded model look whole, comes last).
Every failure is a `DownloadError` with one sentence for the user. The hub's address is
`$HF_ENDPOINT` (read at call time: tests point it at a local server), else the public hub.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mha_gui.engine.models.cache import cache_folders
from mha_gui.engine.models.families import SUPPORTED
from mha_gui.engine.models.safetensors import INDEX_NAME

DEFAULT_ENDPOINT = "https://huggingface.co"
CONFIG_NAME = "config.json"
TOKENIZER_NAME = "tokenizer.json"
#: a config.json larger than this is not a model configuration
MAX_CONFIG_BYTES = 1 << 20

Progress = Callable[[int, int], None] | None  # (bytes done, bytes in all)


class DownloadError(Exception):
    """A download that cannot go on; str() is one sentence for the user."""


class DownloadCancelled(DownloadError):
    """The user pressed Cancel; what was fetched so far has been removed."""


@dataclass(frozen=True)
class DownloadPlan:
    """What `download` will fetch: the repo at one commit, each file with its size."""

    repo_id: str
    commit: str
    model_type: str
    files: tuple[tuple[str, int], ...]
    endpoint: str

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def check_repo_id(repo_id: str) -> str:
    """`org/name` or `name`, as the hub spells them; anything else is refused before any
    request (a path, a URL, spaces)."""
    text = repo_id.strip() if isinstance(repo_id, str) else ""
    parts = text.split("/")
    ok = (
        text
        and len(text) <= 96
        and len(parts) <= 2
        and all(p and p[0] not in ".-" and all(c.isalnum() or c in "-_." for c in p) for p in parts)
        and ".." not in text
    )
    if not ok:
        raise DownloadError(
            f"{repo_id!r} is not a Hugging Face model id (like 'gpt2' or 'Qwen/Qwen2.5-0.5B')"
        )
    return text


def _hub_errors():
    from huggingface_hub import errors

    return errors


def _explain(repo_id: str, exc: Exception) -> DownloadError:
    """One sentence for whatever the hub library raised."""
    errors = _hub_errors()
    if isinstance(exc, errors.RepositoryNotFoundError | errors.GatedRepoError):
        return DownloadError(
            f"the hub has no public model {repo_id!r} (check the spelling; private and "
            f"gated models are not supported)"
        )
    if isinstance(exc, errors.RevisionNotFoundError | errors.EntryNotFoundError):
        return DownloadError(f"the hub's copy of {repo_id!r} is missing a file it listed")
    if isinstance(exc, errors.HfHubHTTPError):
        return DownloadError(f"the hub refused the download of {repo_id!r}: {exc}".split("\n")[0])
    if (
        isinstance(exc, OSError | errors.OfflineModeIsEnabled)
        or "connect" in type(exc).__name__.lower()
    ):
        return DownloadError(
            f"cannot reach the Hugging Face hub at {endpoint()} (offline?): {repo_id!r} was "
            f"not downloaded"
        )
    return DownloadError(f"the download of {repo_id!r} failed: {exc}".split("\n")[0])


def _pick_files(names: dict[str, int | None], repo_id: str) -> list[str]:
    """config.json, tokenizer.json, then the weights; the index (if any) last."""
    for needed in (CONFIG_NAME, TOKENIZER_NAME):
        if needed not in names:
            raise DownloadError(f"{repo_id!r} has no {needed} in its top folder")
    weights = sorted(n for n in names if "/" not in n and n.endswith(".safetensors"))
    if not weights:
        raise DownloadError(
            f"{repo_id!r} has no .safetensors weights (mha-gui does not read pickled "
            f"pytorch_model.bin files)"
        )
    files = [CONFIG_NAME, TOKENIZER_NAME, *weights]
    if INDEX_NAME in names:
        files.append(INDEX_NAME)
    elif len(weights) > 1:
        # several weight files and no index: the model is one of them (e.g. a
        # consolidated copy beside the shards is never wanted) — keep the plain name
        files = [CONFIG_NAME, TOKENIZER_NAME, *[w for w in weights if w == "model.safetensors"]]
        if len(files) == 2:
            raise DownloadError(f"{repo_id!r} has several weight files and no index to join them")
    return files


def plan_download(repo_id: str, *, revision: str = "main") -> DownloadPlan:
    """Ask the hub what `download` would fetch, and check the model family first (its
    config.json is fetched — a few kB — so an unsupported model is refused before the
    weights)."""
    from huggingface_hub import HfApi, hf_hub_download

    repo_id = check_repo_id(repo_id)
    url = endpoint()
    try:
        info = HfApi(endpoint=url, token=False).model_info(
            repo_id, revision=revision, files_metadata=True
        )
    except Exception as exc:  # the hub library raises many kinds; each gets a sentence
        raise _explain(repo_id, exc) from exc
    names = {s.rfilename: s.size for s in (info.siblings or [])}
    files = _pick_files(names, repo_id)
    commit = info.sha or revision
    try:
        config_path = hf_hub_download(
            repo_id,
            CONFIG_NAME,
            revision=commit,
            endpoint=url,
            cache_dir=_cache_dir(),
            token=False,
        )
    except Exception as exc:
        raise _explain(repo_id, exc) from exc
    model_type = _model_type(Path(config_path), repo_id)
    sizes = []
    for name in files:
        size = names.get(name)
        sizes.append((name, int(size) if isinstance(size, int) and size >= 0 else 0))
    return DownloadPlan(repo_id, commit, model_type, tuple(sizes), url)


def _model_type(config_path: Path, repo_id: str) -> str:
    try:
        if config_path.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError("too large")
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DownloadError(f"{repo_id!r} has a config.json that is not JSON ({exc})") from exc
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if not isinstance(model_type, str) or model_type not in SUPPORTED:
        shown = model_type if isinstance(model_type, str) else "an unknown kind of"
        raise DownloadError(
            f"{repo_id!r} is {shown} model; mha-gui reads {', '.join(sorted(SUPPORTED))}"
        )
    return model_type


def _cache_dir() -> Path:
    return cache_folders()[0]


def _snapshot_folder(repo_id: str, commit: str) -> Path:
    return _cache_dir() / ("models--" + repo_id.replace("/", "--")) / "snapshots" / commit


def _progress_bar(report: Callable[[int], None], cancelled: Callable[[], bool]):
    """A tqdm the hub library drives while it streams a file: each chunk reports the bytes
    and gives Cancel its chance (raising from update() stops the stream)."""
    from tqdm.auto import tqdm

    class Bar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True  # nothing on the terminal: the caller shows progress
            super().__init__(*args, **kwargs)
            self.done = 0

        def update(self, n=1):
            if cancelled():
                raise DownloadCancelled("the download was cancelled; nothing was kept")
            self.done += n or 0
            report(self.done)

    return Bar


def download(
    plan: DownloadPlan, *, progress: Progress = None, cancelled: Callable[[], bool] | None = None
) -> Path:
    """Fetch the plan's files into the cache; return the snapshot folder (a model folder
    `open_layer` reads). On failure or Cancel the snapshot folder is removed again unless
    it was already there before."""
    from huggingface_hub import hf_hub_download

    cancelled = cancelled or (lambda: False)
    folder = _snapshot_folder(plan.repo_id, plan.commit)
    complete_before = all((folder / name).is_file() for name, _ in plan.files)
    existed = folder.exists()
    total = plan.total_bytes
    done_files = 0
    try:
        for name, size in plan.files:
            if cancelled():
                raise DownloadCancelled("the download was cancelled; nothing was kept")
            base = done_files

            def report(done: int, base: int = base) -> None:
                if progress:
                    progress(base + done, total)

            hf_hub_download(
                plan.repo_id,
                name,
                revision=plan.commit,
                endpoint=plan.endpoint,
                cache_dir=_cache_dir(),
                token=False,
                tqdm_class=_progress_bar(report, cancelled),
            )
            done_files += size
            if progress:
                progress(done_files, total)
    except DownloadError:
        _forget(folder, existed and complete_before)
        raise
    except Exception as exc:
        _forget(folder, existed and complete_before)
        raise _explain(plan.repo_id, exc) from exc
    return folder


def _forget(folder: Path, keep: bool) -> None:
    """Remove a snapshot this download started (its blobs stay as unreferenced cache
    files, which the hub's own cache tools clean up) and any half-written blob."""
    if keep:
        return
    shutil.rmtree(folder, ignore_errors=True)
    blobs = folder.parent.parent / "blobs"
    for part in blobs.glob("*.incomplete"):
        part.unlink(missing_ok=True)
