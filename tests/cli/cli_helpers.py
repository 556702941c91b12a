"""Helpers shared by the command-line tests (tests/test_cli*.py)."""

from __future__ import annotations

from mha_gui.cli import main


def run(capsys, *argv):
    """`mha-gui *argv` in-process (arguments may be paths or numbers): (exit status,
    stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err
