"""Where the app's data files are: the top-level resources/ folder (the built-in lessons,
the built-in model), read from the checkout the code runs from, else from the installed
`mha_gui.resources` package — so code and data always come from the same tree (an
editable install of another checkout would otherwise hand this code that one's data)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def resources_folder() -> Path:
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "resources").is_dir():
        return checkout / "resources"
    return Path(str(files("mha_gui.resources")))
