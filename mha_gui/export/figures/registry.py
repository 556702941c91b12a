"""Every figure `mha-gui export --view NAME` can draw, by name — and only figures.

Each entry maps a name to its builder, `build(data, options) -> Drawing`: `data` is a
StageData (the window's Document, or an engine SessionData of the exported session) and
`options` the CLI's flags or the window's selection (export/drawing.py FigureOptions);
`requires` names the FigureOptions fields the command line must give (e.g. --against).
This module imports figures and nothing of the window (no widget, no dock), so the
command line draws a view's figure without loading a single view; a dock names its
figure here (views/window/registry.py ViewSpec.figure) and paints the same Drawing.

Adding a figure: its module in export/figures/ with a builder, and one line below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mha_gui.export.drawing import Drawing, FigureOptions
from mha_gui.export.figures.contributions import contribution_drawing
from mha_gui.export.figures.difference import diff_view_drawing
from mha_gui.export.figures.identities import NAMES as IDENTITIES
from mha_gui.export.figures.identities import identity_builder
from mha_gui.export.figures.kv_cache import kv_cache_drawing
from mha_gui.export.figures.lines import lines_drawing
from mha_gui.export.figures.model_grid import model_drawing
from mha_gui.export.figures.neuron import neuron_drawing


@dataclass(frozen=True)
class FigureSpec:
    name: str  # `--view NAME`
    build: Callable[..., Drawing]  # build(data, options)
    requires: tuple[str, ...] = ()  # FigureOptions fields that must not be None


FIGURES: dict[str, FigureSpec] = {
    spec.name: spec
    for spec in (
        FigureSpec("contributions", contribution_drawing),
        FigureSpec("diff", diff_view_drawing, requires=("against",)),
        FigureSpec("kv-cache", kv_cache_drawing),
        FigureSpec("lines", lines_drawing),
        FigureSpec("model", model_drawing),
        FigureSpec("neuron", neuron_drawing),
        # each identity window's figure, without a window
        *(FigureSpec(f"identity-{name}", identity_builder(name)) for name in IDENTITIES),
    )
}


def figure_spec(name: str) -> FigureSpec:
    """The figure called `name`; ValueError naming every choice (the stage figure first,
    as `--view stage` is the default)."""
    if name not in FIGURES:
        choices = ", ".join(["stage", *sorted(FIGURES)])
        raise ValueError(f"unknown view {name!r}; choose one of: {choices}")
    return FIGURES[name]


def draw_figure(name: str, data, options: FigureOptions) -> Drawing:
    """The Drawing of figure `name`; ValueError naming the choices or the missing option."""
    spec = figure_spec(name)
    for need in spec.requires:
        if getattr(options, need) is None:
            raise ValueError(f"--view {name} needs --{need.replace('_', '-')}")
    return spec.build(data, options)


__all__ = ["FIGURES", "FigureSpec", "draw_figure", "figure_spec"]
