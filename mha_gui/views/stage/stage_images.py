"""The pixels of the attention view's panels: drawn at once for a small stage; for a
large one the colour scale and reduced images are prepared on the worker (n = 2048,
12 heads: 50 M score cells to scan and reduce), and while the worker runs the view shows
"computing…" and defers a stage switch or rebuild until the trace is ready.

A part of AttentionView, given the view (its document, options and scenes): off-thread
work goes through `Document.run_off_thread`, which keeps the trace still meanwhile; a
result is drawn at once, or dropped if a newer preparation or another stage superseded
it (or its scene was closed meanwhile).
"""

from __future__ import annotations

from mha_gui.document import EVERYTHING
from mha_gui.engine.layer.numbers import peak
from mha_gui.engine.panels.stage_panels import (
    KINDS,
    PLANS,
    stage_format,
    stage_levels,
    weights_colours,
)
from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.stage.panel_images import colour_pixels, packed_lut, prepare_image
from mha_gui.views.stage.stage_scene import StageScene

# what waits for the worker: nothing, a stage switch, or a rebuild (which includes one)
NOTHING, SWITCH, REBUILD = "", "switch", "rebuild"


class StageImages:
    def __init__(self, view):
        self.view = view
        self.deferred = NOTHING
        self.update_count = 0  # panels given new pixels

    # ------------------------------------------------------------ waiting -------
    def defer(self, what: str) -> None:
        """Run a stage switch or a rebuild when the recompute is done (a waiting
        rebuild stays one)."""
        if self.deferred != REBUILD:
            self.deferred = what

    def on_busy(self, busy: bool) -> None:
        self.sync_mark()
        if not busy and self.deferred:
            self.run_deferred(changed=False)

    def run_deferred(self, changed: bool) -> None:
        """The stage switch or rebuild that waited for the worker (`changed`: the numbers
        changed meanwhile, so every kept stage is stale too)."""
        view = self.view
        waiting, self.deferred = self.deferred, NOTHING
        if changed:
            for scene in view.scenes.every():
                scene.note_change(EVERYTHING, EVERYTHING)
        # a rebuild (new shapes or config) drops every kept stage; a stage switch may
        # show a kept one
        scene = view.scenes.current
        moved = scene.stage != view.document.view.stage
        if waiting == SWITCH and not view.rebuild_due and moved and scene.panels:
            view.show_stage()
        else:
            view.rebuild()

    def sync_mark(self) -> None:
        """ "computing…" while the worker runs or a large stage is still being built."""
        view = self.view
        mark = view.computing
        shown = view.document.busy or view.building
        mark.setVisible(shown)
        if shown:
            mark.adjustSize()
            mark.move(view.width() - mark.width() - 8, 6)
            mark.raise_()

    # ------------------------------------------------------------ preparing -----
    def prepare(self, scene: StageScene, stale) -> None:
        """Compute the stale panels' peaks and reduced images on a worker thread (the
        document keeps the trace still meanwhile), then show them all at once."""
        doc = self.view.document
        keys = [k for k in scene.panels if stale is None or k in stale]
        if not keys:
            return
        weights = PLANS[STAGES[scene.stage].name].color == "weights"
        weights_range = self.view.options.weights_range
        steps = {k: scene.panels[k].step for k in keys}
        token = object()
        scene.prepare_token = token

        # the panels' pixels are coloured here too, on the levels the stage will have
        # (the peaks of the panels not redone are the ones kept): the UI thread then only
        # hands them to Qt (an n = 512 X edit: ~35 ms of its colouring, 12 heads)
        others = {k: v for k, v in scene.peaks.items() if k not in steps}
        stage, lut = scene.stage, scene.panels[keys[0]].lut

        def work() -> dict:
            data = doc.frozen_data()
            out = {}
            for kind, head in keys:
                m = KINDS[kind].source(data, None if head < 0 else head)
                shown = weights_colours(m, weights_range) if weights else m
                out[(kind, head)] = (m, peak(m), prepare_image(shown, steps[(kind, head)]))
            levels = stage_levels(stage, [*others.values(), *(v[1] for v in out.values())])
            lut32 = packed_lut(lut)
            if lut32 is not None:
                for key, (m, top, image) in out.items():
                    out[key] = (m, top, image, colour_pixels(image, levels, lut32), levels)
            return out

        doc.run_off_thread(work, lambda result: self._show(scene, token, result))

    def _show(self, scene: StageScene, token, result: dict) -> None:
        if scene.closed or scene.prepare_token is not token:
            return  # its canvas is gone, or a newer preparation superseded this one
        if scene is not self.view.scene:
            scene.note_change(EVERYTHING, EVERYTHING)  # hidden meanwhile: redone when shown
            return
        scene.peaks.update({key: value[1] for key, value in result.items()})
        levels = stage_levels(scene.stage, scene.peaks.values())
        drawn = {key: (value[0], None, value[2]) for key, value in result.items()}
        pixels = {
            key: value[3] for key, value in result.items() if len(value) > 3 and value[4] == levels
        }
        self.draw(scene, levels, drawn, pixels)

    # ------------------------------------------------------------ drawing -------
    def draw_now(self, scene: StageScene, stale) -> None:
        """New pixels for the `stale` panels (None: all), computed here; every panel if
        the stage's levels moved. Each panel's peak is kept, so an edit rescans only the
        stale ones."""
        doc = self.view.document
        peaks = scene.peaks
        for key in scene.panels:
            if stale is None or key in stale or key not in peaks:
                kind, head = key
                peaks[key] = peak(KINDS[kind].source(doc, None if head < 0 else head))
        levels = stage_levels(scene.stage, peaks.values())
        if levels != scene.levels:
            stale = None  # new levels: every panel is drawn again
        weights = PLANS[STAGES[scene.stage].name].color == "weights"
        weights_range = self.view.options.weights_range
        drawn = {}
        for kind, head in scene.panels:
            if stale is None or (kind, head) in stale:
                matrix = KINDS[kind].source(doc, None if head < 0 else head)
                colours = weights_colours(matrix, weights_range) if weights else None
                drawn[(kind, head)] = (matrix, colours, None)
        self.draw(scene, levels, drawn)

    def draw(self, scene: StageScene, levels, drawn: dict, pixels: dict | None = None) -> None:
        """Show the stage's colour `levels` (the colour bar and every panel, if they moved)
        and new pixels for the panels in `drawn`: key -> (matrix, colours, reduced image);
        colours and image may be None (computed from the matrix); `pixels`, key -> the
        image coloured on `levels` already (prepared off the UI thread)."""
        pixels = pixels or {}
        relevel = levels != scene.levels
        scene.levels = levels
        fmt = stage_format(scene.stage, levels)
        if relevel and scene.colorbar is not None:
            scene.colorbar.setLevels(levels, fmt)
        blocked = self.view.document.trace().mask
        for key, panel in scene.panels.items():
            if key in drawn:
                self.update_count += 1
                matrix, colours, image = drawn[key]
                masked = blocked if KINDS[key[0]].masked else None
                panel.set_matrix(
                    matrix, levels, masked, fmt, colours, reduced=image, pixels=pixels.get(key)
                )
            elif relevel:
                panel.relevel(levels, fmt)
