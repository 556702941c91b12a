"""Pure NumPy engine of mha-gui: importable from a notebook, never imports Qt.

    from mha_gui.engine import forward, load_preset
    t = load_preset("toy").run()

The modules sit in a few subpackages, one per idea, so that a newcomer finds the
forward pass apart from the stage catalogue and the teaching views' numbers:

- layer/: config, parameters, session_value (the Session), session (its files, with
  session_codec), presets, values, numbers;
- attention/: forward (the front door), trace, steps, scheduler, incremental,
  validation, buffers, row_softmax, rope;
- panels/: stages (the catalogue), panel_kinds, notation, colour_scale, stage_panels
  (the descriptions), stage_data, stats, info;
- teaching/: explain, quoted_cells, neuron, contributions, token_lines, difference,
  identities, identity_parts, exercises, training, training_loss, training_targets,
  head_roles, model_roles, classroom;
- lessons/ (the lesson format and its checks) and models/ (real models);
- resources (where the packaged resources are).

The names below are the engine's public API. The flat layout's module names
(`mha_gui.engine.stages`, `mha_gui.engine.training`, …) still import the moved modules
(the finder at the end of this file), so notebooks written against them keep working.
"""

import importlib.abc
import importlib.machinery
import sys

from mha_gui.engine.attention.forward import Trace, forward
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import Parameters, random_parameters, resize_parameters
from mha_gui.engine.layer.presets import DEFAULT_PRESET, PRESETS, load_preset
from mha_gui.engine.layer.session import (
    Session,
    ViewState,
    load_session,
    save_npz,
    save_session,
)
from mha_gui.engine.panels.stages import (
    STAGE_NAMES,
    STAGES,
    formula_for,
    shapes_line,
    stage_by_name,
)

__all__ = [
    "Config",
    "DEFAULT_PRESET",
    "PRESETS",
    "Parameters",
    "STAGES",
    "STAGE_NAMES",
    "Session",
    "Trace",
    "ViewState",
    "formula_for",
    "forward",
    "load_preset",
    "load_session",
    "random_parameters",
    "resize_parameters",
    "save_npz",
    "save_session",
    "shapes_line",
    "stage_by_name",
]

# ---- the flat layout's module names (engine_move) ----
# `import mha_gui.engine.stages` gives mha_gui.engine.panels.stages itself: the same
# module object, so its state is shared and a patch of one is a patch of the other.
# `forward` is left out: the package binds that name to the function.
_MOVED = {
    "buffers": "attention",
    "classroom": "teaching",
    "colour_scale": "panels",
    "config": "layer",
    "contributions": "teaching",
    "difference": "teaching",
    "exercises": "teaching",
    "explain": "teaching",
    "head_roles": "teaching",
    "identities": "teaching",
    "identity_parts": "teaching",
    "incremental": "attention",
    "info": "panels",
    "model_roles": "teaching",
    "neuron": "teaching",
    "notation": "panels",
    "numbers": "layer",
    "panel_kinds": "panels",
    "parameters": "layer",
    "presets": "layer",
    "quoted_cells": "teaching",
    "rope": "attention",
    "row_softmax": "attention",
    "scheduler": "attention",
    "session": "layer",
    "session_codec": "layer",
    "session_value": "layer",
    "stage_data": "panels",
    "stage_panels": "panels",
    "stages": "panels",
    "stats": "panels",
    "steps": "attention",
    "token_lines": "teaching",
    "trace": "attention",
    "training": "teaching",
    "training_loss": "teaching",
    "training_targets": "teaching",
    "validation": "attention",
    "values": "layer",
}


class _FlatNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a flat name of a moved module (after the path finder found no file) and
    loads it as the moved module itself; its own spec travels in the alias spec's
    loader_state, so the finder keeps no state between imports."""

    package = __name__

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != self.package or name not in _MOVED:
            return None
        real = f"{package}.{_MOVED[name]}.{name}"
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=real)

    def create_module(self, spec):
        module = importlib.import_module(spec.loader_state)
        spec.loader_state = module.__spec__  # the import system sets __spec__ to `spec` next
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state  # ... so the module gets its own back


if not any(getattr(f, "package", None) == __name__ for f in sys.meta_path):
    sys.meta_path.append(_FlatNames())


def __getattr__(name):
    """A flat name as an attribute (`mha_gui.engine.stages.STAGES` after `import
    mha_gui.engine`), as the flat layout's own imports had bound it."""
    if name in _MOVED:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- end of the flat layout's module names ----
