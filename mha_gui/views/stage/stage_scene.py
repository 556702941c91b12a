"""The built canvases of the attention view's stages, and the one rule of their lifetime.

Building a stage's panels costs far more than updating them, so the view keeps the
scenes of the stages visited last (up to `SCENE_CELLS` cells in all) and, when one is
shown again, brings it up to date with what changed while it was hidden.

Lifetime. A `StageScene` is one stage's canvas — a pg.GraphicsLayoutWidget in its own
scroll area, beside the colour bar's own small canvas, the two a page of the view's
stacked layout — and every item drawn on them. An item
belongs to the canvas's QGraphicsScene (C++ owns it) from the moment it joins the
canvas, and it leaves only with the canvas. `SceneStack.close(scene)` is the one place a
scene ends: it takes the page out of the stack, makes the scene forget every
reference it held to its items, and hands the page to `discard_widget`, so that
Qt deletes canvas, scene and items together, in C++, from the event loop — and never
while a context menu or a modal dialog is open, since a rebuild during a panel's menu
(a recompute ending meanwhile) must not delete the canvas whose mouse handler is waiting
for that menu. A canvas is never cleared and filled again (a rebuild is a new scene),
and no item is ever taken out of its scene: pyqtgraph's removeItem/clear hand the items
back to Python, whose garbage collector then destroys them at whatever allocation it
happens to run, in whatever thread. What outlives a scene (an off-thread preparation's
callback) finds it `closed` and does nothing.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QTextDocument
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QScrollArea,
    QStackedLayout,
    QWidget,
)

from mha_gui.document import EVERYTHING
from mha_gui.engine.panels.stage_panels import KINDS, panel_changed, panel_keys
from mha_gui.views.accessibility.heatmap_access import attach_stage
from mha_gui.views.stage.concat_bands import ConcatBands
from mha_gui.views.stage.heatmap_panel import HeatmapPanel
from mha_gui.views.stage.plot_items import ColorBar, TitleLabel
from mha_gui.views.stage.square_grid import Group, StageGeometry
from mha_gui.views.widgets.canvas import new_canvas
from mha_gui.views.widgets.drawing_widget import guarded_paint

# Keep other stages' canvases while their panels hold at most this many cells in all
# (each costs ~12 bytes: the display copy and its 8-bit image): every stage of a BERT-base
# layer, and of an n = 512, 12-head layer (~14 M cells, ~170 MB): going back to a stage
# costs a few milliseconds instead of building its panels again (~0.3–1 s at n = 512).
SCENE_CELLS = 16_000_000
BAR_MIN_HEIGHT = 160  # the colour bar's canvas at least (a one-row grid is short)
# how often a widget to delete checks that a context menu or dialog has closed
DISCARD_RETRY_MS = 50


class _Discards:
    """Widgets handed to Qt for deletion, one per event-loop turn, each once no context
    menu or modal dialog is open. deleteLater in a menu's own event loop deletes in that
    loop, under the mouse handler that opened the menu, which then resumes on a deleted
    canvas. One per turn: deleting a canvas of an n = 2048 layer costs 5–80 ms in C++
    (its items, images and scene index), and a new session or a rebuild drops every kept
    stage at once: deleted together they froze the window for ~200 ms."""

    def __init__(self):
        self.waiting: deque[QWidget] = deque()
        self._timer: QTimer | None = None

    def add(self, widget: QWidget) -> None:
        widget.hide()
        self.waiting.append(widget)
        self._next_turn(0)

    def _next_turn(self, ms: int) -> None:
        if self._timer is None:  # made with the first discard: the application exists
            self._timer = QTimer()
            self._timer.setSingleShot(True)
            self._timer.timeout.connect(self._delete_one)
        if not self._timer.isActive():
            self._timer.start(ms)

    def _delete_one(self) -> None:
        while self.waiting and not shiboken6.isValid(self.waiting[0]):
            self.waiting.popleft()  # its window went first, and took it along
        if not self.waiting:
            return
        if QApplication.activePopupWidget() is not None or QApplication.activeModalWidget():
            self._next_turn(DISCARD_RETRY_MS)
            return
        self.waiting.popleft().deleteLater()  # deleted when this turn ends
        if self.waiting:
            self._next_turn(0)


_DISCARDS = _Discards()


def discard_widget(widget: QWidget) -> None:
    """Hide `widget` and have Qt delete it, with everything on it, on a turn of its own
    (`_Discards`: never inside a context menu's or a dialog's loop)."""
    _DISCARDS.add(widget)


def scroll_holder(canvas) -> QScrollArea:
    """The scroll area a stage's canvas sits in (it scrolls when the grid needs more
    room than the view has)."""
    holder = QScrollArea()
    holder.setObjectName("attentionScroll")
    holder.setWidgetResizable(True)
    holder.setFrameShape(QFrame.Shape.NoFrame)
    holder.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    if canvas is not None:
        holder.setWidget(canvas)
    return holder


def stage_groups(stage: int, config) -> list[Group]:
    """The stage description's panels, grouped by head (layer-wide panels first)."""
    by_head: dict[int, list[str]] = {}
    for kind, head in panel_keys(stage, config):
        by_head.setdefault(head, []).append(kind)
    return [Group(head, tuple(kinds)) for head, kinds in by_head.items()]


