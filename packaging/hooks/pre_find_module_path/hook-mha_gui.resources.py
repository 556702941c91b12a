"""PyInstaller: find `mha_gui.resources` where pyproject.toml maps it, in resources/.

The source tree has no mha_gui/resources folder (`[tool.setuptools.package-dir]` installs
the top-level resources/ as that package), so the analysis is told where to look.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # packaging/hooks/pre_find_module_path/ -> root


def pre_find_module_path(hook_api):
    hook_api.search_dirs = [str(ROOT)]
