"""One head big: inspecting another head re-targets the panels already drawn instead of
building the stage again.

In the one-big layout the inspected head's group is drawn large and the other heads as
thumbnails in head order. Inspecting head b instead of a moves every head between them
one thumbnail over, b into the large place and a among the thumbnails — the same places
at the same sizes, only which head each place shows has changed. Building the stage
again for that (a new canvas, every head's plots, axes and labels) took ~260 ms of the
UI thread for BERT-base's 12 heads; re-targeting is a new head number per panel, new
titles and new pixels.

Nothing is taken out of the scene (see stage_scene.py): each panel keeps its items and
its place and is told which head it now shows (`HeatmapPanel.head`, which its tooltips,
clicks and accessible names read). `retarget` does it when the new geometry has the same
places and sizes as the scene's, else it changes nothing and says so (the view then
builds the stage anew).
"""

from __future__ import annotations

from collections.abc import Callable

from mha_gui.document import EVERYTHING
from mha_gui.views.stage.square_grid import StageGeometry
from mha_gui.views.stage.stage_scene import StageScene


def slot_heads(geometry: StageGeometry) -> dict[tuple, int]:
    """Each place (thumbnail or not, row, column) and the head group drawn there."""
    return {(p.thumb, p.row, p.col): head for head, p in geometry.places.items()}


def head_moves(old: StageGeometry, new: StageGeometry, kinds: dict[int, tuple]) -> dict | None:
    """{old head: new head} for every place when `new` only shows other heads in the
    places of `old`, at the same sizes; None when it differs in anything else."""
    if old.mode != "one-big" or new.mode != "one-big" or old.big == new.big:
        return None
    if (old.scale, old.cols, old.thumb_cols) != (new.scale, new.cols, new.thumb_cols):
        return None
    before, after = slot_heads(old), slot_heads(new)
    if before.keys() != after.keys():
        return None
    moves = {}
    for slot, was in before.items():
        now = after[slot]
        if (was < 0 or now < 0) and was != now:
            return None  # a layer-wide panel never changes place
        if kinds.get(was) != kinds.get(now):
            return None
        for kind in kinds.get(was, ()):
            if old.size(kind, was) != new.size(kind, now):
                return None
        moves[was] = now
    return moves


def retarget(
    scene: StageScene,
    new: StageGeometry,
    kinds: dict[int, tuple],
    on_panel: Callable,
) -> bool:
    """Re-target `scene`'s panels to the heads `new` places where they are; True if done.

    `kinds`: each head group's panel kinds; `on_panel(panel, kind, head)` is called for
    every panel that now shows another head (the view sets its plot title and its hidden
    cells). The scene then owes every panel new pixels (noted as a change)."""
    if not scene.built or scene.geometry is None:
        return False
    moves = head_moves(scene.geometry, new, kinds)
    if moves is None:
        return False
    panels, moved = {}, []
    for (kind, head), panel in scene.panels.items():
        target = moves.get(head, head)
        if target != head:
            panel.head = target
            moved.append((panel, kind, target))
        panels[(kind, target)] = panel
    scene.panels = panels
    scene.titles = {moves.get(h, h): title for h, title in scene.titles.items()}
    scene.titles_set = {}  # every moved title is set again
    scene.primed = {moves.get(h, h) for h in scene.primed}
    scene.geometry = new
    for panel, kind, head in moved:
        on_panel(panel, kind, head)
    scene.note_change(EVERYTHING, EVERYTHING)
    return True