def grid_layout(config) -> tuple:
    """What a stage's grid of panels depends on in the config: the shapes, the heads and
    their K/V groups, RoPE's extra rows (not the mask, biases, scale or switched-off
    heads, which change numbers only)."""
    c = config
    return (c.n, c.d_model, c.h, c.h_kv, c.d_k, c.d_v, c.rope)


def planned_cells(groups: list[Group], config, tokens) -> int:
    """The cells a stage's panels will hold (before any of them is built)."""
    return sum(config.n * len(KINDS[k].columns(config, tokens)) for g in groups for k in g.kinds)


def fit_canvas(scene: StageScene) -> None:
    """The canvas asks its scroll area for the room its grid needs at least; the scroll
    area is no wider than that, nor the colour bar taller, so that the bar stands beside
    the grid (not at the window's far edge) and spans its height."""
    fit_to_content(scene.canvas)
    holder, bar, size = scene.holder, scene.bar_canvas, scene.canvas.minimumSize()
    if holder is None or bar is None:
        return
    tall = size.height() > holder.viewport().height() + 1  # then it scrolls up and down
    extra = holder.verticalScrollBar().sizeHint().width() if tall else 0
    holder.setMaximumWidth(size.width() + extra + 2 * holder.frameWidth())
    page = scene.page.height() if scene.page is not None else size.height()
    bar.setFixedHeight(max(BAR_MIN_HEIGHT, min(size.height(), page)))


def fit_to_content(canvas) -> None:
    """A canvas asks its scroll area for the room its items need at least."""
    hint = canvas.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize)
    size = QSize(math.ceil(hint.width()) + 4, math.ceil(hint.height()) + 4)
    if canvas.minimumSize() != size:
        canvas.setMinimumSize(size)


def group_is_layer(group: Group) -> bool:
    return KINDS[group.kinds[0]].per is None


@dataclass
class StageScene:
    """One stage's canvas and what was drawn on it (see the module docstring: made and
    closed only by SceneStack)."""

    stage: int
    canvas: pg.GraphicsLayoutWidget | None
    holder: QScrollArea | None = None  # the scroll area around the canvas
    # the colour bar's own canvas beside the scroll area, so a grid that scrolls never
    # takes its scale out of view (a wide layer's concat scrolled it off to the right)
    bar_canvas: pg.GraphicsLayoutWidget | None = None
    page: StagePage | None = None  # holder and bar side by side: the view's stacked page
    panels: dict[tuple[str, int], HeatmapPanel] = field(default_factory=dict)
    titles: dict[int, TitleLabel] = field(default_factory=dict)
    colorbar: ColorBar | None = None
    bands: ConcatBands | None = None  # the concat stage's head bands over H
    geometry: StageGeometry | None = None  # where its panels are and their sizes
    thumbs: pg.GraphicsLayout | None = None  # one-big: the other heads' thumbnails
    layout: tuple | None = None  # the grid_layout of the config it was built for
    levels: tuple[float, float] | None = None
    peaks: dict[tuple[str, int], float] = field(default_factory=dict)  # max |finite| per panel
    titles_set: dict[int, tuple] = field(default_factory=dict)
    primed: set[int] = field(default_factory=set)  # titles with room for the inspected style
    # changes while hidden: (heads whose Z changed, heads whose contribution changed);
    # None = nothing yet; (EVERYTHING, EVERYTHING) = everything
    pending: tuple | None = None
    relabel: bool = False  # tokens renamed while hidden
    prepare_token: object = None  # the newest off-thread preparation of this scene
    building: Iterator | None = None  # the steps left of a large stage's build
    adding: bool = False  # …of which some still add heads (nothing to draw into yet)
    closed: bool = False  # its canvas is gone (SceneStack.close)

    @property
    def grid_cols(self) -> int:
        return self.geometry.cols if self.geometry is not None else 0

    @property
    def cells(self) -> int:
        return sum(p.rows * p.cols for p in self.panels.values())

    @property
    def built(self) -> bool:
        """Has this scene panels to show (rather than being new, or half built)?"""
        return bool(self.panels) and self.building is None

    def note_change(self, heads, contributions) -> None:
        """Remember a recompute that happened while this scene was hidden."""
        if heads is EVERYTHING or (self.pending is not None and self.pending[0] is EVERYTHING):
            self.pending = (EVERYTHING, EVERYTHING)
        elif self.pending is None:
            self.pending = (set(heads), set(contributions))
        else:
            self.pending[0].update(heads)
            self.pending[1].update(contributions)

    def forget(self) -> None:
        """Drop every reference to the canvas and its items (Qt is deleting them)."""
        self.closed = True
        self.building = None
        self.panels, self.titles, self.peaks = {}, {}, {}
        self.colorbar = self.bands = self.thumbs = None
        self.canvas = self.holder = self.bar_canvas = self.page = None


