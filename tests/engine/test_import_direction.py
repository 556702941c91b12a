"""Imports go one way: engine ← theme, engine ← document ← views, and export (figures)
beside the document, below the views.

Read from every module's source (every import statement, also the ones inside a
function), so a deferred import cannot hide a wrong direction:

- the engine imports nothing of mha_gui but the engine (a notebook gets the numbers
  without Qt, a theme or a window);
- the theme (colours, colour maps) imports nothing of mha_gui but the engine (its number
  formats) — and the engine never imports the theme;
- export — every figure, shared by the window and the command line — imports neither a
  view nor the document: `mha-gui export` draws any figure without building a window,
  and a view's figure is drawn from whatever StageData it is given;
- the document imports no view and no export code;
- nothing but the entry points imports the entry points (app, cli).

One exception, named below: a Session shows its stage figure when it is the value of a
notebook cell (`_repr_svg_`, `_repr_png_`), and that figure is export's to draw. Those two
methods import mha_gui.export.notebook when Jupyter calls them, never when the engine is
imported (test_engine_is_qt_free.py checks that importing and running the engine loads
no Qt).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mha_gui"

# layer → the mha_gui packages (first component after mha_gui) it may import
ALLOWED = {
    "engine": {"engine"},
    "theme": {"engine"},
    "export": {"engine", "export", "theme"},
    "document": {"engine", "document", "theme"},
}
ENTRY_POINTS = {"app", "cli", "__main__"}
# (module, import) pairs allowed against the direction, each with its reason above
EXCEPTIONS = {
    (
        "engine/layer/session_value.py",
        "mha_gui.export.notebook",
    ),  # notebook display, at display time
}


def layer_of(path: Path) -> str:
    part = path.relative_to(PACKAGE).parts[0]
    return part.removesuffix(".py")


def mha_imports(path: Path, root: Path = PACKAGE) -> list[str]:
    """The mha_gui modules `path` (a module under `root`, the mha_gui folder) imports,
    absolute or relative, dotted."""
    package = ["mha_gui", *path.relative_to(root).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from . import x / from ..engine import y
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names = [f"{module}.{a.name}" for a in node.names] if module == "mha_gui" else []
            found += names or [module]
    return [m for m in found if m == "mha_gui" or m.startswith("mha_gui.")]


def target_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "mha_gui"


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_is_read():
    layers = {layer_of(p) for p in MODULES}
    assert {"engine", "export", "document", "views", "theme"} <= layers
    assert len(MODULES) > 100


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_what_is_below_it(layer):
    wrong = [
        f"{p.relative_to(PACKAGE)}: {m}"
        for p in MODULES
        if layer_of(p) == layer
        for m in mha_imports(p)
        if target_of(m) not in ALLOWED[layer] and (str(p.relative_to(PACKAGE)), m) not in EXCEPTIONS
    ]
    assert wrong == []


def test_the_exceptions_are_imports_inside_the_notebook_display_methods():
    tree = ast.parse(
        (PACKAGE / "engine" / "layer" / "session_value.py").read_text(encoding="utf-8")
    )
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in ("_repr_svg_", "_repr_png_"):
            inside |= {sub.module for sub in ast.walk(node) if isinstance(sub, ast.ImportFrom)}
    top_level = {
        node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "mha_gui.export.notebook" in inside
    assert "mha_gui.export.notebook" not in top_level


def test_only_entry_points_import_the_entry_points():
    wrong = [
        f"{p.relative_to(PACKAGE)}: {m}"
        for p in MODULES
        if layer_of(p) not in ENTRY_POINTS
        for m in mha_imports(p)
        if target_of(m) in ENTRY_POINTS
    ]
    assert wrong == []


def test_the_reader_sees_relative_and_deferred_imports(tmp_path):
    """The check itself: a deferred `from mha_gui.views…` and a relative import count."""
    fake = tmp_path / "mha_gui"
    (fake / "export").mkdir(parents=True)
    source = (
        "from ..views.window import registry\n"
        "def f():\n"
        "    from mha_gui.document import Document\n"
        "    import mha_gui.views.stage\n"
    )
    (fake / "export" / "bad.py").write_text(source)
    found = [target_of(m) for m in mha_imports(fake / "export" / "bad.py", fake)]
    assert sorted(found) == ["document", "views", "views"]
