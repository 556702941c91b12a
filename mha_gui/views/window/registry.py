"""Where the docks and menu actions announce themselves, so adding one touches one line.

A docked view lives in its own folder (views/docks/<view>/) and registers itself at
import time with one line:

    register_view(ViewSpec("lines", LineView, "lineView", "Token lines", figure="lines"))

— its name (the dock is `dock.<name>`), its widget class (built as `cls(document,
settings)`), the objectName the window and the tests find it by (set here, in
`ViewSpec.create`, and nowhere else), the dock title and menu text, and the name of its
figure in export/figures/registry.py when it has one (the same Drawing paints the dock
and `mha-gui export --view NAME`). Menu actions (identity demonstrations, snapshots,
modes) register an `ActionSpec`. The module's name goes in `VIEW_MODULES` below; the
main window builds a dock (and a View ▸ Panels toggle) for every registered view and
puts every registered action in its menu.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from mha_gui.export.figures.registry import FIGURES

# One line per view or action module: importing it registers it (in this order: the
# docks' order in View ▸ Panels).
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

__all__ = ["ActionSpec", "ViewSpec", "actions", "register_action", "register_view", "views"]

AREAS = ("left", "right", "bottom")


@dataclass(frozen=True)
class ViewSpec:
    """A dockable view: `create(document, settings)` builds `widget(document, settings)`
    named `object_name`; the widget subscribes to the document and the display settings
    itself."""

    name: str  # the dock's key, e.g. "neuron" (dock `dock.neuron`)
    widget: Callable  # the widget class, called as widget(document, settings)
    object_name: str  # e.g. "neuronView"
    title: str  # dock title and menu text
    figure: str | None = None  # its figure in export/figures/registry.py (None: none)
    area: str = "right"  # "left", "right" or "bottom"

    def __post_init__(self) -> None:
        if self.figure is not None and self.figure not in FIGURES:
            raise ValueError(f"view {self.name!r} names an unknown figure {self.figure!r}")
        if self.area not in AREAS:
            raise ValueError(f"view {self.name!r}: area must be one of {AREAS}")

    def create(self, document, settings=None):
        """The dock's widget, with its objectName (the one place it is set)."""
        widget = self.widget(document, settings)
        widget.setObjectName(self.object_name)
        return widget


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
_ACTIONS: dict[str, ActionSpec] = {}


def register_view(spec: ViewSpec) -> ViewSpec:
    if spec.name in _VIEWS and _VIEWS[spec.name] is not spec:
        raise ValueError(f"two views are registered as {spec.name!r}")
    _VIEWS[spec.name] = spec
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


def view_spec(name: str) -> ViewSpec:
    """The registered view `name` (KeyError for an unknown one)."""
    _load()
    return _VIEWS[name]


def actions() -> list[ActionSpec]:
    _load()
    return list(_ACTIONS.values())
