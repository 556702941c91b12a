"""An exercise's blanks on the stage: the cells of each panel drawn as empty boxes.

A part of AttentionView, given the stack of its stages' scenes: the filter applies to
every built stage at once and to every panel built later (the builder asks `apply`).
"""

from __future__ import annotations

from collections.abc import Callable

from mha_gui.views.stage.heatmap_panel import HeatmapPanel
from mha_gui.views.stage.stage_scene import SceneStack


class HiddenCells:
    def __init__(self, scenes: SceneStack):
        self.scenes = scenes
        # (kind, head) -> the (row, col) cells to hide (head None: X, H, Y); None: none
        self.hidden: Callable | None = None

    def set(self, hidden: Callable | None) -> None:
        """Hide `hidden(kind, head)`'s cells of every panel (None: show every cell)."""
        self.hidden = hidden
        for scene in self.scenes.every():
            for (kind, head), panel in scene.panels.items():
                self.apply(panel, kind, head)

    def apply(self, panel: HeatmapPanel, kind: str, head: int) -> None:
        """Draw panel (kind, head)'s hidden cells (head -1: a layer-wide panel)."""
        hidden = self.hidden
        if hidden is None and not panel.hidden:
            return  # nothing hidden, nothing to show again
        panel.set_hidden(() if hidden is None else hidden(kind, None if head < 0 else head))
