"""The pieces a stage is built of: one grid cell per head group (its title over its
panels) and, once every head is in, the concat bands and the colour bar.

A part of AttentionView, given what a panel needs: the document, the display options,
the view's callbacks for a hovered, clicked, Ctrl+clicked or right-clicked cell, and
what hides an exercise's cells. It only makes items and puts them in the scene's
dictionaries; the view decides when (at once, or a few heads per event-loop turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSizePolicy

from mha_gui.engine.panels.stage_panels import KINDS, bar_label, stage_format, stage_levels, symbol
from mha_gui.views.settings.display_options import HeatmapOptions
from mha_gui.views.stage.concat_bands import ConcatBands
from mha_gui.views.stage.heatmap_panel import HeatmapPanel
from mha_gui.views.stage.plot_items import ColorBar, TitleLabel, add_plot
from mha_gui.views.stage.square_grid import OWN_TITLE_PT, Group, band_cells
from mha_gui.views.stage.stage_scene import StageScene


class StageCells:
    def __init__(
        self,
        document,
        options: HeatmapOptions,
        *,
        on_tooltip: Callable,
        on_click: Callable,
        on_ctrl_click: Callable,
        on_menu: Callable,
        on_thumb: Callable[[int], None],
        hide_cells: Callable[[HeatmapPanel, str, int], None],
    ):
        self.document, self.options = document, options
        self._callbacks = {
            "on_tooltip": on_tooltip,
            "on_click": on_click,
            "on_ctrl_click": on_ctrl_click,
            "on_menu": on_menu,
        }
        self._hide_cells = hide_cells
        self._on_thumb = on_thumb

    def cell_steps(self, scene: StageScene, group: Group, lut, many: bool):
        """One grid cell, in steps: a group's title over its panels (one per kind), each
        panel at the size the scene's geometry gives it, detached (the view adds it to
        the canvas). The first step yields the cell with its title, each further step
        adds one panel, so that a large stage's build in event-loop turns can stop
        between panels (an n = 2048 head's Q, K and V in one step held the window
        ~36 ms). A thumbnail (one-big layout) has no axes and no numbers; a click on it
        inspects its head."""
        options = self.options
        pal = options.palette
        geometry = scene.geometry
        thumb = geometry.places[group.head].thumb
        cell = pg.GraphicsLayout()
        cell.setContentsMargins(2, 2, 2, 2)
        cell.setSpacing(2)
        title = TitleLabel("", size=options.pt(9 if thumb else 11))
        cell.addItem(title, row=0, col=0, colspan=len(group.kinds))
        scene.titles[group.head] = title
        fixed = QSizePolicy.Policy.Fixed
        cell.setSizePolicy(fixed, fixed)  # its column may be wider: it stays its size
        yield cell
        head = None if group.head < 0 else group.head
        callbacks = dict(self._callbacks)
        if thumb:
            callbacks["on_click"] = lambda h, _row: self._on_thumb(h)
            callbacks["on_ctrl_click"] = None
        for j, kind in enumerate(group.kinds):
            size = geometry.size(kind, group.head)
            shape = (size.rows, size.cols)
            plot = add_plot(cell, 1, j)
            self._own_title(plot, kind, head, shape, several=len(group.kinds) > 1, thumb=thumb)
            panel = HeatmapPanel(
                plot,
                kind,
                head,
                shape,
                palette=pal,
                lut=lut,
                show_values=options.show_values,
                query_rows=KINDS[kind].query_rows,
                top_margin=band_cells(kind, size.cell, options.zoom),
                zoom=options.zoom,
                value_limit=0 if thumb else 12,
                **callbacks,
            )
            if KINDS[kind].masked and not many and not thumb:
                style = {"color": pal.muted, "font-size": options.pt(9)}
                plot.setLabel("left", "query", **style)
                plot.setLabel("bottom", "key", **style)
            panel.set_size(size)
            scene.panels[(kind, group.head)] = panel
            self._hide_cells(panel, kind, group.head)
            yield None

    def _own_title(self, plot, kind: str, head, shape, *, several: bool, thumb: bool) -> None:
        """A panel's own title — symbol and shape (Q₀ 4×2) — when its group has several
        panels and it is not a thumbnail (the group's title names a lone panel)."""
        if not several or thumb:
            return
        pal = self.options.palette
        plot.setTitle(
            f"{symbol(kind, head, self.document.config).html}  "
            f"<span style='color:{pal.muted}'>{shape[0]}×{shape[1]}</span>",
            color=pal.text,
            size=self.options.pt(OWN_TITLE_PT),  # as square_grid plans its width
        )

    def retargeted(
        self, panel: HeatmapPanel, kind: str, head: int, *, several: bool, thumb: bool
    ) -> None:
        """`panel` now shows `head` (one head big, another head inspected): its own title
        and that head's hidden cells, as `cell` gives a new panel."""
        self._own_title(
            panel.plot, kind, head, (panel.rows, panel.cols), several=several, thumb=thumb
        )
        self._hide_cells(panel, kind, head)

    def finish(self, scene: StageScene, lut) -> None:
        """Every head is in: the concat bands over H and the stage's colour bar (its levels
        come with the pixels)."""
        options = self.options
        pal = options.palette
        if ("H", -1) in scene.panels:
            panel = scene.panels[("H", -1)]
            scene.bands = ConcatBands(panel.plot, self.document.config, pal, panel.top_margin)
        scene.levels = stage_levels(scene.stage, [])
        label = bar_label(scene.stage, options.weights_range)
        fmt = stage_format(scene.stage, scene.levels)
        scene.colorbar = ColorBar(lut, scene.levels, label, pal, options.zoom, fmt)
        # in its own canvas beside the grid's scroll area: always in view
        bar = scene.bar_canvas
        bar.setBackground(pal.background)
        scene.page.set_background(pal.background)
        bar.ci.addItem(scene.colorbar, row=0, col=0)
        hint = bar.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        bar.setFixedWidth(math.ceil(hint.width()) + 2)
