"""Heatmaps of the current stage for all heads at once (the window's central area).

What a stage shows — its panels, titles, colour levels and number format — comes from
mha_gui.engine.stage_panels, the description the exported figures read too, so a panel
looks on paper as it does here. This module arranges those panels in a grid (one cell
per head), keeps built stages (stage_scene.py) and redraws only what an edit changed:
a `traceChanged` calls `setImage` on the panels of the heads that changed, plus Y and
H, which every edit touches. A single colour bar on the right gives the stage's scale.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QTimer, Signal
from PySide6.QtWidgets import QLabel, QStackedLayout, QWidget

from mha_gui import theme
from mha_gui.engine.numbers import peak
from mha_gui.engine.stage_panels import (
    KINDS,
    PLANS,
    bar_label,
    check_weights_range,
    stage_format,
    stage_levels,
    symbol,
    weights_colours,
)
from mha_gui.engine.stages import STAGES
from mha_gui.views.settings.display_options import DisplayOptions
from mha_gui.views.stage.cell_actions import CellActions
from mha_gui.views.stage.concat_bands import add_concat_bands
from mha_gui.views.stage.heatmap_panel import HeatmapPanel
from mha_gui.views.stage.plot_items import ColorBar, TitleLabel, add_plot
from mha_gui.views.stage.stage_images import StageImages
from mha_gui.views.stage.stage_scene import (
    ALL,
    SCENE_CELLS,
    Group,
    StageScene,
    TitleFitter,
    depends,
    fit_canvas,
    grid_columns,
    grid_fits,
    group_min_width,
    make_readable,
    planned_cells,
    scroll_holder,
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
# the last steps of a build in turns (see _build_steps)
EVERY_HEAD_IN, PAINT_NEXT = "every head is in", "paint next"


class AttentionView(CellActions, StageTitles, StageImages, DisplayOptions, QWidget):
    """Every head's panel for the current stage; the inspected head framed, the query row
    outlined in every panel. Hover a cell for where its number came from."""

    panelContextMenuRequested = Signal(str, int, QPoint)
    message = Signal(str)  # for the status bar (e.g. why a pair cannot be opened)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("attentionView")
        self.setMinimumSize(320, 240)
        self._theme = "light"
        self._show_values = True
        self._zoom = 1.0
        self._colormap = theme.DEFAULT_COLORMAP
        self._weights_range = "fixed"
        self._titles = TitleFitter()
        self.rebuild_count = 0
        self.update_count = 0
        # the (query, key) pair under the last right-click on a scores/weights panel
        self.menu_pair: tuple[int, int] | None = None
        # cells drawn as empty boxes (an exercise's blanks): (kind, head) -> {(row, col)}
        self._cell_filter = None

        # Stages already built keep their canvas (a few, see SCENE_CELLS): going back to a
        # stage shows it again and redraws only what changed meanwhile.
        self._stack = QStackedLayout(self)
        self._stack.setContentsMargins(0, 0, 0, 0)
        self._scenes: OrderedDict[int, StageScene] = OrderedDict()  # hidden stages
        self.scene = self._new_scene()

        self._rebuild_timer = self._single_shot(self.rebuild)
        self._build_timer = self._single_shot(self._continue_build)
        self._trash: list[StageScene] = []  # discarded canvases still to clear
        self._trash_timer = self._single_shot(self._empty_trash)
        self._relayout_timer = self._single_shot(self._relayout)
        # titles and axes know their sizes once laid out: the scroll area's room then
        self._fit_timer = self._single_shot(lambda: fit_canvas(self.scene))

        document.traceChanged.connect(self._on_trace)
        document.shapeChanged.connect(self._schedule_rebuild)
        document.configChanged.connect(self._schedule_rebuild)
        document.tokensChanged.connect(self._on_tokens)
        document.viewChanged.connect(self._on_view)
        document.busyChanged.connect(self._on_busy)
        # "computing…": a large layer is being recomputed off the UI thread; what is on
        # screen stays the last consistent trace until the new one is ready
        self.computing = QLabel("computing…", self)
        self.computing.setObjectName("computingMark")
        self.computing.setStyleSheet(
            "background: rgba(255, 200, 60, 220); color: black; padding: 3px 8px;"
            "border-radius: 4px;"
        )
        self.computing.setVisible(False)
        # "rebuild" or "switch" waits for the recompute (False: nothing)
        self._deferred: str | bool = False
        self.rebuild()
        self._on_busy(document.busy)

    def _single_shot(self, slot) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(0)
        timer.timeout.connect(slot)
        return timer

    # --------------------------------------------------- the shown stage's state ---
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
    def stage_name(self) -> str:
        return STAGES[self.document.view.stage].name

    @property
    def building(self) -> bool:
        """Is a large stage still being built, a few heads per event-loop turn?"""
        return self.scene.building is not None

    # ------------------------------------------------------------------ public ----
    def _pt(self, size: float) -> str:
        return f"{size * self._zoom:.3g}pt"

    def set_show_values(self, show: bool) -> None:
        self._show_values = bool(show)
        for scene in [self.scene, *self._scenes.values()]:
            for panel in scene.panels.values():
                panel.set_show_values(self._show_values)

    def set_weights_range(self, name: str) -> None:
        """View ▸ Weights colour range: fixed 0–1, per-head or per-row maximum."""
        if check_weights_range(name) != self._weights_range:
            self._weights_range = name
            self.rebuild()

    def set_cell_filter(self, hidden=None) -> None:
        """Draw some cells as empty boxes: `hidden(kind, head)` gives the (row, col) cells
        of panel (kind, head) to hide (head None for the layer-wide X, H, Y); None shows
        every cell again. Applies to every built stage and to those built later."""
        self._cell_filter = hidden
        for scene in [self.scene, *self._scenes.values()]:
            for (kind, head), panel in scene.panels.items():
                self._apply_filter(panel, kind, head)

    @property
    def hides_cells(self) -> bool:
        """An exercise hides cells: exports and copies of the numbers would give them away."""
        return self._cell_filter is not None

    def _apply_filter(self, panel: HeatmapPanel, kind: str, head: int) -> None:
        hidden = self._cell_filter
        panel.set_hidden(() if hidden is None else hidden(kind, None if head < 0 else head))

    # ----------------------------------------------------------------- building ---
    def _groups(self) -> list[Group]:
        return stage_groups(self.document.view.stage, self.document.config)

    def _fits(self, cols: int) -> bool:
        """Is a grid of `cols` columns still right for the view's size?"""
        groups = self._groups()
        room = group_min_width(groups, self.document.config, self.document.tokens, self._zoom)
        return grid_fits(groups, cols, self.width(), self.height(), room)

    def _schedule_rebuild(self) -> None:
        self._rebuild_timer.start()

    def rebuild(self) -> None:
        """Create every panel for the current stage (shape, config, theme or zoom changed):
        every other stage's kept canvas is dropped too."""
        self._rebuild_timer.stop()
        self._relayout_timer.stop()
        if self.document.computing:
            self._deferred = "rebuild"  # built from the new trace when it is ready
            return
        while self._scenes:
            self._discard(self._scenes.popitem()[1])
        self._clear_scene()
        self._build()

    def _relayout(self) -> None:
        """The current stage again, in a grid that fits the new size (others are kept)."""
        if not self._fits(self.scene.grid_cols):
            self._clear_scene()
            self._build()

    def _clear_scene(self) -> None:
        """Empty the shown canvas for a new build (the canvas itself is kept: replacing
        it while pyqtgraph still has events queued for it crashes)."""
        canvas = self.scene.canvas
        canvas.clear()
        self.scene = StageScene(self.document.view.stage, canvas, self.scene.holder)

    def _new_scene(self) -> StageScene:
        canvas = pg.GraphicsLayoutWidget()
        canvas.setObjectName("attentionCanvas")
        canvas.ci.setContentsMargins(6, 6, 6, 6)
        holder = scroll_holder(canvas)
        self._stack.addWidget(holder)
        self._stack.setCurrentWidget(holder)
        return StageScene(self.document.view.stage, canvas, holder)

    def _discard(self, scene: StageScene) -> None:
        """Drop a stage's canvas: out of the stack now, its items cleared in a later
        turn (one canvas a turn: clearing a large stage's items takes ~10 ms)."""
        scene.building = None
        self._stack.removeWidget(scene.holder)
        scene.holder.hide()
        self._trash.append(scene)
        self._trash_timer.start()

    def _empty_trash(self) -> None:
        if self._trash:
            scene = self._trash.pop(0)
            scene.canvas.clear()
            scene.holder.deleteLater()
        if self._trash:
            self._trash_timer.start()

    def _switch_stage(self) -> None:
        """Show the current stage: its kept canvas brought up to date, or a new one."""
        stage = self.document.view.stage
        if self.document.computing:
            self._deferred = self._deferred or "switch"  # a waiting rebuild stays one
            return
        if self._rebuild_timer.isActive():
            self.rebuild()  # the shapes or the config changed: nothing kept is valid
            return
        if self.building:
            self._discard(self.scene)  # half built: not worth keeping
        else:
            self._scenes[self.scene.stage] = self.scene
        kept = self._scenes.pop(stage, None)
        if kept is not None and self._fits(kept.grid_cols):
            self.scene = kept
            self._stack.setCurrentWidget(kept.holder)
            if kept.holder.geometry() != self.rect():
                kept.holder.setGeometry(self.rect())
            if kept.relabel:
                kept.relabel = False
                self._relabel()
            if kept.pending is not None:
                pending, kept.pending = kept.pending, None
                self._update_all(*pending)
            self._update_highlights()
            self._fit_timer.start()
        else:
            if kept is not None:
                self._discard(kept)
            self.scene = self._new_scene()
            self._build()
        total = sum(s.cells for s in self._scenes.values())
        while self._scenes and total > SCENE_CELLS:
            _stage, old = self._scenes.popitem(last=False)
            total -= old.cells
            self._discard(old)

    def _build(self) -> None:
        """Create every panel of the current stage in the (empty) current canvas: at once,
        or for a large stage a few heads per event-loop turn (`_continue_build`)."""
        self.rebuild_count += 1
        doc = self.document
        c = doc.config
        pal = theme.palette(self._theme)
        scene = self.scene
        scene.stage = doc.view.stage
        scene.canvas.setBackground(pal.background)
        plan = PLANS[self.stage_name]
        groups = self._groups()
        room = group_min_width(groups, c, doc.tokens, self._zoom)
        ncols = grid_columns(groups, self.width(), self.height(), group_width=room)
        scene.grid_cols = ncols
        nrows = math.ceil(len(groups) / ncols)
        lut = theme.colormap_for(plan.color, self._colormap)
        steps = self._build_steps(scene, groups, ncols, nrows, pal, lut)
        if planned_cells(groups, c, doc.tokens) > CHUNK_CELLS:
            # nothing but the background is painted until every head is in: a half-built
            # grid re-laid out and repainted at each step would cost more than the build
            # (transparent rather than hidden: hidden items would have no size to lay out)
            scene.canvas.ci.setOpacity(0.0)
            scene.building, scene.adding = steps, True
            self._continue_build()
            self._sync_mark()
        else:
            for _ in steps:
                pass

    def _build_steps(self, scene: StageScene, groups, ncols: int, nrows: int, pal, lut):
        """The build, one step per head group, then its finish, then its first paint:
        a generator `_continue_build` runs a few steps per turn."""
        yield from self._add_groups(scene, groups, ncols, pal, lut)
        yield EVERY_HEAD_IN
        scene.adding = False
        self._finish_build(scene, lut, nrows)
        # the first paint of every panel (~30 ms at the projections stage, n = 2048) comes
        # in a turn of its own, after the finish
        yield PAINT_NEXT
        scene.canvas.ci.setOpacity(1.0)

    def _add_groups(self, scene: StageScene, groups: list[Group], ncols: int, pal, lut):
        """Add each group's cell to the grid, yielding after each one."""
        doc = self.document
        c = doc.config
        many = len(groups) > 4
        for idx, group in enumerate(groups):
            # filled before it joins the canvas: pyqtgraph re-lays out the whole layout
            # tree on every addItem, so a detached cell keeps that to the cell's few items
            cell = pg.GraphicsLayout()
            cell.setContentsMargins(2, 2, 2, 2)
            cell.setSpacing(2)
            title = TitleLabel("", size=self._pt(11))
            cell.addItem(title, row=0, col=0, colspan=len(group.kinds))
            scene.titles[group.head] = title
            for j, kind in enumerate(group.kinds):
                head = None if group.head < 0 else group.head
                shape = (c.n, len(KINDS[kind].columns(c, doc.tokens)))
                plot = add_plot(cell, 1, j)
                if len(group.kinds) > 1:
                    plot.setTitle(
                        f"{symbol(kind, head, c).html}  <span style='color:{pal.muted}'>"
                        f"{shape[0]}×{shape[1]}</span>",
                        color=pal.text,
                        size=self._pt(10),
                    )
                panel = HeatmapPanel(
                    plot,
                    kind,
                    head,
                    shape,
                    palette=pal,
                    lut=lut,
                    show_values=self._show_values,
                    on_tooltip=self.cell_tooltip,
                    on_click=self._cell_clicked,
                    on_menu=self._menu,
                    on_ctrl_click=self._cell_ctrl_clicked,
                    query_rows=KINDS[kind].query_rows,
                    top_margin=0.6 if kind == "H" else 0.0,
                    zoom=self._zoom,
                )
                if KINDS[kind].masked and not many:
                    style = {"color": pal.muted, "font-size": self._pt(9)}
                    plot.setLabel("left", "query", **style)
                    plot.setLabel("bottom", "key", **style)
                make_readable(panel)
                scene.panels[(kind, group.head)] = panel
                if self._cell_filter is not None:
                    self._apply_filter(panel, kind, group.head)
            if len(group.kinds) > 1:
                cell.layout.setRowStretchFactor(1, 1)
            scene.canvas.ci.addItem(cell, row=idx // ncols, col=idx % ncols)
            yield None

    def _continue_build(self) -> None:
        """Add heads to a large stage until this turn has run BUILD_SLICE_S, then let the
        event loop breathe (paint, input) and go on in the next turn."""
        scene = self.scene
        if scene.building is None:
            return
        start = time.perf_counter()
        for step in scene.building:
            spent = time.perf_counter() - start
            # the finish (colour bar, labels, highlights, the first layout) and the first
            # paint take ~20–30 ms each: each in a fresh turn unless this one hardly began
            if spent > BUILD_SLICE_S or (step is not None and spent > BUILD_SLICE_S / 4):
                self._build_timer.start()
                return
        scene.building = None
        self._sync_mark()

    def _finish_build(self, scene: StageScene, lut, nrows: int) -> None:
        """Every head is in: bands, the colour bar, labels, pixels, highlights, room."""
        pal = theme.palette(self._theme)
        if ("H", -1) in scene.panels:
            extras, outlines = add_concat_bands(
                scene.panels[("H", -1)].plot, self.document.config, pal
            )
            scene.extras += extras
            scene.band_outline.update(outlines)
        # the stage's levels come with its pixels (_update_all: at once, or for a large
        # stage from the worker that prepares its images)
        scene.levels = stage_levels(scene.stage, [])
        label = bar_label(scene.stage, self._weights_range)
        scene.colorbar = ColorBar(
            lut, scene.levels, label, pal, self._zoom, self._format(scene.levels)
        )
        scene.canvas.ci.addItem(scene.colorbar, row=0, col=scene.grid_cols, rowspan=nrows)
        self._relabel()
        self._update_all()
        self._update_highlights()
        fit_canvas(scene)
        self._fit_timer.start()

    # ------------------------------------------------------------------ content ---
    def _matrix(self, kind: str, head: int | None):
        return KINDS[kind].source(self.document, head)

    def _format(self, levels):
        return stage_format(self.document.view.stage, levels)

    def _stage_levels(self, stale=None) -> tuple[float, float]:
        """The stage's one colour scale (stage_panels.stage_levels). Each panel's peak is
        kept, so an edit rescans only the panels in `stale` (None: all of them)."""
        peaks = self.scene.peaks
        for key in self.panels:
            if stale is None or key in stale or key not in peaks:
                kind, head = key
                peaks[key] = peak(self._matrix(kind, None if head < 0 else head))
        return stage_levels(self.document.view.stage, peaks.values())

    def _update_all(self, heads=ALL, contributions=ALL) -> None:
        """New pixels for the panels whose matrix changed (all of them if the levels moved).

        `heads`: the query heads whose Z changed (ALL: everything); `contributions`: the
        heads whose output contribution changed. A large stage is prepared off the UI
        thread (`_prepare_off_thread`)."""
        scene = self.scene
        if scene.adding:
            return  # every panel is drawn when the last one is in (_finish_build)
        if heads is ALL:
            stale = None
        else:
            contributions = set(heads) | set(contributions or ())
            stale = {k for k in self.panels if depends(*k, heads, contributions)}
        if scene.cells > PREPARE_CELLS:
            self._prepare_off_thread(stale)
            return
        blocked = self.document.trace().mask
        levels = self._stage_levels(stale)
        relevel = levels != scene.levels
        scene.levels = levels
        fmt = self._format(levels)
        weights = PLANS[self.stage_name].color == "weights"
        if relevel and scene.colorbar is not None:
            scene.colorbar.setLevels(levels, fmt)
        for (kind, head), panel in self.panels.items():
            if not (relevel or stale is None or (kind, head) in stale):
                continue
            self.update_count += 1
            h = None if head < 0 else head
            masked = blocked if KINDS[kind].masked else None
            matrix = self._matrix(kind, h)
            colours = weights_colours(matrix, self._weights_range) if weights else None
            panel.set_matrix(matrix, levels, masked, fmt, colours)

    def _relabel(self) -> None:
        c, tokens = self.document.config, self.document.tokens
        limit = 16 if len(self.panels) <= 4 else 10
        for (kind, _head), panel in self.panels.items():
            panel.set_axis_labels(tokens, KINDS[kind].columns(c, tokens), limit)

    # ------------------------------------------------------------------ signals ---

    def _on_trace(self, change) -> None:
        if self._deferred:
            self._run_deferred(changed=True)
            return
        contributions = ALL if change is None else change.contributions
        for scene in self._scenes.values():  # kept stages catch up when shown again
            scene.note_change(change, contributions)
        if self._rebuild_timer.isActive():
            self.rebuild()
            return
        self._update_all(change, contributions)

    def _on_tokens(self) -> None:
        if self._rebuild_timer.isActive() or self._deferred == "rebuild":
            return  # a new layer: the rebuild labels the new panels
        self._relabel()
        for scene in self._scenes.values():
            scene.relabel = True

    def _on_view(self) -> None:
        if self.document.view.stage != self.scene.stage:
            self._switch_stage()
        else:
            self._update_highlights()

    def _cell_clicked(self, head: int | None, row: int) -> None:
        if head is not None:
            self.document.set_head(head)
        self.document.set_query(row)

    def _menu(self, head: int | None, pos: QPoint) -> None:
        h = -1 if head is None else head
        panel = self.panels.get(("S", h)) or self.panels.get(("A", h))
        self.menu_pair = None if panel is None else panel.menu_cell
        self.panelContextMenuRequested.emit(self.stage_name, h, pos)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if not self.panels:
            return
        if not self._fits(self.scene.grid_cols):
            self._relayout_timer.start()  # this stage only: the others are checked when shown
        else:
            for title in self.titles.values():
                title.fit()
            self.scene.primed = set()
            self._update_highlights()  # titles go on one or two lines to fit
            self._fit_timer.start()
