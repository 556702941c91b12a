"""The engine must import in a notebook without Qt — checked in a fresh interpreter."""

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "mha_gui" / "engine"
QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6")


def test_no_qt_import_statement_in_engine_sources():
    offenders = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in QT]
    assert offenders == []


def test_importing_and_running_the_engine_loads_no_qt_module():
    code = (
        "import sys; from mha_gui.engine import load_preset, forward; load_preset('toy').run();"
        f"bad=[m for m in sys.modules if m.split('.')[0] in {QT!r}]; print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