class StagePage(QWidget):
    """A stage's page: its scroll area and colour bar side by side, on the theme's
    background where a narrow grid leaves room (the window's own grey showed there)."""

    def __init__(self):
        super().__init__()
        self.background = QColor("white")

    def set_background(self, colour) -> None:
        self.background = QColor(colour)
        self.update()

    def paintEvent(self, _event) -> None:
        with guarded_paint(self, self.background) as painter:
            painter.fillRect(self.rect(), self.background)


class SceneStack:
    """The attention view's stage canvases: the one shown (`current`), the ones kept for
    stages visited last (`kept`, oldest first), and the one way each of them ends."""

    def __init__(self, host: QWidget, stage: int):
        self._stack = QStackedLayout(host)
        self._stack.setContentsMargins(0, 0, 0, 0)
        self.kept: OrderedDict[int, StageScene] = OrderedDict()
        self.current = self._new(stage)

    def _new(self, stage: int) -> StageScene:
        canvas = new_canvas()  # only Qt deletes its items
        canvas.setObjectName("attentionCanvas")
        canvas.ci.setContentsMargins(6, 6, 6, 6)
        holder = scroll_holder(canvas)
        bar = new_canvas()
        bar.setObjectName("attentionColourBar")
        bar.setAccessibleName("Colour scale of the stage's heatmaps")
        bar.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # nothing to do there: Tab passes it
        bar.ci.setContentsMargins(0, 6, 6, 6)
        bar.setFixedWidth(0)  # until the stage's colour bar is in (StageCells.finish)
        page = StagePage()
        row = QHBoxLayout(page)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(holder, 1)
        row.addWidget(bar, 0, Qt.AlignmentFlag.AlignTop)
        row.addStretch(0)  # what a narrow grid leaves (`fit_canvas`): the bar stays beside it
        scene = StageScene(stage, canvas, holder, bar_canvas=bar, page=page)
        attach_stage(scene, self._stack.parentWidget())  # keyboard cursor, accessible tables
        self._stack.addWidget(page)
        self._stack.setCurrentWidget(page)
        return scene

    def every(self) -> list[StageScene]:
        return [self.current, *self.kept.values()]

    def close(self, scene: StageScene) -> None:
        """The end of a scene: out of the stack and deleted by Qt with all its items."""
        page = scene.page
        scene.forget()
        if page is not None:
            self._stack.removeWidget(page)
            discard_widget(page)

    def renew(self, stage: int, keep_others: bool = True) -> StageScene:
        """A new, empty scene for `stage` in place of the current one (a rebuild; without
        `keep_others`, every kept stage is dropped too)."""
        while self.kept and not keep_others:
            self.close(self.kept.popitem()[1])
        self.close(self.current)
        self.current = self._new(stage)
        return self.current

    def switch(self, stage: int, fits: Callable[[StageScene], bool]) -> StageScene:
        """Show `stage`: its kept scene when its geometry still `fits` the view, else a
        new one (a half-built scene is not kept). The kept ones stay within SCENE_CELLS."""
        old = self.current
        if old.built:
            self.kept[old.stage] = old
        else:
            self.close(old)
        kept = self.kept.pop(stage, None)
        if kept is not None and fits(kept):
            self.current = kept
            self._stack.setCurrentWidget(kept.page)
            room = self._stack.parentWidget().rect()  # a hidden page kept its old size
            if kept.page.geometry() != room:
                kept.page.setGeometry(room)
        else:
            if kept is not None:
                self.close(kept)
            self.current = self._new(stage)
        total = sum(s.cells for s in self.kept.values())
        while self.kept and total > SCENE_CELLS:
            _stage, oldest = self.kept.popitem(last=False)
            total -= oldest.cells
            self.close(oldest)
        return self.current


class TitleFitter:
    """Puts `first · second` on one line when it fits its grid column, else two lines
    (long titles such as `head 1 · Z₁W_O[4:8,:]` at a projector zoom). Measuring text
    costs; titles repeat, so widths are cached."""

    def __init__(self):
        self._widths: dict[tuple, float] = {}

    def fit(self, first, second, size, bold, sep, room: float, font: QFont) -> str:
        one = f"{first}{sep}{second}"
        key = (one, size, bold, font.toString())
        if key not in self._widths:
            f = QFont(font)
            f.setPointSizeF(size)
            f.setBold(bold)
            doc = QTextDocument()
            doc.setDefaultFont(f)
            doc.setHtml(one)
            self._widths[key] = doc.idealWidth()
        return one if self._widths[key] <= room else f"{first}<br>{second}"


def depends(kind: str, head: int, heads, contributions) -> bool:
    """Does panel (kind, head) change when the Z of `heads` changed and the output
    contributions of `contributions`? The kind's dependence rule (engine/panels/panel_kinds.py)."""
    return panel_changed(kind, head, heads, contributions)
