"""Pure NumPy engine of mha-gui: importable from a notebook, never imports Qt.

    from mha_gui.engine import forward, load_preset
    t = load_preset("toy").run()

The folder is flat on purpose: every module is importable as `mha_gui.engine.NAME` from
a notebook, the window, the exporter and the command line alike. By idea:

- the layer: config, parameters, session (and its files), presets, values, numbers;
- the forward pass: forward (the front door), trace, steps, scheduler, incremental,
  validation, buffers, row_softmax, rope;
- the stages and their panels: stages (the catalogue), panel_kinds, notation,
  colour_scale, stage_panels (the descriptions), stage_data, stats, info;
- the teaching views' numbers: neuron, contributions, token_lines, difference, explain,
  quoted_cells, identities, identity_parts;
- learning: exercises, training, training_loss, training_targets;
- real models: the models/ package.
"""

from mha_gui.engine.config import Config
from mha_gui.engine.forward import Trace, forward
from mha_gui.engine.parameters import Parameters, random_parameters, resize_parameters
from mha_gui.engine.presets import DEFAULT_PRESET, PRESETS, load_preset
from mha_gui.engine.session import (
    Session,
    ViewState,
    load_session,
    save_npz,
    save_session,
)
from mha_gui.engine.stages import STAGE_NAMES, STAGES, formula_for, shapes_line, stage_by_name

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
