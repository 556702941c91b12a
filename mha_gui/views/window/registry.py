"""Where views and menu actions announce themselves, so adding one touches one line.

A view is a module of its own (e.g. views/docks/neuron/neuron_view.py) that calls `register_view()`
at import time with a `ViewSpec`: its dock widget and, when it can be exported, a
*drawing* builder (export/drawing.py) — the same drawing paints the widget on screen and
the exported PNG/SVG/PDF, and `mha-gui export --view NAME` finds it by name. Menu
actions (identity demonstrations, snapshots, modes) register an `ActionSpec`, and a
figure without a dock (each identity's) a `FigureSpec`. The one
line to add is the module's name in `VIEW_MODULES` below; the main window builds a dock
(and a View ▸ Panels toggle) for every registered view and puts every registered action
in its menu.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from mha_gui.export.drawing import FigureOptions

# One line per view or action module: importing it registers it.
VIEW_MODULES: tuple[str, ...] = (
    "mha_gui.views.docks.diff.diff_view",
    "mha_gui.views.dialogs.identity_demos",
    "mha_gui.views.docks.contributions.contribution_view",
    "mha_gui.views.docks.stats.stats_panel",
    "mha_gui.views.docks.kv_cache.kv_cache_view",
    "mha_gui.views.docks.neuron.neuron_view",
    "mha_gui.views.docks.lines.line_view",
    "mha_gui.views.docks.model.model_view",
    "mha_gui.views.docks.exercise.exercise_panel",
    "mha_gui.views.docks.train.train_panel",
    "mha_gui.views.docks.lesson.lesson_panel",
)

__all__ = [
    "ActionSpec",
    "FigureOptions",
    "FigureSpec",
    "ViewSpec",
    "register_action",
    "register_figure",
    "register_view",
]


@dataclass(frozen=True)
class ViewSpec:
    """A dockable view.

    `create(document, settings)` builds the widget (objectName `object_name`), which
    subscribes to the document and the display settings itself. `drawing(data, options)`
    returns a Drawing of what the view shows for a StageData (the window's Document or an
    engine SessionData) — None when the view has no figure. `requires` names the
    FigureOptions fields the CLI must be given (e.g. ("against",)).
    """

    name: str  # `--view NAME`, e.g. "neuron"
    title: str  # dock title and menu text
    object_name: str  # e.g. "neuronView"
    create: Callable
    drawing: Callable | None = None
    area: str = "right"  # "left", "right" or "bottom"
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class FigureSpec:
    """A figure `mha-gui export --view NAME` can draw that has no dock of its own (an
    identity demonstration lives in a dialog): `drawing(data, options)` as for a view."""

    name: str
    drawing: Callable
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActionSpec:
    """A menu action: `trigger(window)` runs it (through document methods / undo)."""

    menu: str  # "Edit", "View" or "Tools"
    text: str
    object_name: str  # e.g. "action.snapshot"
    trigger: Callable
    shortcut: str | None = None
    tip: str = ""
    checkable: bool = False


_VIEWS: dict[str, ViewSpec] = {}
_FIGURES: dict[str, FigureSpec] = {}
_ACTIONS: dict[str, ActionSpec] = {}


def register_view(spec: ViewSpec) -> ViewSpec:
    if spec.name in _VIEWS and _VIEWS[spec.name] is not spec:
        raise ValueError(f"two views are registered as {spec.name!r}")
    _VIEWS[spec.name] = spec
    return spec


def register_figure(spec: FigureSpec) -> FigureSpec:
    if spec.name in _VIEWS or (spec.name in _FIGURES and _FIGURES[spec.name] is not spec):
        raise ValueError(f"two figures are registered as {spec.name!r}")
    _FIGURES[spec.name] = spec
    return spec


def register_action(spec: ActionSpec) -> ActionSpec:
    _ACTIONS[spec.object_name] = spec
    return spec


def _load() -> None:
    for module in VIEW_MODULES:
        importlib.import_module(module)


def views() -> list[ViewSpec]:
    _load()
    return list(_VIEWS.values())


def actions() -> list[ActionSpec]:
    _load()
    return list(_ACTIONS.values())


def figure_views() -> dict[str, ViewSpec | FigureSpec]:
    """The views and figures `mha-gui export --view NAME` can draw, by name."""
    drawn = {spec.name: spec for spec in views() if spec.drawing is not None}
    return {**drawn, **_FIGURES}


def view_drawing(name: str, data, options: FigureOptions):
    """The Drawing of view `name`; ValueError naming the choices or the missing option."""
    known = figure_views()
    if name not in known:
        choices = ", ".join(["stage", *sorted(known)])
        raise ValueError(f"unknown view {name!r}; choose one of: {choices}")
    spec = known[name]
    for need in spec.requires:
        if getattr(options, need) is None:
            raise ValueError(f"--view {name} needs --{need.replace('_', '-')}")
    return spec.drawing(data, options)
