"""The engine's modules live in subpackages (layer/, attention/, panels/, teaching/), but
the flat layout's names still import them: notebooks and the documented API
(`from mha_gui.engine.training import attention_loss`) were written  # engine_move: keep
against those names.

Each check runs in a fresh interpreter, where no flat name has been imported yet, so the
finder in engine/__init__.py is what answers.
"""

from __future__ import annotations

import subprocess
import sys

import mha_gui.engine as engine


def fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_documented_training_api_imports_from_its_flat_name():
    done = fresh(
        "from mha_gui.engine.training import attention_loss\n"  # engine_move: keep
        "from mha_gui.engine import forward, load_preset\n"
        "import mha_gui.engine.teaching.training as t\n"
        "print(attention_loss is t.attention_loss, callable(forward))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_every_flat_name_is_the_moved_module_itself():
    done = fresh(
        "import importlib, mha_gui.engine as e\n"
        "for name, sub in sorted(e._MOVED.items()):\n"
        "    moved = importlib.import_module(f'mha_gui.engine.{sub}.{name}')\n"
        "    flat = importlib.import_module('mha_gui.engine.' + name)\n"
        "    same = flat is moved and getattr(e, name) is moved\n"
        "    print(name, same, flat.__spec__.name == flat.__name__ == moved.__name__)"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(engine._MOVED) >= 39
    assert [line for line in lines if not line.endswith(" True True")] == []


def test_forward_stays_the_function_and_the_flat_folder_stays_small():
    assert callable(engine.forward) and engine.forward.__module__.endswith("attention.forward")
    assert "forward" not in engine._MOVED
    from pathlib import Path

    flat = [p.name for p in Path(engine.__file__).parent.glob("*.py")]
    assert sorted(flat) == ["__init__.py", "resources.py"]
