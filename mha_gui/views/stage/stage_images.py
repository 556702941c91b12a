"""Large stages, off the UI thread: a stage's colour scale and reduced images are
prepared on the worker (n = 2048, 12 heads: 50 M score cells to scan and reduce), and
while the worker runs the view shows "computing…" and defers a stage switch or rebuild
until the trace is ready. A mixin of AttentionView: the work goes through
`Document.run_off_thread`, which keeps the trace still meanwhile; a result is shown at
once, or dropped if a newer preparation or another stage superseded it.
"""

from __future__ import annotations

from mha_gui.engine.numbers import peak
from mha_gui.engine.stage_panels import KINDS, PLANS, stage_levels, weights_colours
from mha_gui.views.stage.heatmap_panel import prepare_image
from mha_gui.views.stage.stage_scene import ALL, StageScene


class StageImages:
    def _prepare_off_thread(self, stale) -> None:
        """Compute the stale panels' peaks and reduced images on a worker thread (the
        document keeps the trace still meanwhile), then show them all at once."""
        doc, scene = self.document, self.scene
        keys = [k for k in self.panels if stale is None or k in stale]
        if not keys:
            return
        weights = PLANS[self.stage_name].color == "weights"
        weights_range = self._weights_range
        steps = {k: self.panels[k].step for k in keys}
        token = object()
        scene.prepare_token = token

        def work() -> dict:
            data = doc.frozen_data()
            out = {}
            for kind, head in keys:
                m = KINDS[kind].source(data, None if head < 0 else head)
                shown = weights_colours(m, weights_range) if weights else m
                out[(kind, head)] = (m, peak(m), prepare_image(shown, steps[(kind, head)]))
            return out

        doc.run_off_thread(work, lambda result: self._show_prepared(scene, token, result))

    def _show_prepared(self, scene: StageScene, token, result: dict) -> None:
        if scene.prepare_token is not token:
            return  # superseded by a newer preparation of this scene
        if scene is not self.scene:
            scene.note_change(ALL, ALL)  # hidden meanwhile: redone when shown
            return
        scene.peaks.update({key: value[1] for key, value in result.items()})
        levels = stage_levels(scene.stage, scene.peaks.values())
        relevel = levels != scene.levels
        scene.levels = levels
        fmt = self._format(levels)
        if relevel and scene.colorbar is not None:
            scene.colorbar.setLevels(levels, fmt)
        blocked = self.document.trace().mask
        for key, panel in self.panels.items():
            if key in result:
                self.update_count += 1
                matrix, _peak, image = result[key]
                masked = blocked if KINDS[key[0]].masked else None
                panel.set_matrix(matrix, levels, masked, fmt, reduced=image)
            elif relevel:
                panel.relevel(levels, fmt)

    def _on_busy(self, busy: bool) -> None:
        self._sync_mark()
        if not busy and self._deferred:
            self._run_deferred(changed=False)

    def _sync_mark(self) -> None:
        """ "computing…" while the worker runs or a large stage is still being built."""
        shown = self.document.busy or self.building
        self.computing.setVisible(shown)
        if shown:
            self.computing.adjustSize()
            self.computing.move(self.width() - self.computing.width() - 8, 6)
            self.computing.raise_()

    def _run_deferred(self, changed: bool) -> None:
        """The stage switch or rebuild that waited for the worker (`changed`: the numbers
        changed meanwhile, so every kept stage is stale too)."""
        waiting, self._deferred = self._deferred, False
        if changed:
            for scene in [*self._scenes.values(), self.scene]:
                scene.note_change(ALL, ALL)
        # a rebuild (new shapes or config) drops every kept stage; a stage switch may
        # show a kept one
        rebuild = waiting == "rebuild" or self._rebuild_timer.isActive()
        if not rebuild and self.scene.stage != self.document.view.stage and self.scene.panels:
            self._switch_stage()
        else:
            self.rebuild()
