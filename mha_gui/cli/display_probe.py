"""Can a window open here? Without a display, or without the system libraries of Qt's
X11 plugin, Qt aborts the whole process with a screenful of plugin messages; these
checks say why in one line instead, before any window is made."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

from mha_gui.cli.arguments import CliError


def check_display() -> None:
    """Without a display Qt aborts the process with a screenful of plugin messages."""
    if not sys.platform.startswith("linux"):
        return
    if os.environ.get("QT_QPA_PLATFORM") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if not os.environ.get("DISPLAY"):
        raise CliError(
            "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "`mha-gui info` and `mha-gui export` work without one"
        )
    missing = missing_x11_library()
    if missing:
        raise CliError(
            f"Qt cannot open a window on X11: the system library {missing} is missing "
            f"(pip cannot install it; Debian/Ubuntu: sudo apt-get install {X11_PACKAGES})"
        )


# What Qt's X11 plugin needs beyond a bare X server, as Debian/Ubuntu package names.
X11_PACKAGES = "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0"


def missing_x11_library() -> str | None:
    """Load Qt's xcb plugin the way Qt will; the loader names the first missing library.

    Without this, Qt aborts the whole process with a page of plugin messages.
    """
    import PySide6

    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        return None
    try:
        ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY)
    except OSError as exc:
        exc = exc.__cause__ or exc  # a frozen bundle's loader wraps the system's message
        return str(exc).split(":")[0].strip() or "a library of Qt's X11 plugin"
    return None
