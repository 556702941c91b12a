#!/usr/bin/env python3
"""Move mha_gui/engine's flat modules into a few subpackages, and every import with them.

    python engine_move.py [REPO] [--dry-run] [--no-ruff]

REPO is a git work tree of mha-gui (default: the current directory). The script is
re-runnable and idempotent: a module already in its subpackage is left where it is, a
reference already rewritten is not rewritten again, so it can be run on a tree that has
changed since it was written (and run again after a merge brings in old-style imports).

What it does, in order:

1. `git mv mha_gui/engine/NAME.py mha_gui/engine/SUB/NAME.py` for every module of LAYOUT
   that is still flat (a module LAYOUT does not name stays flat and is reported);
   each subpackage gets an `__init__.py` saying what it holds. The tests move with
   their code: `tests/engine/TEST.py` → `tests/engine/SUB/TEST.py` for TESTS (a test
   TESTS does not name stays where it is and is reported).
2. Rewrites, by regular expression over module paths (never by patching known files),
   every tracked or new text file under mha_gui/, tests/, benchmarks/, training/,
   packaging/, docs/ and the top-level *.md, pyproject.toml, Makefile:
     - `mha_gui.engine.NAME` → `mha_gui.engine.SUB.NAME` (imports, patch targets,
       strings), except a name the engine package itself binds to a function
       (`mha_gui.engine.forward(`: the function, not the module);
     - `from mha_gui.engine import a, NAME as b, c` → the moved modules imported from
       their subpackages, the package's own names (forward, load_preset …) kept;
     - paths `mha_gui/engine/NAME.py`, `engine/NAME.py` and `"engine" / "NAME.py"`;
     - `tests.engine.TEST` and `tests/engine/TEST.py` → their new folder;
     - pyproject.toml's package list gains the subpackages.
   A line that says `engine_move: keep` (in a comment) is left as it is: a sentence or
   a test that means the flat name itself.
3. Rewrites mha_gui/engine/__init__.py's docstring for the new layout and installs a
   finder there so that the flat layout's module names (`mha_gui.engine.stages`,
   `mha_gui.engine.training`, … as notebooks and the documentation use them) still
   import the moved module itself.
4. Runs `ruff check --select I --fix` and `ruff format` on what it changed (imports
   re-sorted after their paths changed), unless --no-ruff.

No subpackage is named like a module (engine/session.py and engine/session/ cannot both
be `mha_gui.engine.session`): the script refuses a LAYOUT that would do that.

Why a finder for the flat names, and not something plainer:
- a re-export module per flat name (`engine/stages.py` holding `from
  mha_gui.engine.panels.stages import *`) keeps 40 modules in the flat folder, the very
  thing the move is for, and is a second module object: a test's monkeypatch or a
  module-level cache of one does not reach the other, and `import *` drops the
  underscored names;
- `sys.modules` aliases set in engine/__init__.py would have to import every moved
  module (the trainer, the classroom tokenizer …) whenever anything imports the engine,
  and would import them in the middle of the package's own initialisation;
- the finder is consulted only when the path finder found no file, imports nothing
  until a flat name is asked for, and answers with the moved module itself (its spec
  travels in the alias spec, so the finder keeps no state). `mha_gui.engine.forward`
  stays the function: it is not a flat name (the module is
  `mha_gui.engine.attention.forward`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

LAYOUT: dict[str, tuple[str, ...]] = {
    # the layer being edited: its configuration, numbers and files
    "layer": (
        "config",
        "parameters",
        "session",
        "session_value",
        "session_codec",
        "presets",
        "values",
        "numbers",
    ),
    # the forward pass and what makes it exact, fast and incremental
    "attention": (
        "forward",
        "trace",
        "steps",
        "scheduler",
        "incremental",
        "validation",
        "buffers",
        "row_softmax",
        "rope",
    ),
    # the seven stages, their panels and what is said about them
    "panels": (
        "stages",
        "stage_panels",
        "panel_kinds",
        "notation",
        "colour_scale",
        "stage_data",
        "stats",
        "info",
    ),
    # the numbers behind the teaching views, exercises, training and real heads' roles
    "teaching": (
        "explain",
        "quoted_cells",
        "neuron",
        "contributions",
        "token_lines",
        "difference",
        "identities",
        "identity_parts",
        "exercises",
        "training",
        "training_loss",
        "training_targets",
        "head_roles",
        "model_roles",
        "classroom",
    ),
}
# tests/engine/TEST.py → tests/engine/SUB/TEST.py: each beside its code's subpackage
# (lessons/ for engine/lessons); the architecture tests and the plain reference
# implementation that many of them compare against stay at the top.
TESTS: dict[str, tuple[str, ...]] = {
    "layer": ("test_presets", "test_session_files", "test_session_v2"),
    "attention": (
        "test_forward_properties",
        "test_fast_paths",
        "test_all_cores",
        "test_jobs",
        "test_incremental",
        "test_incremental_switches",
        "test_ablate",
        "test_rope",
        "test_peak",
        "test_validation",
    ),
    "panels": ("test_stage_tables", "test_stage_panels", "test_notation", "test_rope_panels"),
    "teaching": (
        "test_explain",
        "test_neuron",
        "test_contributions",
        "test_token_lines_limit",
        "test_difference",
        "test_identities",
        "test_exercises",
        "test_training",
        "test_head_roles",
        "test_model_roles",
        "test_classroom",
    ),
    "lessons": ("test_lessons", "test_lessons_conditions"),
}
TESTS_STAY = (
    "__init__",
    "reference",
    "test_engine_is_qt_free",
    "test_import_direction",
    "test_flat_names",
)
KEEP = "engine_move: keep"
STAY = ("__init__", "resources")  # resources.py finds the checkout from its own place
KEPT_PACKAGES = ("lessons", "models")

PACKAGE_DOCS = {
    "layer": '''"""The layer being edited: its configuration (config), numbers (parameters, values,
numbers), presets, the Session value (session_value) and its files (session,
session_codec)."""
''',
    "attention": '''"""The forward pass: forward (the validating front door), trace (the Trace and its
buffers), steps (one function per step), scheduler (large layers on every core),
incremental (an edit recomputes only what it reaches), validation, buffers, row_softmax
and rope."""
''',
    "panels": '''"""The seven stages and their panels: stages (the catalogue: panels, operands, FLOPs,
growth), panel_kinds (what a panel shows and which edits reach it), notation,
colour_scale, stage_panels (the one description the window, figures, LaTeX and tooltips
read), stage_data, and the numbers of `mha-gui info` (stats, info)."""
''',
    "teaching": '''"""The numbers behind the teaching views and exercises: explain and quoted_cells (a
cell's worked formula), neuron, contributions, token_lines, difference, identities and
identity_parts, exercises, training (training_loss, training_targets), and the measured
roles of real heads (head_roles, model_roles, classroom)."""
''',
}

# The engine package's __init__ holds the finder of the flat layout's module names (its
# one copy); this script only keeps its table of moved names, _MOVED, up to date.
ALIAS_BEGIN = "# ---- the flat layout's module names (engine_move) ----"
MOVED_TABLE = re.compile(r"^_MOVED = \{\n(?:.*\n)*?\}\n", re.M)


TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".sh", ".spec", ".cfg", ".ini", ".rst", ".yml"}
TEXT_NAMES = {"Makefile", "pyproject.toml"}
FOLDERS = ("mha_gui", "tests", "benchmarks", "training", "packaging", "docs")


def git(repo: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if check and out.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed:\n{out.stderr}")
    return out.stdout


def plan(engine: Path) -> dict[str, str]:
    """module → subpackage, for the modules that exist (flat or already moved)."""
    clash = [sub for sub in LAYOUT if (engine / f"{sub}.py").exists()]
    for sub, names in LAYOUT.items():
        clash += [f"{sub}/{n}" for n in names if n in LAYOUT]
    if clash or set(LAYOUT) & set(KEPT_PACKAGES):
        raise SystemExit(f"a subpackage would be named like a module: {clash}")
    return existing(engine, LAYOUT)


def existing(folder: Path, layout: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """module → subfolder of `layout`, for the modules in `folder` (flat or moved)."""
    return {
        name: sub
        for sub, names in layout.items()
        for name in names
        if (folder / f"{name}.py").exists() or (folder / sub / f"{name}.py").exists()
    }


def move_files(
    repo: Path, folder: Path, moved: dict[str, str], inits: dict[str, str], dry: bool
) -> list[str]:
    """`git mv folder/NAME.py folder/SUB/NAME.py` for what is still flat; each SUB of
    `inits` gets its `__init__.py` with that text first."""
    done = []
    for sub, text in inits.items():
        init = folder / sub / "__init__.py"
        if not init.exists():
            done.append(f"new {init.relative_to(repo)}")
            if not dry:
                init.parent.mkdir(exist_ok=True)
                init.write_text(text, encoding="utf-8")
                git(repo, "add", str(init.relative_to(repo)))
    for name, sub in moved.items():
        old, new = folder / f"{name}.py", folder / sub / f"{name}.py"
        if old.exists() and new.exists():
            raise SystemExit(f"both {old} and {new} exist: merge them by hand first")
        if old.exists():
            done.append(f"git mv {old.relative_to(repo)} {new.relative_to(repo)}")
            if not dry:
                git(repo, "mv", str(old.relative_to(repo)), str(new.relative_to(repo)))
    return done


# ----------------------------------------------------------------- rewriting ---------
def shadowed_names(engine: Path, moved: dict[str, str]) -> set[str]:
    """Moved module names the engine package binds to something else (forward())."""
    text = (engine / "__init__.py").read_text(encoding="utf-8")
    imported = set()
    for m in re.finditer(r"^from\s+[\w.]+\s+import\s+(\([^)]*\)|[^\n]+)", text, re.M):
        for part in m.group(1).strip("()").replace("\n", " ").split(","):
            part = part.split("#")[0].strip()
            if part:
                imported.add(part.split(" as ")[-1].strip())
    return imported & set(moved)


def rewriter(moved: dict[str, str], shadowed: set[str], tests: dict[str, str]):
    names = "|".join(sorted(moved, key=len, reverse=True))
    test_names = "|".join(sorted(tests, key=len, reverse=True)) or r"(?!)"
    test_dotted = re.compile(rf"\btests\.engine\.({test_names})(?![\w])")
    test_path = re.compile(rf"\btests/engine/({test_names})\.py\b")
    dotted = re.compile(rf"\bmha_gui\.engine\.({names})(?![\w])")
    path = re.compile(rf"(?:(?<=mha_gui/)|(?<![\w/.-]))engine/({names})\.py\b")
    joined = re.compile(rf"""(["'])engine\1(\s*/\s*)(["'])({names})\.py\3""")
    from_import = re.compile(
        r"^(?P<indent>[ \t]*)from[ \t]+mha_gui\.engine[ \t]+import[ \t]+"
        r"(?P<names>\((?:[^()]*)\)|[^\n#()]+?)(?P<comment>[ \t]*#[^\n]*)?$",
        re.M,
    )

    def one_dotted(m: re.Match) -> str:
        name = m.group(1)
        after = m.string[m.end() : m.end() + 40].lstrip()
        if name in shadowed and after.startswith("("):
            return m.group(0)  # mha_gui.engine.forward(...): the function
        return f"mha_gui.engine.{moved[name]}.{name}"

    def one_from(m: re.Match) -> str:
        indent, comment = m.group("indent"), m.group("comment") or ""
        raw = m.group("names").strip().strip("()")
        parts = [p.split("#")[0].strip() for p in raw.replace("\n", ",").split(",")]
        parts = [p for p in parts if p]
        keep, groups = [], {}
        for p in parts:
            name = p.split(" as ")[0].strip()
            if name in moved and name not in shadowed:
                groups.setdefault(moved[name], []).append(p)
            else:
                keep.append(p)
        if not groups:
            return m.group(0)
        lines = []
        if keep:
            lines.append(f"{indent}from mha_gui.engine import {', '.join(keep)}{comment}")
        for sub, ps in groups.items():
            lines.append(f"{indent}from mha_gui.engine.{sub} import {', '.join(ps)}{comment}")
        return "\n".join(lines)

    def rewrite(text: str) -> str:
        kept: list[str] = []

        def keep(m: re.Match) -> str:  # a line meant as it is: out of the way, then back
            kept.append(m.group(0))
            return f"\0engine_move {len(kept) - 1}\0"

        text = re.sub(rf"^.*{re.escape(KEEP)}.*$", keep, text, flags=re.M)
        text = test_dotted.sub(lambda m: f"tests.engine.{tests[m.group(1)]}.{m.group(1)}", text)
        text = test_path.sub(lambda m: f"tests/engine/{tests[m.group(1)]}/{m.group(1)}.py", text)
        text = from_import.sub(one_from, text)
        text = dotted.sub(one_dotted, text)
        text = path.sub(lambda m: f"engine/{moved[m.group(1)]}/{m.group(1)}.py", text)
        text = joined.sub(
            lambda m: (
                f"{m.group(1)}engine{m.group(1)}{m.group(2)}{m.group(3)}"
                f"{moved[m.group(4)]}{m.group(3)}{m.group(2)}{m.group(3)}{m.group(4)}.py{m.group(3)}"
            ),
            text,
        )
        return re.sub(r"\0engine_move (\d+)\0", lambda m: kept[int(m.group(1))], text)

    return rewrite


def candidate_files(repo: Path) -> list[Path]:
    listed = git(repo, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
    out = []
    for rel in listed:
        if not rel:
            continue
        p = repo / rel
        top = Path(rel).parts[0]
        if not (
            top in FOLDERS
            or (len(Path(rel).parts) == 1 and (p.suffix == ".md" or rel in TEXT_NAMES))
        ):
            continue
        if (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES) and p.is_file():
            out.append(p)
    return out


def rewrite_packages(text: str) -> str:
    """pyproject.toml: the subpackages listed after "mha_gui.engine"."""
    for sub in reversed(list(LAYOUT)):
        entry = f'"mha_gui.engine.{sub}"'
        if entry not in text:
            text = re.sub(
                r'^([ \t]*)"mha_gui\.engine",[ \t]*$',
                lambda m, e=entry: f"{m.group(0)}\n{m.group(1)}{e},",
                text,
                count=1,
                flags=re.M,
            )
    return text


def engine_init(text: str, moved: dict[str, str], shadowed: set[str]) -> str:
    """The engine's __init__ with its _MOVED table naming every moved module."""
    if ALIAS_BEGIN not in text or not MOVED_TABLE.search(text):
        raise SystemExit("mha_gui/engine/__init__.py has lost its flat-names block (_MOVED)")
    aliases = {n: s for n, s in sorted(moved.items()) if n not in shadowed}
    table = "{\n" + "".join(f'    "{n}": "{s}",\n' for n, s in aliases.items()) + "}\n"
    return MOVED_TABLE.sub(lambda _m: "_MOVED = " + table, text, count=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", nargs="?", default=".")
    ap.add_argument("--dry-run", action="store_true", help="say what would change")
    ap.add_argument("--no-ruff", action="store_true", help="do not re-sort and format")
    ap.add_argument("--ruff", default=None, help="the ruff to run (default: on PATH)")
    args = ap.parse_args()
    repo = Path(args.repo).resolve()
    engine = repo / "mha_gui" / "engine"
    if not (engine / "__init__.py").is_file():
        raise SystemExit(f"{repo} has no mha_gui/engine/__init__.py")
    moved = plan(engine)
    known = set(moved) | set(STAY)
    flat = sorted(p.stem for p in engine.glob("*.py") if p.stem not in known)
    report = move_files(repo, engine, moved, PACKAGE_DOCS, args.dry_run)
    tests = repo / "tests" / "engine"
    tests_moved = existing(tests, TESTS)
    known_tests = set(tests_moved) | set(TESTS_STAY)
    flat_tests = sorted(p.stem for p in tests.glob("*.py") if p.stem not in known_tests)
    test_inits = {sub: "" for sub in sorted(set(tests_moved.values()))}  # packages, as tests/
    report += move_files(repo, tests, tests_moved, test_inits, args.dry_run)
    shadowed = shadowed_names(engine, moved)
    rewrite = rewriter(moved, shadowed, tests_moved)
    changed = []
    for p in candidate_files(repo):
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        new = rewrite(text)
        if p.name == "pyproject.toml" and p.parent == repo:
            new = rewrite_packages(new)
        if p == engine / "__init__.py":  # its flat names are meant: only its table changes
            new = engine_init(text, moved, shadowed)
        if new != text:
            changed.append(p)
            if not args.dry_run:
                p.write_text(new, encoding="utf-8")
    report += [f"rewrote {p.relative_to(repo)}" for p in changed]
    ruff = args.ruff or shutil.which("ruff")
    if changed and not args.dry_run and not args.no_ruff:
        if ruff is None:
            report.append("ruff not found: run `ruff check --select I --fix` and `ruff format`")
        else:
            files = [str(p) for p in changed if p.suffix == ".py"]
            subprocess.run([ruff, "check", "--select", "I", "--fix", "-q", *files], check=False)
            subprocess.run([ruff, "format", "-q", *files], check=False)
    for line in report:
        print(line)
    if flat:
        print(f"left flat (not in LAYOUT): {', '.join(flat)}", file=sys.stderr)
    if flat_tests:
        print(
            f"tests left at tests/engine (not in TESTS): {', '.join(flat_tests)}", file=sys.stderr
        )
    print(
        f"{'would change' if args.dry_run else 'changed'} {len(changed)} files; "
        f"{sum(1 for r in report if r.startswith('git mv mha_gui'))} modules and "
        f"{sum(1 for r in report if r.startswith('git mv tests'))} tests moved",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
