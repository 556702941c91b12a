"""Autosave files: one per running copy of the app, each remembering its original file.

    <settings folder>/mha-gui-autosave-<pid>.json     the session (a normal session file)
    <settings folder>/mha-gui-autosave-<pid>.origin   {"path": "/where/it/came/from.json"}

The process id in the name keeps two running copies from overwriting each other's work.
After a crash, the newest autosave whose process is no longer running is "orphaned" and
offered back, with its original path (so Save writes where the user expects). An
autosave of this very process id also counts as orphaned: it can only come from an
earlier run whose id the system has reused.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

PREFIX = "mha-gui-autosave"
LEGACY_NAME = f"{PREFIX}.json"  # before per-process names: treated as orphaned
_NAME = re.compile(rf"^{PREFIX}-(\d+)\.json$")


@dataclass(frozen=True)
class Autosave:
    data: Path  # the session file
    pid: int | None  # None for the legacy single file
    origin: Path | None  # the file the work was opened from / saved to, if any

    @property
    def sidecar(self) -> Path:
        return self.data.with_suffix(".origin")

    def remove(self) -> None:
        for p in (self.data, self.sidecar):
            with contextlib.suppress(OSError):
                p.unlink(missing_ok=True)


def data_path(folder: Path, pid: int | None = None) -> Path:
    return Path(folder) / f"{PREFIX}-{os.getpid() if pid is None else pid}.json"


def write_origin(data: Path, origin: Path | None) -> None:
    """Record beside the autosave which file the work belongs to (None: never saved)."""
    text = json.dumps({"path": str(origin) if origin is not None else None})
    Path(data).with_suffix(".origin").write_text(text, encoding="utf-8")


def read_origin(data: Path) -> Path | None:
    try:
        value = json.loads(Path(data).with_suffix(".origin").read_text(encoding="utf-8"))
        path = value.get("path") if isinstance(value, dict) else None
    except (OSError, ValueError):
        return None
    return Path(path) if isinstance(path, str) and path else None


def pid_running(pid: int) -> bool:
    """True if a process with this id exists (another copy of the app, most likely)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        try:
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        finally:
            kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


def orphaned(folder: Path) -> list[Autosave]:
    """Autosaves nobody running owns, newest first."""
    folder = Path(folder)
    found: list[tuple[float, Autosave]] = []
    if not folder.is_dir():
        return []
    for data in folder.glob(f"{PREFIX}*.json"):
        match = _NAME.match(data.name)
        if match:
            pid = int(match.group(1))
            if pid != os.getpid() and pid_running(pid):
                continue  # another running copy's work in progress
        elif data.name == LEGACY_NAME:
            pid = None
        else:
            continue
        try:
            mtime = data.stat().st_mtime
        except OSError:
            continue
        found.append((mtime, Autosave(data, pid, read_origin(data))))
    found.sort(key=lambda item: item[0], reverse=True)
    return [a for _, a in found]
