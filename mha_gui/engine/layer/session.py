"""A session's file formats: the JSON session file (two versions) and the `.npz` arrays.

Sessions are plain JSON and arrays are `.npz` without pickle, so a file a student mails
to a teacher can be opened without trusting it. Every write goes to a temporary file in
the target folder and is renamed into place, so a failed write leaves nothing behind.

A session of at most PACK_ABOVE_NUMBERS numbers is written as version 1 (nested lists,
readable and diffable); a larger one as version 2, every matrix one hex block
(engine/layer/session_codec.py), which writes and reads at the speed of the disk. Both
versions are read, and validated as strictly.

The Session value itself is in session_value.py; its names are re-exported here, so
`from mha_gui.engine.layer.session import Session, load_session` imports both halves.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mha_gui.engine.attention.forward import Trace
from mha_gui.engine.layer import session_codec as codec
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import VALUE_LIMIT, Parameters, check_array, dims_text
from mha_gui.engine.layer.session_value import (
    CONTROL,
    MAX_SOURCE_LENGTH,
    MAX_TOKEN_LENGTH,
    Session,
    ViewState,
    default_tokens,
    same_array,
    validate_source,
    validate_tokens,
)
from mha_gui.engine.panels.stages import STAGES, stage_by_name

__all__ = [  # the value's names, re-exported, and this module's own
    "CONTROL",
    "MAX_SOURCE_LENGTH",
    "MAX_TOKEN_LENGTH",
    "Session",
    "ViewState",
    "default_tokens",
    "same_array",
    "validate_source",
    "validate_tokens",
    "FORMAT",
    "VERSION",
    "PACKED_VERSION",
    "VERSIONS",
    "PACK_ABOVE_NUMBERS",
    "TOP_LEVEL_KEYS",
    "MAX_SESSION_BYTES",
    "writable_target",
    "atomic_write",
    "number_count",
    "session_to_dict",
    "write_session_gently",
    "save_session",
    "session_from_dict",
    "load_session",
    "arrays_for_npz",
    "switch_arrays",
    "save_npz",
]

FORMAT = "mha-gui-session"
VERSION = 1  # nested lists
PACKED_VERSION = 2  # matrices (and the mask) may be hex blocks
VERSIONS = (VERSION, PACKED_VERSION)
# Sessions holding more numbers than this (parameters and mask) are written as version 2.
# Decimal text costs ~0.5–1.3 µs a number each way here (float repr, JSON parsing): at
# this size a version 1 file is ~6 MB, ~0.3 s to write or to open on a loaded machine,
# and any session a person reads by hand (the presets: at most ~1 100 numbers) stays one.
PACK_ABOVE_NUMBERS = 250_000
TOP_LEVEL_KEYS = ("format", "version", "config", "tokens", "matrices", "view", "mask", "source")
# A session file larger than this is refused before parsing: BERT-base at n=512 is ~60 MB
# as nested lists; n = 2048, d_model 768 as hex blocks ~56 MB.
MAX_SESSION_BYTES = 256 * 1024 * 1024


# ------------------------------------------------------------------ writing -------
def writable_target(path: str | os.PathLike) -> Path:
    """`path` as a file that may be written: not a folder, in a folder that exists (we
    never create folders a user did not ask for). The one wording of both refusals, for
    every writer (sessions, figures, the command line's --out and --handout)."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise ValueError(f"{str(target)!r} is a folder, not a file name")
    if not folder.is_dir():
        raise ValueError(f"folder {str(folder)!r} does not exist")
    return target


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` on a temporary file beside `path`, then rename it into place.

    The folder must already exist (we never create folders a user did not ask for); on
    any failure the temporary file is removed and the previous `path`, if any, survives.
    """
    target = writable_target(path)
    folder = target.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    except OSError as exc:  # read-only folder, no permission, disk full...
        raise ValueError(f"cannot write in folder {str(folder)!r}: {exc.strerror}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        # mkstemp makes 0600 files: give the result the mode a plain open() would have
        # (or keep the mode of the file being replaced).
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def number_count(session: Session) -> int:
    """How many numbers a session's file holds: every parameter entry and mask entry."""
    count = sum(a.size for a in session.params.as_dict().values())
    return count + (0 if session.mask is None else session.mask.size)


def session_to_dict(session: Session, *, packed: bool = False) -> dict:
    """The session file's JSON object: version 1 with nested lists, or with `packed`
    version 2 with every matrix (and the mask) a hex block."""
    return _skeleton(session, packed, codec.block if packed else lambda a: a.tolist())


def _skeleton(session: Session, packed: bool, matrix: Callable[[np.ndarray], object]) -> dict:
    data = {
        "format": FORMAT,
        "version": PACKED_VERSION if packed else VERSION,
        "config": session.config.to_dict(),
        "tokens": list(session.tokens),
        "matrices": {k: matrix(v) for k, v in session.params.as_dict().items()},
        "view": {
            "stage": STAGES[session.view.stage].name,
            "head": session.view.head,
            "query": session.view.query,
        },
    }
    if session.mask is not None:  # an extra block mask set from Python (True = blocked)
        data["mask"] = matrix(session.mask)
    if session.source:
        data["source"] = session.source
    return data


def write_session_gently(session: Session, path, *, pack_above: int = PACK_ABOVE_NUMBERS) -> Path:
    """Write the session file: version 2 (hex blocks) above `pack_above` numbers, else
    version 1. The text is exactly json.dumps(session_to_dict(...), indent=1) plus a
    newline, made and written a piece at a time (a row of nested lists, or ~1 MB of hex
    digits): a worker thread writing it holds the interpreter's lock ~1 ms at a time,
    and at n = 2048, d_model 768 the whole write takes a fraction of a second."""
    packed = number_count(session) > pack_above
    arrays: list[np.ndarray] = []
    slot = codec.slot_maker(arrays)
    if packed:
        skeleton = _skeleton(session, True, lambda a: {**_block_head(a), "hex": slot(a)})
    else:
        skeleton = _skeleton(session, False, slot)

    def write(tmp: Path) -> None:
        with tmp.open("wb") as f:
            for piece in codec.file_pieces(skeleton, arrays, packed):
                f.write(piece)

    return atomic_write(path, write)


def _block_head(array: np.ndarray) -> dict:
    return {"dtype": "bool" if array.dtype == bool else "float64", "shape": list(array.shape)}


def save_session(session: Session, path, *, pack_above: int = PACK_ABOVE_NUMBERS) -> Path:
    """Write the session file (see `write_session_gently`, the one writer). float64
    values round-trip bit-exactly: repr floats in version 1, their bytes in version 2."""
    return write_session_gently(session, path, pack_above=pack_above)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a finite number (NaN and Infinity are not allowed)")


def session_from_dict(data, *, blobs: dict | None = None) -> Session:
    """Validate a parsed session object completely; every message names the key at fault.

    `blobs` maps the placeholders `load_session` put in place of long hex strings to
    their digits (session_codec.split_hex_blocks)."""
    if not isinstance(data, dict):
        raise ValueError("a session file must hold a JSON object at the top level")
    if data.get("format") != FORMAT:
        raise ValueError(f'"format" must be "{FORMAT}", got {data.get("format")!r}')
    version = data.get("version")
    if type(version) is not int or version not in VERSIONS:
        raise ValueError(
            f'"version" {version!r} is not supported (this program reads versions '
            f"{' and '.join(str(v) for v in VERSIONS)})"
        )
    packed = version == PACKED_VERSION
    unknown_keys = sorted(set(data) - set(TOP_LEVEL_KEYS))
    if unknown_keys:
        raise ValueError(
            f"session has unknown key(s): {', '.join(unknown_keys)} "
            f"(known: {', '.join(TOP_LEVEL_KEYS)})"
        )
    for key in ("config", "tokens", "matrices"):
        if key not in data:
            raise ValueError(f'session is missing the "{key}" key')
    config = Config.from_dict(data["config"])
    tokens = validate_tokens(data["tokens"], config.n)
    matrices = data["matrices"]
    if not isinstance(matrices, dict):
        kinds = "nested lists or hex blocks" if packed else "nested lists"
        raise ValueError(f'"matrices" must be an object mapping names to {kinds}')
    shapes = config.parameter_shapes()
    unknown = sorted(set(matrices) - set(shapes))
    if unknown:
        hint = " (biases are off in the config)" if any(u.startswith("b_") for u in unknown) else ""
        raise ValueError(f'"matrices" has unexpected key(s) {", ".join(unknown)}{hint}')
    arrays = {}
    for name, shape in shapes.items():
        if name not in matrices:
            raise ValueError(f'"matrices" is missing {name}')
        value, key, dims = matrices[name], f"matrices.{name}", dims_text(name, config)
        if packed and isinstance(value, dict):
            value = codec.decode_block(key, value, shape, "float64", dims, blobs)
        elif not _is_nested_numbers(value):
            also = " or a hex block" if packed else ""
            raise ValueError(f"{key} must be nested lists of numbers{also}")
        arrays[name] = check_array(key, value, shape, dims, limit=VALUE_LIMIT)
    mask = data.get("mask")
    if mask is not None:
        n = config.n
        if packed and isinstance(mask, dict):
            mask = codec.decode_block("mask", mask, (n, n), "bool", f"n={n}", blobs)
        elif not _is_nested_bools(mask):
            also = " or a hex block" if packed else ""
            raise ValueError(f'"mask" must be nested lists of true/false (true = blocked){also}')
        if not isinstance(mask, np.ndarray):
            mask = np.array(mask, dtype=bool)
        if mask.shape != (n, n):
            raise ValueError(f'"mask" has shape {mask.shape} but n={n} needs an n×n matrix')
    view_data = data.get("view", {})
    if not isinstance(view_data, dict):
        raise ValueError('"view" must be an object with stage, head and query')
    stage = view_data.get("stage", 0)
    if isinstance(stage, str):
        stage = stage_by_name(stage).index
    view = ViewState(stage, view_data.get("head", 0), view_data.get("query", 0))
    source = validate_source(data.get("source", ""))
    return Session(config, tokens, Parameters(**arrays), view.validated(config), mask, source)


def _is_nested_bools(value) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, list) and all(_is_nested_bools(v) for v in value)


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    """A hand-edited file with a key twice is ambiguous: say so instead of keeping the last."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f'duplicate key "{key}": each key may appear once per object')
        out[key] = value
    return out


def _is_nested_numbers(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, list) and all(_is_nested_numbers(v) for v in value)


def load_session(path) -> Session:
    """Read and fully validate a session file; raise ValueError with a readable reason."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{str(p)!r} is a folder, not a session file")
    if not p.is_file():
        raise ValueError(f"session file {str(p)!r} does not exist")
    if p.stat().st_size > MAX_SESSION_BYTES:
        raise ValueError(f"session file {str(p)!r} is larger than {MAX_SESSION_BYTES >> 20} MB")
    try:
        raw = p.read_bytes()
        start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a leading BOM (Notepad) is fine
        # Long hex strings are taken out first: the parser then reads only the rest.
        skeleton, blobs = codec.split_hex_blocks(raw, start)
        del raw  # the blobs keep what they need of it
        text = skeleton.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {str(p)!r}: {exc}") from None
    try:
        data = json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p.name} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise ValueError(f"{p.name} is nested too deeply to be a session") from None
    except ValueError as exc:  # NaN/Infinity, a duplicate key
        raise ValueError(f"{p.name}: {exc}") from None
    try:
        return session_from_dict(data, blobs=blobs)
    except ValueError as exc:
        raise ValueError(f"{p.name}: {exc}") from None


# -------------------------------------------------------------------- arrays ------
def arrays_for_npz(session: Session, trace: Trace | None = None) -> dict[str, np.ndarray]:
    """Every parameter and intermediate under the npz keys (no object arrays)."""
    t = trace if trace is not None else session.run()
    out = dict(session.params.as_dict())
    out.update(t.as_dict())
    out["tokens"] = np.array(session.tokens, dtype=str)
    out.update(switch_arrays(session.config))
    return out


def switch_arrays(config: Config) -> dict[str, np.ndarray]:
    """RoPE and ablation settings as plain npz arrays (no pickle), only when in use.

    With RoPE: `rope_theta` (float scalar) and, with Llama 3 scaling, one scalar
    `rope_scaling_<key>` per value (`rope_scaling_rope_type` is the string "llama3").
    With ablation: `ablate`, the int64 indices of the switched-off query heads.
    """
    out: dict[str, np.ndarray] = {}
    if config.rope:
        out["rope_theta"] = np.array(config.rope_theta)
        for key, value in (config.rope_scaling or {}).items():
            out[f"rope_scaling_{key}"] = np.array(value)
    if config.ablate:
        out["ablate"] = np.array(config.ablate, dtype=np.int64)
    return out


def save_npz(session: Session, path, trace: Trace | None = None) -> Path:
    arrays = arrays_for_npz(session, trace)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    return atomic_write(path, write)
