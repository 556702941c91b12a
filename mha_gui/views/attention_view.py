"""Heatmaps of the current stage for all heads at once (the window's central area).

Panels are rebuilt only when the stage, the shapes, the config or the theme change; a
`traceChanged` only calls `setImage` on the panels of the heads that changed (plus Y,
the contributions and H, which every edit touches). Levels are always explicit and
shared by all panels of a stage, so heads can be compared by colour; a single colour
bar on the right gives the scale.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPen, QTextDocument
from PySide6.QtWidgets import QGraphicsRectItem, QStackedLayout, QWidget

from mha_gui import theme
from mha_gui.engine.explain import blocked_reason, explain_cell
from mha_gui.engine.stages import STAGES
from mha_gui.views.display_options import DisplayOptions
from mha_gui.views.heatmap_panel import ColorBar, HeatmapPanel, TitleLabel, add_plot

# Which matrix kinds each stage shows, per head (None = one panel for the whole layer).
STAGE_KINDS = {
    "input": (None, ("X",)),
    "projections": ("head", ("Q", "K", "V")),
    "scores": ("head", ("S",)),
    "weights": ("head", ("A",)),
    "mixing": ("head", ("Z",)),
    "concat": (None, ("H",)),
    "output": ("both", ("Y", "C")),
}
SUB = "<sub>{}</sub>"
# The per-stage state of the view; a kept stage stashes it (see AttentionView._switch_stage).
SCENE_STATE = (
    "canvas",
    "panels",
    "titles",
    "colorbar",
    "extras",
    "_band_outline",
    "_built_stage",
    "_grid_cols",
    "_levels",
    "_peaks",
    "_titles_set",
    "_primed",
)
# Keep other stages' canvases while their panels hold at most this many cells in all
# (each costs ~12 bytes: the display copy and its 8-bit image): every stage of a BERT-base
# layer; at n=512 the two or three stages visited last.
SCENE_CELLS = 8_000_000


@dataclass
class Group:
    head: int  # -1 for a panel that is not a head's
    kinds: tuple[str, ...]


def sym_html(kind: str, head: int | None, config) -> str:
    if kind in ("K", "V"):
        return kind + SUB.format(config.kv_group(head))
    if kind in ("Q", "S", "A", "Z"):
        return kind + SUB.format(head)
    if kind == "C":
        lo, hi = head * config.d_v, (head + 1) * config.d_v
        return f"Z{SUB.format(head)}W{SUB.format('O')}[{lo}:{hi},:]"
    return kind


def sym_text(kind: str, head: int | None, config) -> str:
    if kind in ("K", "V"):
        return f"{kind}_{config.kv_group(head)}"
    if kind in ("Q", "S", "A", "Z", "C"):
        return f"{kind}_{head}"
    return kind


def nice_peak(peak: float) -> float:
    """`peak` rounded up to two significant digits (0.40626 → 0.41, 6 → 6, 127 → 130).

    The shared levels of a stage are ±nice_peak: the colour bar reads a round number, and
    a scrub step that nudges the largest value (often in Y) leaves the levels — and so
    every other panel's pixels — as they were, instead of repainting them all.
    """
    if not math.isfinite(peak) or peak <= 0:
        return 1.0
    exponent = math.floor(math.log10(peak)) - 1
    digits = math.ceil(round(peak / 10.0**exponent, 9))
    return float(f"{digits}e{exponent}")


class AttentionView(DisplayOptions, QWidget):
    """Every head's panel for the current stage; the inspected head framed, the query row
    outlined in every panel. Hover a cell for where its number came from."""

    panelContextMenuRequested = Signal(str, int, QPoint)  # noqa: N815 - Qt naming
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
        self.panels: dict[tuple[str, int], HeatmapPanel] = {}
        self.titles: dict[int, pg.LabelItem] = {}
        self.colorbar: ColorBar | None = None
        self.extras: list = []  # concat bands and block outlines
        self._band_outline: dict[int, QGraphicsRectItem] = {}
        self._built_stage: int | None = None
        self._grid_cols = 0
        self._levels: tuple[float, float] | None = None
        self._peaks: dict[tuple[str, int], float] = {}  # max |finite| of each panel
        # head → (its W_O block when computed, Z_i W_O block): the output stage shows every
        # head's contribution, but a one-head edit changes only that head's
        self._contrib: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._w_o_edited = False
        self._titles_set: dict[int, tuple] = {}
        self._primed: set[int] = set()  # heads whose title has room for the inspected style
        self._title_widths: dict[tuple, float] = {}
        self.rebuild_count = 0
        self.update_count = 0
        # the (query, key) pair under the last right-click on a scores/weights panel
        self.menu_pair: tuple[int, int] | None = None

        # Stages already built keep their canvas (a few, see SCENE_CELLS): going back to a
        # stage shows it again and redraws only what changed meanwhile.
        self._stack = QStackedLayout(self)
        self._stack.setContentsMargins(0, 0, 0, 0)
        self._scenes: OrderedDict[int, dict] = OrderedDict()  # stage → its stashed state
        self._pending: dict[int, tuple | None] = {}  # stage → (heads, contributions) since
        self._relabel_pending: set[int] = set()
        self._new_canvas()

        self._rebuild_timer = QTimer(self)
        self._rebuild_timer.setSingleShot(True)
        self._rebuild_timer.setInterval(0)
        self._rebuild_timer.timeout.connect(self.rebuild)
        self._relayout_timer = QTimer(self)
        self._relayout_timer.setSingleShot(True)
        self._relayout_timer.setInterval(0)
        self._relayout_timer.timeout.connect(self._relayout)

        document.traceChanged.connect(self._on_trace)
        document.valuesChanged.connect(self._on_values)
        document.shapeChanged.connect(self._schedule_rebuild)
        document.configChanged.connect(self._schedule_rebuild)
        document.tokensChanged.connect(self._on_tokens)
        document.viewChanged.connect(self._on_view)
        self.rebuild()

    # ------------------------------------------------------------------ public ----
    def _pt(self, size: float) -> str:
        return f"{size * self._zoom:.3g}pt"

    def set_show_values(self, show: bool) -> None:
        self._show_values = bool(show)
        for panels in [self.panels] + [scene["panels"] for scene in self._scenes.values()]:
            for panel in panels.values():
                panel.set_show_values(self._show_values)

    @property
    def stage_name(self) -> str:
        return STAGES[self.document.view.stage].name

    def cell_tooltip(self, kind: str, head: int | None, row: int, col: int) -> str:
        """The hover text of a cell: kind is X Q K V S A Z H Y C, head the query head."""
        doc = self.document
        trace = doc.trace()
        text = explain_cell(
            kind,
            head,
            row,
            col,
            trace=trace,
            params=doc.session.params,
            config=doc.config,
            tokens=doc.tokens,
        )
        if kind in ("S", "A") and trace.mask is not None and trace.mask[row, col]:
            text = self._blocked_hint(text, row, col)
        return text

    def _blocked_hint(self, text: str, row: int, col: int) -> str:
        """A blocked cell's tooltip says which mask blocks it and how to open it."""
        doc = self.document
        if self.causal_blocks(row, col):
            return text + " — turn off 'causal mask' to open it"
        tokens = doc.tokens
        hint = (
            f'blocked by the mask (Ctrl+click to open): key "{tokens[col]}" '
            f'for query "{tokens[row]}"'
        )
        reason = "blocked: " + blocked_reason(row, col, doc.config, tokens)
        if text.endswith(reason):
            return text[: len(text) - len(reason)] + hint
        return f"{text}   {hint}"  # explain's wording changed: still say how to open it

    # -------------------------------------------------------------- the mask ------
    def causal_blocks(self, query: int, key: int) -> bool:
        return bool(self.document.config.causal and key > query)

    def toggle_blocked(self, query: int, key: int) -> bool:
        """Ctrl+click / the panel menu: block or open (query, key) in the extra mask (one
        undo step, every head). A pair the causal mask blocks is refused with a message."""
        doc = self.document
        tokens = doc.tokens
        pair = f'"{tokens[query]}" → "{tokens[key]}"'
        if self.causal_blocks(query, key):
            self.message.emit(
                f"{pair} is blocked by the causal mask — turn off 'causal mask' to open it"
            )
            return False
        doc.toggle_blocked(query, key)
        mask = doc.session.mask
        if mask is not None and mask[query, key]:
            text = f"Blocked {pair} in every head (Ctrl+click it again or Undo to open it)"
            if bool(doc.trace().mask[query].all()):
                text += f' — query "{tokens[query]}" now sees no key: its weights are all 0'
        else:
            text = f"Opened {pair} in every head"
        self.message.emit(text)
        return True

    def _cell_ctrl_clicked(self, kind: str, head: int | None, row: int, col: int) -> None:
        if kind in ("S", "A"):
            self.toggle_blocked(row, col)
        else:
            self._cell_clicked(head, row)

    def panel_matrix(self, stage_name: str, head: int, part: str | None = None):
        """(matrix, row_labels, col_labels, symbol) of the panel a context menu came from.

        head -1 means the stage's non-head panel (X, H, Y). At `projections` a head has
        three panels; `part` picks "Q", "K" or "V", default all three side by side.
        """
        doc = self.document
        c, tokens = doc.config, doc.tokens
        kinds = STAGE_KINDS[stage_name][1]
        if stage_name == "projections" and part is None:
            mats = [self._matrix(k, head) for k in kinds]
            cols = [
                f"{k.lower()}{j}"
                for k, m in zip(kinds, mats, strict=True)
                for j in range(m.shape[1])
            ]
            symbol = " | ".join(sym_text(k, head, c) for k in kinds)
            return np.hstack(mats).copy(), tokens, cols, f"[{symbol}]"
        if part is not None:
            kind = part
        elif stage_name == "output":
            kind = "Y" if head < 0 else "C"
        else:
            kind = kinds[0]
        h = None if head < 0 else head
        matrix = self._matrix(kind, h).copy()
        return matrix, tokens, self._col_labels(kind), sym_text(kind, h, c)

    # ----------------------------------------------------------------- building ---
    def _groups(self, stage: str) -> list[Group]:
        mode, kinds = STAGE_KINDS[stage]
        h = self.document.config.h
        if mode is None:
            return [Group(-1, kinds)]
        if mode == "head":
            return [Group(i, kinds) for i in range(h)]
        return [Group(-1, (kinds[0],))] + [Group(i, (kinds[1],)) for i in range(h)]

    def _grid_columns(self, groups: list[Group], stretch: float = 1.0) -> int:
        count = len(groups)
        parts = max(len(g.kinds) for g in groups)
        w, h = max(self.width(), 320), max(self.height(), 240)
        cols = max(1, min(count, math.ceil(math.sqrt(count * (w / h) * stretch / parts))))
        rows = math.ceil(count / cols)
        return math.ceil(count / rows)

    def _grid_fits(self, groups: list[Group], cols: int) -> bool:
        """Is a grid of `cols` columns still right for this size? Within 15 % of the
        aspect ratio it is: the stage bar's height changes from stage to stage, and a
        grid that flipped with it would rebuild every panel twice per stage switch."""
        return self._grid_columns(groups, 1 / 1.15) <= cols <= self._grid_columns(groups, 1.15)

    def _schedule_rebuild(self) -> None:
        self._rebuild_timer.start()

    def rebuild(self) -> None:
        """Create every panel for the current stage (shape, config, theme or zoom changed):
        every other stage's kept canvas is dropped too."""
        self._rebuild_timer.stop()
        self._relayout_timer.stop()
        self._drop_scenes()
        self.canvas.clear()
        self._reset_scene_state()
        self._build()

    def _relayout(self) -> None:
        """The current stage again, in a grid that fits the new size (others are kept)."""
        if not self._grid_fits(self._groups(self.stage_name), self._grid_cols):
            self.canvas.clear()
            self._reset_scene_state()
            self._build()

    # ------------------------------------------------------------ kept stages ----
    def _new_canvas(self) -> None:
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("attentionCanvas")
        self.canvas.ci.setContentsMargins(6, 6, 6, 6)
        self._stack.addWidget(self.canvas)
        self._stack.setCurrentWidget(self.canvas)
        self._reset_scene_state()

    def _reset_scene_state(self) -> None:
        self.panels = {}
        self.titles = {}
        self.colorbar = None
        self.extras = []
        self._band_outline = {}
        self._levels = None
        self._peaks = {}
        self._titles_set = {}
        self._primed = set()

    def _stash(self) -> dict:
        return {key: getattr(self, key) for key in SCENE_STATE}

    def _scene_cells(self, scene: dict) -> int:
        return sum(p.rows * p.cols for p in scene["panels"].values())

    def _discard(self, scene: dict) -> None:
        canvas = scene["canvas"]
        self._stack.removeWidget(canvas)
        canvas.clear()
        canvas.deleteLater()

    def _drop_scenes(self) -> None:
        while self._scenes:
            self._discard(self._scenes.popitem()[1])
        self._pending.clear()
        self._relabel_pending.clear()

    def _switch_stage(self) -> None:
        """Show the current stage: its kept canvas brought up to date, or a new one."""
        stage = self.document.view.stage
        if self._rebuild_timer.isActive() or self._built_stage is None:
            self.rebuild()  # the shapes or the config changed: nothing kept is valid
            return
        self._scenes[self._built_stage] = self._stash()
        self._pending[self._built_stage] = None
        scene = self._scenes.pop(stage, None)
        pending = self._pending.pop(stage, None)
        groups = self._groups(STAGES[stage].name)
        if scene is not None and self._grid_fits(groups, scene["_grid_cols"]):
            for key, value in scene.items():
                setattr(self, key, value)
            self._stack.setCurrentWidget(self.canvas)
            if self.canvas.geometry() != self.rect():
                self.canvas.setGeometry(self.rect())
            if stage in self._relabel_pending:
                self._relabel_pending.discard(stage)
                self._relabel()
            if pending is not None:
                self._update_all(*pending)
            self._update_highlights()
        else:
            if scene is not None:
                self._discard(scene)
            self._new_canvas()
            self._build()
        total = sum(self._scene_cells(s) for s in self._scenes.values())
        while self._scenes and total > SCENE_CELLS:
            old_stage, old = self._scenes.popitem(last=False)
            total -= self._scene_cells(old)
            self._pending.pop(old_stage, None)
            self._relabel_pending.discard(old_stage)
            self._discard(old)

    def _build(self) -> None:
        """Create every panel of the current stage in the (empty) current canvas."""
        self.rebuild_count += 1
        doc = self.document
        c = doc.config
        pal = theme.palette(self._theme)
        stage = self.stage_name
        self.canvas.setBackground(pal.background)
        self._built_stage = doc.view.stage

        groups = self._groups(stage)
        ncols = self._grid_columns(groups)
        self._grid_cols = ncols
        nrows = math.ceil(len(groups) / ncols)
        lut = theme.colormap_for("weights" if stage == "weights" else "signed", self._colormap)
        many = len(groups) > 4
        for idx, group in enumerate(groups):
            cell = self.canvas.ci.addLayout(row=idx // ncols, col=idx % ncols)
            cell.setContentsMargins(2, 2, 2, 2)
            cell.setSpacing(2)
            title = TitleLabel("", size=self._pt(11))
            cell.addItem(title, row=0, col=0, colspan=len(group.kinds))
            self.titles[group.head] = title
            for j, kind in enumerate(group.kinds):
                head = None if group.head < 0 else group.head
                shape = self._matrix(kind, head).shape
                plot = add_plot(cell, 1, j)
                if len(group.kinds) > 1:
                    plot.setTitle(
                        f"{sym_html(kind, head, c)}  <span style='color:{pal.muted}'>"
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
                    query_rows=kind not in ("K", "V"),
                    top_margin=0.6 if kind == "H" else 0.0,
                    zoom=self._zoom,
                )
                if kind in ("S", "A") and not many:
                    style = {"color": pal.muted, "font-size": self._pt(9)}
                    plot.setLabel("left", "query", **style)
                    plot.setLabel("bottom", "key", **style)
                self.panels[(kind, group.head)] = panel
            if len(group.kinds) > 1:
                cell.layout.setRowStretchFactor(1, 1)
        if stage == "concat":
            self._add_concat_bands(self.panels[("H", -1)], pal)

        levels = self._stage_levels(stage)
        self.colorbar = ColorBar(lut, levels, self._bar_label(stage), pal, self._zoom)
        self.canvas.ci.addItem(self.colorbar, row=0, col=ncols, rowspan=nrows)
        self._relabel()
        self._update_all()
        self._update_highlights()

    def _bar_label(self, stage: str) -> str:
        return {
            "input": "X",
            "projections": "Q, K, V",
            "scores": "score",
            "weights": "weight (0–1)",
            "mixing": "Z",
            "concat": "H",
            "output": "Y, contributions",
        }[stage]

    def _add_concat_bands(self, panel: HeatmapPanel, pal: theme.Palette) -> None:
        c = self.document.config
        plot = panel.plot
        for i in range(c.h):
            band = QGraphicsRectItem(QRectF(i * c.d_v + 0.04, -0.56, c.d_v - 0.08, 0.46))
            band.setBrush(QBrush(QColor(theme.head_color(i))))
            band.setPen(QPen(Qt.PenStyle.NoPen))
            plot.addItem(band, ignoreBounds=True)
            label = pg.TextItem("", color="#ffffff")
            label.setHtml(f"<b>Z<sub>{i}</sub></b>")
            label.setColor("#ffffff")
            label.setAnchor((0.5, 0.5))
            label.setPos(i * c.d_v + c.d_v / 2, -0.33)
            label.setZValue(4)
            plot.addItem(label, ignoreBounds=True)
            outline = QGraphicsRectItem(QRectF(i * c.d_v, -0.58, c.d_v, c.n + 0.58))
            pen = QPen(QColor(theme.head_color(i)))
            pen.setCosmetic(True)
            pen.setWidthF(4.0)
            outline.setPen(pen)
            outline.setZValue(5)
            outline.setVisible(False)
            plot.addItem(outline, ignoreBounds=True)
            self._band_outline[i] = outline
            if i:
                line = pg.InfiniteLine(
                    pos=i * c.d_v, angle=90, pen=pg.mkPen(pal.background, width=2)
                )
                line.setZValue(2.5)
                plot.addItem(line, ignoreBounds=True)
            self.extras += [band, label, outline]

    # ------------------------------------------------------------------ content ---
    def _matrix(self, kind: str, head: int | None) -> np.ndarray:
        doc = self.document
        t = doc.trace()
        c = doc.config
        if kind == "X":
            return doc.matrix("X")
        if kind == "H":
            return t.concat
        if kind == "Y":
            return t.output
        g = c.kv_group(head)
        return {
            "Q": lambda: t.q[head],
            "K": lambda: t.k[g],
            "V": lambda: t.v[g],
            "S": lambda: t.scores[head],
            "A": lambda: t.weights[head],
            "Z": lambda: t.heads[head],
            "C": lambda: self._contribution(head),
        }[kind]()

    def _contribution(self, head: int) -> np.ndarray:
        """Z_i W_O[i·d_v:(i+1)·d_v, :], kept until Z_i or that block of W_O changes."""
        t = self.document.trace()
        d_v = self.document.config.d_v
        block = t.w_o[head * d_v : (head + 1) * d_v]
        cached = self._contrib.get(head)
        if cached is None or cached[1].shape != (t.heads.shape[1], block.shape[1]):
            cached = (block.copy(), t.heads[head] @ block)
            self._contrib[head] = cached
        return cached[1]

    def _forget_contributions(self, heads) -> set[int]:
        """Drop the contributions an edit changed; the heads whose contribution did."""
        if heads is None:
            self._contrib.clear()
            self._w_o_edited = False
            return set(range(self.document.config.h))
        changed = set(heads)
        if self._w_o_edited:
            self._w_o_edited = False
            t = self.document.trace()
            d_v = self.document.config.d_v
            for head, (block, _c) in self._contrib.items():
                now = t.w_o[head * d_v : (head + 1) * d_v]
                if block.shape != now.shape or not np.array_equal(block, now):
                    changed.add(head)
        for head in changed:
            self._contrib.pop(head, None)
        return changed

    def _col_labels(self, kind: str) -> list[str]:
        c = self.document.config
        if kind in ("S", "A"):
            return self.document.tokens
        width = {
            "X": c.d_model,
            "Q": c.d_k,
            "K": c.d_k,
            "V": c.d_v,
            "Z": c.d_v,
            "Y": c.d_model,
            "C": c.d_model,
        }.get(kind)
        if kind == "H":
            return [str(j % c.d_v) for j in range(c.h * c.d_v)]
        return [str(j) for j in range(width)]

    def _stage_levels(self, stage: str, stale=None) -> tuple[float, float]:
        """The stage's shared levels: ±max|finite| over its panels. Each panel's peak is
        kept, so an edit rescans only the panels in `stale` (None: all of them)."""
        if stage == "weights":
            return theme.levels_for("weights")
        for key in self.panels:
            if stale is None or key in stale or key not in self._peaks:
                kind, head = key
                self._peaks[key] = theme.levels_for(
                    "signed", self._matrix(kind, None if head < 0 else head)
                )[1]
        peak = nice_peak(max(self._peaks.values(), default=1.0))
        return (-peak, peak)

    def _update_all(self, heads=None, contributions=None) -> None:
        """New pixels for the panels whose matrix changed (all of them if the levels moved).

        `heads`: the query heads whose Z changed (None: everything); `contributions`: the
        heads whose output contribution changed (default: the same as `heads`)."""
        doc = self.document
        blocked = doc.trace().mask
        if heads is None:
            stale = None
        else:
            contributions = heads if contributions is None else contributions
            stale = {k for k in self.panels if self._depends(*k, heads, contributions)}
        levels = self._stage_levels(self.stage_name, stale)
        relevel = levels != self._levels
        self._levels = levels
        if relevel and self.colorbar is not None:
            self.colorbar.setLevels(levels)
        for (kind, head), panel in self.panels.items():
            if not (relevel or stale is None or (kind, head) in stale):
                continue
            self.update_count += 1
            h = None if head < 0 else head
            panel.set_matrix(self._matrix(kind, h), levels, blocked if kind in ("S", "A") else None)

    @staticmethod
    def _depends(kind: str, head: int, heads: frozenset, contributions=None) -> bool:
        """Does panel (kind, head) change when the Z of `heads` changed and the output
        contributions of `contributions` (every edit changes Y)?"""
        if kind == "Y":
            return True
        if kind == "C":
            return head in (heads if contributions is None else contributions)
        if kind == "H":
            return bool(heads)
        if kind == "X":
            return False
        return head in heads

    def _relabel(self) -> None:
        tokens = self.document.tokens
        limit = 16 if len(self.panels) <= 4 else 10
        for (kind, _head), panel in self.panels.items():
            panel.set_axis_labels(tokens, self._col_labels(kind), limit)

    def _update_highlights(self) -> None:
        doc = self.document
        c = doc.config
        pal = theme.palette(self._theme)
        inspected, query = doc.view.head, doc.view.query
        for head in self.titles:
            if head < 0:
                kinds = STAGE_KINDS[self.stage_name][1]
                name = {"X": "input X", "H": "H = Concat(Z₀ … )", "Y": "output Y = Σ contributions"}
                text = name.get(kinds[0], kinds[0])
                shape = f"<span style='color:{pal.muted}'>{self._shape_text(kinds[0])}</span>"
                self._set_title(
                    head, self._fit_title(text, shape, 11, True, "  "), pal.text, 11, True
                )
                continue
            colour = theme.head_text_color(head, self._theme)
            kinds = [k for k, h in self.panels if h == head]
            if len(kinds) == 1:
                detail = f" · {sym_html(kinds[0], head, c)}"
            elif c.variant != "MHA":
                detail = f" · K/V group {c.kv_group(head)}"
            else:
                detail = ""

            def title(marked: bool, head=head, detail=detail) -> tuple[str, int]:
                mark, size = ("▶ ", 12) if marked else ("", 11)
                if detail:
                    return self._fit_title(
                        f"{mark}head {head}", detail[3:], size, True, " · "
                    ), size
                return f"{mark}head {head}", size

            if head not in self._primed:
                # the title's room is the inspected style's: selecting a head then
                # never relays the grid out (TitleLabel only grows)
                self._primed.add(head)
                self._titles_set.pop(head, None)
                text, size = title(True)
                self.titles[head].setText(text, color=colour, size=self._pt(size), bold=True)
            text, size = title(head == inspected)
            self._set_title(head, text, colour, size, head == inspected)
        for (_kind, head), panel in self.panels.items():
            on = head >= 0 and head == inspected
            panel.set_frame(theme.head_color(head) if on else None)
            panel.set_query(query)
        for i, outline in self._band_outline.items():
            outline.setVisible(i == inspected)

    def _set_title(self, head: int, text: str, colour: str, size: float, bold: bool) -> None:
        """Set a title only if it changed: a new title relays the whole grid out."""
        args = (text, colour, size, bold)
        if self._titles_set.get(head) != args:
            self._titles_set[head] = args
            self.titles[head].setText(text, color=colour, size=self._pt(size), bold=bold)

    def _fit_title(self, first: str, second: str, size: float, bold: bool, sep: str) -> str:
        """`first{sep}second` on one line if it fits its grid column, else on two lines
        (long titles such as `head 1 · Z₁W_O[4:8,:]` at a projector zoom)."""
        one = f"{first}{sep}{second}"
        cols = max(1, self._grid_cols)
        bar = 90 * self._zoom  # the colour bar and its labels
        room = (max(self.width(), 320) - bar) / cols - 16
        key = (one, size * self._zoom, bold, self.font().toString())
        if key not in self._title_widths:  # laying text out costs; titles repeat
            font = QFont(self.font())
            font.setPointSizeF(size * self._zoom)
            font.setBold(bold)
            doc = QTextDocument()
            doc.setDefaultFont(font)
            doc.setHtml(one)
            self._title_widths[key] = doc.idealWidth()
        return one if self._title_widths[key] <= room else f"{first}<br>{second}"

    def _shape_text(self, kind: str) -> str:
        panel = next(p for (k, _h), p in self.panels.items() if k == kind)
        return f"{panel.rows}×{panel.cols}"

    # ------------------------------------------------------------------ signals ---
    def _on_values(self, name: str) -> None:
        if name == "W_O":
            self._w_o_edited = True  # which heads' contributions: found at the recompute

    def _on_trace(self, heads) -> None:
        contributions = self._forget_contributions(heads)
        for stage in self._scenes:  # kept stages catch up when shown again
            before = self._pending.get(stage)
            if heads is None or (before is not None and before[0] is None):
                self._pending[stage] = (None, None)
            elif before is None:
                self._pending[stage] = (set(heads), set(contributions))
            else:
                before[0].update(heads)
                before[1].update(contributions)
        if self._rebuild_timer.isActive():
            self.rebuild()
            return
        self._update_all(heads, contributions)

    def _on_tokens(self) -> None:
        self._relabel()
        self._relabel_pending.update(self._scenes)

    def _on_view(self) -> None:
        if self.document.view.stage != self._built_stage:
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
        self.panelContextMenuRequested.emit(self.stage_name, -1 if head is None else head, pos)

    def resizeEvent(self, event):  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.panels and not self._grid_fits(self._groups(self.stage_name), self._grid_cols):
            self._relayout_timer.start()  # this stage only: the others are checked when shown
        elif self.panels:
            for title in self.titles.values():
                title.fit()
            self._primed = set()
            self._update_highlights()  # titles go on one or two lines to fit
