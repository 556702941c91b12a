"""Run-time resources of mha-gui (icons), installed as `mha_gui.resources`."""

from importlib.resources import files


def icon_path() -> str:
    """Path of the application icon (an SVG file inside the installed package)."""
    return str(files(__name__) / "mha-gui.svg")
