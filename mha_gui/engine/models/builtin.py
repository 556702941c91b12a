"""The model that ships with the app: `--model builtin` wherever a model folder is taken.

It is a small GPT-2 trained on the classroom language (mha_gui/engine/teaching/classroom.py) so that
a class sees real heads with textbook roles without downloading anything; its folder is an
ordinary Hugging Face one (resources/models/classroom/, installed as package data of
`mha_gui.resources`), read by the same loader as any other model.
"""

from __future__ import annotations

from pathlib import Path

from mha_gui.engine.resources import resources_folder

BUILTIN_NAME = "builtin"
_FOLDER = ("models", "classroom")


def builtin_model_path() -> Path:
    """The folder of the built-in model (resources/models/classroom)."""
    return resources_folder().joinpath(*_FOLDER)


def resolve_model(arg: str | Path) -> str | Path:
    """`builtin` → the built-in model's folder; any other folder is returned unchanged."""
    if isinstance(arg, str) and arg == BUILTIN_NAME:
        return builtin_model_path()
    return arg
