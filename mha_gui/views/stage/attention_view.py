"""Heatmaps of the current stage for all heads at once (the window's central area).

What a stage shows — its panels, titles, colour levels and number format — comes from
mha_gui.engine.panels.stage_panels, the description the exported figures read too, so a panel
looks on paper as it does here. This module arranges those panels in a grid (one cell
per head) and redraws only what an edit changed: a `traceChanged` calls `setImage` on
the panels of the heads that changed, plus Y and H, which every edit touches. A single
colour bar on the right gives the stage's scale.

The view is made of parts, each an object given what it needs when it is made:
`scenes` (stage_scene.SceneStack: the stages' canvases, kept and closed — the rule of
their lifetime is written there), `headings` (stage_titles: titles and highlights),
`builder` (stage_cells: a head group's grid cell, the colour bar), `build`
(stage_build: the build in steps, a large stage a few heads per turn), `blanks`
(hidden_cells: an exercise's blanks), `images` (stage_images: large stages prepared off
the UI thread, and what waits for the worker), `cells` (cell_actions: tooltips, mask toggling, panel matrices) and `options`
(display_options.HeatmapOptions: theme, colour map, zoom, values, weights range).
"""

from __future__ import annotations

from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QPoint, Signal
from PySide6.QtWidgets import QLabel, QWidget

from mha_gui.document import EVERYTHING, Later
from mha_gui.engine.panels.stage_panels import KINDS, PLANS
from mha_gui.engine.panels.stages import STAGES, stage_by_name
from mha_gui.views.settings.display_options import HeatmapOptions
from mha_gui.views.settings.display_settings import STAGE_LAYOUTS
from mha_gui.views.stage.cell_actions import CellActions
from mha_gui.views.stage.head_swap import retarget
from mha_gui.views.stage.heatmap_panel import HeatmapPanel
from mha_gui.views.stage.hidden_cells import HiddenCells
from mha_gui.views.stage.plot_items import ColorBar, TitleLabel
from mha_gui.views.stage.square_grid import (
    READABLE,
    Group,
    StageGeometry,
    auto_layout,
    min_scale,
    stage_geometry,
)
from mha_gui.views.stage.stage_build import StageBuild
from mha_gui.views.stage.stage_cells import StageCells
from mha_gui.views.stage.stage_images import REBUILD, SWITCH, StageImages
from mha_gui.views.stage.stage_scene import (
    SceneStack,
    StageScene,
    depends,
    fit_canvas,
    grid_layout,
    planned_cells,
    stage_groups,
)
from mha_gui.views.stage.stage_titles import StageTitles

# A stage whose panels hold more cells than this prepares its images off the UI thread
# (n = 2048, 12 heads: 50 M score cells to scan and reduce; X alone, 1.6 M cells: ~20 ms);
# smaller ones draw at once.
PREPARE_CELLS = 1_000_000
# A stage whose panels hold more cells than this is built a few heads per event-loop turn,
# each turn ending once it has run BUILD_SLICE_S (n = 2048, 12 heads: the projections
# stage's 36 plots took ~110 ms in one go); "computing…" shows until the last head is in.
# Smaller stages are built at once (a toy stage in a few milliseconds).
CHUNK_CELLS = 1_000_000
BUILD_SLICE_S = 0.012
# The view's size is read in steps of this many pixels: a resize by a few pixels (a
# dock's splitter dragged) keeps the layout rather than rebuilding every panel.
SIZE_STEP = 24

WEIGHTS = stage_by_name("weights").index  # the stage whose maps decide "auto"
# A layout is planned from estimates of what its titles and bands take (square_grid);
# what is drawn can take more (a title on two lines at 150 %, the concat bands over H:
# the toy's stages at 150 % scrolled by 15–61 px). The room a stage then overshoots its
# view by is taken off its next fit, at most FIT_ROUNDS times per stage and view size.
FIT_ROUNDS = 6


