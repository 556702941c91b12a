"""A stage's panels built in steps: one head group per step, then the finish (colour
bar, labels, pixels, titles), then the first paint — a small stage all in one turn, a
large one a few steps per event-loop turn so that the window keeps painting and taking
input (n = 2048, 12 heads: the projections stage's 36 plots took ~110 ms in one go).

A part of AttentionView, given what it uses: the `builder` that makes a head group's
grid cell and the colour bar (stage_cells.StageCells), `finished(scene)` (the view
labels, draws and titles the panels once every head is in), `schedule()` (run `run`
again on the next turn) and `done()` (the last step ran: "computing…" may go).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mha_gui.views.stage.stage_cells import StageCells
from mha_gui.views.stage.stage_scene import StageScene

# the last steps of a build in turns (see `steps`)
EVERY_HEAD_IN, PAINT_NEXT = "every head is in", "paint next"


class StageBuild:
    def __init__(
        self,
        builder: StageCells,
        finished: Callable[[StageScene], None],
        schedule: Callable[[], None],
        done: Callable[[], None],
    ):
        self.builder, self.finished, self.schedule, self.done = builder, finished, schedule, done

    def steps(self, scene: StageScene, groups, lut):
        """The build of `scene` (its geometry set, its canvas empty) as a generator: one
        step per head group, then its finish, then its first paint."""
        geometry = scene.geometry
        many = geometry.mode == "grid" and len(groups) > 4
        for group in groups:
            # filled before it joins the canvas: pyqtgraph re-lays out the whole layout
            # tree on every addItem, so a detached cell keeps that to the cell's few items;
            # a panel per step (the cell's title comes with its first)
            panels = self.builder.cell_steps(scene, group, lut, many=many)
            cell = next(panels)
            for _ in panels:
                yield None
            place = geometry.places[group.head]
            target = scene.thumbs if place.thumb else scene.canvas.ci
            target.addItem(cell, row=place.row, col=place.col)
            yield None
        yield EVERY_HEAD_IN
        scene.adding = False
        self.builder.finish(scene, lut)
        self.finished(scene)
        # the first paint of every panel (~30 ms at the projections stage, n = 2048) comes
        # in a turn of its own, after the finish
        yield PAINT_NEXT
        scene.canvas.ci.setOpacity(1.0)
        # the layout filled over turns may have shrunk the canvas's central item to its
        # content (Qt fits a parentless layout's widget when it activates): give it the
        # view's whole range again, as a build in one go has it (one head big's colour bar
        # ended 24 px short)
        scene.canvas.ci.setGeometry(scene.canvas.range)

    def run(self, scene: StageScene, slice_s: float) -> None:
        """Run `scene`'s build steps while this turn stays within `slice_s` seconds, then
        let the event loop breathe (paint, input) and go on in the next turn. A step
        that would overrun the slice — as long as the longest step of this turn — waits
        for the next turn (n = 2048 panels cost ~10 ms each: two in a 12 ms slice made
        20 ms turns)."""
        if scene.building is None:
            return
        start = last = time.perf_counter()
        longest = 0.0
        for step in scene.building:
            if scene.closed:
                return  # dropped by what a step did (the finish waited for a trace
                # the worker was writing, and its report rebuilt the stage)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
            spent = now - start
            # the finish (colour bar, labels, highlights, the first layout) and the first
            # paint take ~20–30 ms each: each in a fresh turn unless this one hardly began
            if spent + longest > slice_s or (step is not None and spent > slice_s / 4):
                self.schedule()
                return
        scene.building = None
        self.done()
