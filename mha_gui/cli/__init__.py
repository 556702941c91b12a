"""Command line: open the app, list presets, print a layer's shapes and costs, export files.

Every user error ends with exit status 2 and one line `mha-gui: error: ...` on stderr —
no traceback, and no partial output file (exports write a temp file and rename it).

The parts, one idea each:

- arguments.py — the one-line error (`CliError`), argparse types and option groups;
- sessions.py — the session a command works on (preset, file or model layer, switches);
- commands.py — presets, info, export, the parser, and opening the window;
- models.py — models, heads and download;
- learning.py — train and worksheet;
- lessons.py — lessons, lesson and `--lesson`;
- display_probe.py — whether a window can open here (display, Qt's X11 libraries).
"""

from __future__ import annotations

import sys

from mha_gui.cli.arguments import EXPORT_SUFFIXES, CliError
from mha_gui.cli.commands import COMMANDS, SUBCOMMANDS, build_parser, cmd_open

# `info_text` is what `mha-gui info` prints; the statistics panel's tests compare with it.
from mha_gui.engine.panels.info import info_text

__all__ = ["EXPORT_SUFFIXES", "SUBCOMMANDS", "CliError", "build_parser", "info_text", "main"]


def main(argv: list[str] | None = None) -> int:
    """The `mha-gui` console script (and `python -m mha_gui`): exit status 0, 2 for a
    user's mistake (one line on stderr), 130 on Ctrl+C."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv or argv[0] not in (*SUBCOMMANDS, "-h", "--help", "--version"):
            return cmd_open(argv)
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except BrokenPipeError:  # `mha-gui info | head`: the reader left, nothing to report
        return 0
    except (CliError, ValueError, OSError) as exc:
        print(f"mha-gui: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