class LayoutKey(NamedTuple):
    """What a stage's layout depends on (`AttentionView._geometry` remembers it so)."""

    stage: int
    config: object
    tokens: tuple
    width: int
    height: int
    zoom: float
    mode: str
    head: int
    values: bool  # Auto's choice depends on whether numbers are shown

    @property
    def sized(self) -> LayoutKey:
        """Without the inspected head: one head big, each head drawn big takes the same
        room, so one overshoot (`AttentionView._fit`) holds for them all."""
        return self._replace(head=-1)


class AttentionView(QWidget):
    """Every head's panel for the current stage; the inspected head framed, the query row
    outlined in every panel. Hover a cell for where its number came from."""

    panelContextMenuRequested = Signal(str, int, QPoint)
    message = Signal(str)  # for the status bar (e.g. why a pair cannot be opened)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("attentionView")
        self.setMinimumSize(320, 200)
        self.rebuild_count = 0
        # the (query, key) pair under the last right-click on a scores/weights panel
        self.menu_pair: tuple[int, int] | None = None
        self.layout_mode = "auto"  # View settings' stage layout: auto, grid or one-big
        self._geometries: dict[LayoutKey, StageGeometry] = {}  # see _geometry
        # the room (width, height) each layout overshot its view by, and fits corrected
        self._overshoot: dict[LayoutKey, tuple[int, int, int]] = {}

        self.options = HeatmapOptions(
            restyle=self.rebuild,
            show_values=self._show_values,
            weights_range=lambda _name: self.rebuild(),
        )
        # Stages already built keep their canvas (a few, see SCENE_CELLS): going back to a
        # stage shows it again and redraws only what changed meanwhile.
        self.scenes = SceneStack(self, document.view.stage)
        self.headings = StageTitles(self)
        self.images = StageImages(self)
        self.blanks = HiddenCells(self.scenes)  # an exercise's blanks drawn as empty boxes
        self.cells = CellActions(document, self.message.emit, lambda: self.blanks.hidden)
        self.builder = StageCells(
            document,
            self.options,
            on_tooltip=self.cell_tooltip,
            on_click=self._cell_clicked,
            on_ctrl_click=self._cell_ctrl_clicked,
            on_menu=self._menu,
            on_thumb=document.set_head,
            hide_cells=self.blanks.apply,
        )
        self._rebuild_later = Later(self, self.rebuild)
        self._build_later = Later(self, self._continue_build)
        self.build = StageBuild(
            self.builder, self._finish_build, self._build_later.schedule, self._build_done
        )
        self._relayout_later = Later(self, self._relayout)
        # titles and axes know their sizes once laid out: the scroll area's room then
        self._fit_later = Later(self, self._fit)

        document.traceChanged.connect(self._on_trace)
        # configChanged follows every shapeChanged in the same call: one connection
        document.configChanged.connect(self._on_config)
        document.tokensChanged.connect(self._on_tokens)
        document.viewChanged.connect(self._on_view)
        document.busyChanged.connect(self.images.on_busy)
        # "computing…": a large layer is being recomputed off the UI thread; what is on
        # screen stays the last consistent trace until the new one is ready
        self.computing = QLabel("computing…", self)
        self.computing.setObjectName("computingMark")
        self.computing.setStyleSheet(
            "background: rgba(255, 200, 60, 220); color: black; padding: 3px 8px;"
            "border-radius: 4px;"
        )
        self.computing.setVisible(False)
        self.rebuild()
        self.images.on_busy(document.busy)

    # --------------------------------------------------- the shown stage's state ---
    @property
    def scene(self) -> StageScene:
        return self.scenes.current

    @property
    def _scenes(self):  # the kept (hidden) stages' scenes by stage, oldest first
        return self.scenes.kept

    @property
    def canvas(self) -> pg.GraphicsLayoutWidget:
        return self.scene.canvas

    @property
    def panels(self) -> dict[tuple[str, int], HeatmapPanel]:
        return self.scene.panels

    @property
    def titles(self) -> dict[int, TitleLabel]:
        return self.scene.titles

    @property
    def colorbar(self) -> ColorBar | None:
        return self.scene.colorbar

    @property
    def update_count(self) -> int:  # panels given new pixels (tests count what edits redraw)
        return self.images.update_count

    @property
    def stage_name(self) -> str:
        return STAGES[self.document.view.stage].name

    @property
    def building(self) -> bool:
        """Is a large stage still being built, a few heads per event-loop turn?"""
        return self.scene.building is not None

    @property
    def rebuild_due(self) -> bool:  # the shapes or the layout changed, rebuild to come
        return self._rebuild_later.pending

    @property
    def settled(self) -> bool:
        """Nothing pending: no build in turns, no rebuild due, nothing waiting for the
        worker (what a benchmark or a test waits for after an action)."""
        later = (self._rebuild_later, self._build_later, self._relayout_later, self._fit_later)
        return not (self.building or self.images.deferred or any(t.pending for t in later))

    # ----------------------------------------------------- display settings ------
    def bind_display(self, settings) -> None:
        self.options.bind(settings)
        settings.follow("stage_layout", self.set_stage_layout)

    def set_stage_layout(self, name: str) -> None:
        """Grid of every head, or the inspected head big beside thumbnails ("auto": the
        grid up to four heads); see square_grid."""
        if name not in STAGE_LAYOUTS:
            raise ValueError(f"unknown stage layout {name!r}; choose {', '.join(STAGE_LAYOUTS)}")
        if name != self.layout_mode:
            self.layout_mode = name
            self.rebuild()

    @property
    def geometry(self) -> StageGeometry | None:
        """The shown stage's layout: each panel's size, each group's place."""
        return self.scene.geometry

    def set_theme(self, name: str) -> None:
        self.options.set_theme(name)

    def set_colormap(self, name: str) -> None:
        self.options.set_colormap(name)

    def set_zoom(self, factor: float) -> None:
        self.options.set_zoom(factor)

    def set_show_values(self, show: bool) -> None:
        self.options.set_show_values(show)

    def set_weights_range(self, name: str) -> None:
        self.options.set_weights_range(name)

    def _show_values(self, show: bool) -> None:
        for scene in self.scenes.every():
            for panel in scene.panels.values():
                panel.set_show_values(show)
        if self.scene.built and not self._fits(self.scene):
            self.rebuild()  # Auto: one head big was chosen for its numbers, or is now

    # ------------------------------------------------------------ cells ----------
    def cell_tooltip(self, kind: str, head: int | None, row: int, col: int) -> str:
        return self.cells.cell_tooltip(kind, head, row, col)

    def causal_blocks(self, query: int, key: int) -> bool:
        return self.cells.causal_blocks(query, key)

    def toggle_blocked(self, query: int, key: int) -> bool:
        return self.cells.toggle_blocked(query, key)

    def panel_matrix(self, stage_name: str, head: int, part: str | None = None):
        return self.cells.panel_matrix(stage_name, head, part)

    def set_cell_filter(self, hidden=None) -> None:
        """Draw some cells as empty boxes: `hidden(kind, head)` gives the (row, col) cells
        of panel (kind, head) to hide (head None for the layer-wide X, H, Y); None shows
        every cell again. Applies to every built stage and to those built later."""
        self.blanks.set(hidden)

    @property
    def hides_cells(self) -> bool:
        """An exercise hides cells: exports and copies of the numbers would give them away."""
        return self.blanks.hidden is not None

    # ----------------------------------------------------------------- building ---
    def _groups(self) -> list[Group]:
        return stage_groups(self.document.view.stage, self.document.config)

    def _geometry_key(self) -> LayoutKey:
        doc, view = self.document, self.document.view
        return LayoutKey(
            view.stage,
            doc.config,
            tuple(doc.tokens),
            self.width() // SIZE_STEP * SIZE_STEP,
            self.height() // SIZE_STEP * SIZE_STEP,
            self.options.zoom,
            self.layout_mode,
            view.head,
            self.options.show_values,
        )

    def _geometry(self) -> StageGeometry:
        """The current stage's layout for the view's size now (square_grid), less what it
        overshot the view by when drawn (`_fit`), remembered for its inputs: every head
        or query switch asks whether the shown layout still fits, and fitting an
        n = 2048 layout anew took ~0.2 s."""
        doc, view = self.document, self.document.view
        key = self._geometry_key()
        if key not in self._geometries:
            if len(self._geometries) >= 16:
                self._geometries.clear()
            over_w, over_h, _rounds = self._overshoot.get(key.sized, (0, 0, 0))
            width, height, zoom, mode = key.width - over_w, key.height - over_h, key.zoom, key.mode
            if mode == "auto":
                weights = stage_groups(WEIGHTS, doc.config)
                mode = auto_layout(weights, doc.config, doc.tokens, width, height, zoom, key.values)
            self._geometries[key] = stage_geometry(
                self._groups(), doc.config, doc.tokens, width, height, zoom, mode, view.head
            )
        return self._geometries[key]

    def _fit(self) -> None:
        """The canvas asks its scroll area for the room its items need; a layout drawn
        larger than its view where smaller cells were allowed is planned again with the
        overshoot taken off (FIT_ROUNDS), so that it fits without scrolling."""
        scene = self.scene
        fit_canvas(scene)
        if not scene.built or scene.geometry is None or scene.holder is None:
            return
        room = scene.holder.maximumViewportSize()
        over_w = max(0, scene.canvas.minimumWidth() - room.width())
        over_h = max(0, scene.canvas.minimumHeight() - room.height())
        doc = self.document
        floor = min_scale(self._groups(), doc.config, doc.tokens, self.options.zoom)
        if not (over_w or over_h) or scene.geometry.scale <= floor + 1e-6:
            return  # it fits, or its cells are as small as they may be: it scrolls
        key = self._geometry_key()
        width, height, rounds = self._overshoot.get(key.sized, (0, 0, 0))
        if scene.geometry != self._geometries.get(key):
            return  # the view changed meanwhile: its own layout comes
        if len(self._overshoot) >= 64:
            self._overshoot.clear()
        # a layout of a large layer costs ~0.2 s to plan: one try; a small one a few, as
        # the cells shrink in steps of ~8 % and a few pixels less room may change nothing
        limit = FIT_ROUNDS if doc.config.n <= READABLE else rounds + 1
        while rounds < limit:  # a few pixels more room taken off each time (× 2)
            step = 2**rounds
            width, height, rounds = width + over_w * step, height + over_h * step, rounds + 1
            self._overshoot[key.sized] = (width, height, rounds)
            self._geometries.pop(key, None)
            if self._geometry() != scene.geometry:
                self._relayout_later.schedule()
                return

    def _fits(self, scene: StageScene) -> bool:
        """Is `scene`'s layout still the one for the view's size (and inspected head)?"""
        return scene.geometry == self._geometry()

    def _fits_or_retargets(self, scene: StageScene) -> bool:
        """`_fits`, or made to fit by `_retarget`."""
        return self._fits(scene) or self._retarget(scene)

    def _retarget(self, scene: StageScene) -> bool:
        """One head big, another head inspected: the scene's panels show the heads in the
        places they now take (head_swap.py); it then owes new pixels. False (nothing
        changed) when the new layout differs in more than that."""
        kinds = {g.head: g.kinds for g in self._groups()}
        geometry = self._geometry()

        def moved(panel, kind: str, head: int) -> None:
            thumb = geometry.places[head].thumb
            self.builder.retargeted(panel, kind, head, several=len(kinds[head]) > 1, thumb=thumb)

        return retarget(scene, geometry, kinds, moved)

    def _catch_up(self, scene: StageScene) -> None:
        """The changes `scene` missed (while hidden, or its heads re-targeted) drawn, and
        its titles and highlights set."""
        if scene.pending is not None:
            pending, scene.pending = scene.pending, None
            self._update_all(*pending)
        self.headings.update()

    def _schedule_rebuild(self) -> None:
        self._rebuild_later.schedule()

    def _on_config(self) -> None:
        """New shapes or config: a new layout is a rebuild; a switch that changes numbers
        only (causal mask, biases, scale, a head switched off) is drawn by the recompute
        that follows, on the panels shown; the kept stages are dropped."""
        if self._layer_changed(self.scene):
            self._schedule_rebuild()
            return
        while self.scenes.kept:
            self.scenes.close(self.scenes.kept.popitem()[1])
        if self.scene.built:
            self.headings.update()  # a head switched off or on: its titles and marks

    def rebuild(self) -> None:
        """Build every panel of the current stage anew (shape, config, theme or zoom
        changed): every other stage's kept canvas is dropped too."""
        self._rebuild_later.cancel()
        self._relayout_later.cancel()
        if self.document.computing:
            self.images.defer(REBUILD)  # built from the new trace when it is ready
            return
        self.scenes.renew(self.document.view.stage, keep_others=False)
        self._build()

    def _relayout(self) -> None:
        """The current stage again, in a grid that fits the new size (others are kept)."""
        if not self._fits(self.scene):
            self.scenes.renew(self.document.view.stage)
            self._build()

    def show_stage(self) -> None:
        """Show the current stage: its kept canvas brought up to date, or a new one."""
        if self.document.computing:
            self.images.defer(SWITCH)
            return
        if self.rebuild_due:
            self.rebuild()  # the shapes or the config changed: nothing kept is valid
            return
        scene = self.scenes.switch(self.document.view.stage, self._fits_or_retargets)
        if not scene.built:
            self._build()
            return
        if scene.relabel:
            scene.relabel = False
            self._relabel()
        self._catch_up(scene)
        self._fit_later.schedule()

    def _build(self) -> None:
        """Create every panel of the current stage in the (empty) current canvas: at once,
        or for a large stage a few heads per event-loop turn (`_continue_build`)."""
        self.rebuild_count += 1
        doc = self.document
        c = doc.config
        scene = self.scene
        scene.stage, scene.layout = doc.view.stage, grid_layout(self.document.config)
        scene.canvas.setBackground(self.options.palette.background)
        groups = self._groups()
        lut = self.options.lut(PLANS[self.stage_name].color)
        if planned_cells(groups, c, doc.tokens) > CHUNK_CELLS:
            # nothing but the background is painted until every head is in: a half-built
            # grid re-laid out and repainted at each step would cost more than the build
            # (transparent rather than hidden: hidden items would have no size to lay out)
            scene.canvas.ci.setOpacity(0.0)
            scene.building, scene.adding = self._planned_steps(scene, groups, lut), True
            # the plan, then each panel, in turns of their own: this one made the canvas
            # (n = 2048: ~10 ms), and the plan (~11 ms) and a panel more in it made
            # switching to the projections a 50–65 ms stall
            self._build_later.schedule()
            self.images.sync_mark()
        else:
            self._plan(scene)
            for _ in self.build.steps(scene, groups, lut):
                pass

    def _plan(self, scene: StageScene) -> None:
        """The grid of `scene`'s panels for the view's size now (and, one head big, the
        box of the other heads' thumbnails)."""
        scene.geometry = geometry = self._geometry()
        if geometry.mode == "one-big":
            scene.thumbs = pg.GraphicsLayout()
            scene.thumbs.setSpacing(2)
            scene.canvas.ci.addItem(scene.thumbs, row=0, col=geometry.cols, rowspan=geometry.rows)

    def _layer_changed(self, scene: StageScene) -> bool:
        """Is the layer's grid (shapes, heads) another than `scene` was built for? Its
        rebuild is then due."""
        return grid_layout(self.document.config) != scene.layout

    def _planned_steps(self, scene: StageScene, groups, lut):
        """A large stage's build in steps: its plan first, then the panels (StageBuild).
        A layer whose shapes changed since the build began is not planned: its rebuild
        is due (and waits for its trace), and a plan of the new shapes would not match
        the groups of the old."""
        if self._layer_changed(scene):
            return
        self._plan(scene)
        yield None
        yield from self.build.steps(scene, groups, lut)

    def _finish_build(self, scene: StageScene) -> None:
        """Every head is in: labels, pixels, titles, and the room the grid needs — unless
        a layer of other shapes came while a large stage was built over turns (its trace
        still on the worker): its rebuild is due and draws it, and labelling or filling
        the old panels from it raised (a head the new layer no longer has)."""
        if self._layer_changed(scene):
            return
        self._relabel()
        self._update_all()
        if scene.closed:
            return  # reading the trace waited for the worker, whose report rebuilt it
        self.headings.update()
        fit_canvas(scene)
        self._fit_later.schedule()

    def _continue_build(self) -> None:
        self.build.run(self.scene, BUILD_SLICE_S)

    def _build_done(self) -> None:
        """The last step ran. A head inspected meanwhile (one head big) is drawn big now:
        while a stage is half built, a head switch only moves the headings."""
        self.images.sync_mark()
        self._fit_later.schedule()  # the grid as the last step left it: its room, its bar
        if self.scene.built and not self._fits(self.scene):
            self._on_view()

    # ------------------------------------------------------------------ content ---
    def _update_all(self, heads=EVERYTHING, contributions=EVERYTHING) -> None:
        """New pixels for the panels whose matrix changed (all of them if the levels moved).

        `heads`: the query heads whose Z changed (EVERYTHING: everything); `contributions`: the
        heads whose output contribution changed. A large stage is prepared off the UI
        thread (StageImages)."""
        scene = self.scene
        if scene.adding:
            return  # every panel is drawn when the last one is in (_finish_build)
        if heads is EVERYTHING:
            stale = None
        else:
            contributions = set(heads) | set(contributions or ())
            stale = {k for k in scene.panels if depends(*k, heads, contributions)}
        if scene.cells > PREPARE_CELLS:
            self.images.prepare(scene, stale)
            return
        self.images.draw_now(scene, stale)

    def _relabel(self) -> None:
        c, tokens = self.document.config, self.document.tokens
        limit = 16 if len(self.panels) <= 4 else 10
        for (kind, _head), panel in self.panels.items():
            panel.set_axis_labels(tokens, KINDS[kind].columns(c, tokens), limit)

    # ------------------------------------------------------------------ signals ---
    def _on_trace(self, change) -> None:
        if self.images.deferred:
            self.images.run_deferred(changed=True)
            return
        contributions = EVERYTHING if change is None else change.contributions
        for scene in self.scenes.kept.values():  # kept stages catch up when shown again
            scene.note_change(change, contributions)
        if self.rebuild_due:
            self.rebuild()
            return
        self._update_all(change, contributions)

    def _on_tokens(self) -> None:
        if self.rebuild_due or self.images.deferred == REBUILD:
            return  # a new layer: the rebuild labels the new panels
        self._relabel()
        for scene in self.scenes.kept.values():
            scene.relabel = True

    def _on_view(self) -> None:
        if self.document.view.stage != self.scene.stage:
            self.show_stage()
        elif self.scene.built and not self._fits(self.scene):
            # one-big: another head is inspected, it is drawn big — by the panels there
            # (new heads, titles, pixels), or in a stage built anew when they cannot
            if self._retarget(self.scene):
                self._catch_up(self.scene)
            else:
                self._relayout()
        else:
            self.headings.update()

    def _cell_clicked(self, head: int | None, row: int) -> None:
        if head is not None:
            self.document.set_head(head)
        self.document.set_query(row)

    def _cell_ctrl_clicked(self, kind: str, head: int | None, row: int, col: int) -> None:
        if KINDS[kind].masked:
            self.toggle_blocked(row, col)
        else:
            self._cell_clicked(head, row)

    def _menu(self, head: int | None, pos: QPoint) -> None:
        h = -1 if head is None else head
        panel = self.panels.get(("S", h)) or self.panels.get(("A", h))
        self.menu_pair = None if panel is None else panel.menu_cell
        self.panelContextMenuRequested.emit(self.stage_name, h, pos)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if not self.panels:
            return
        if not self._fits(self.scene):
            self._relayout_later.schedule()  # this stage only: the others are checked when shown
        else:
            self.headings.refit()  # titles go on one or two lines to fit
            self._fit_later.schedule()
