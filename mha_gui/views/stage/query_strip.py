"""One query token followed through the inspected head: q_i → s → a → z_i.

The path a student walks by hand: the query vector, its scaled scores against every
key (blocked keys marked), the softmax weights (0..1, summing to 1) and the mixed value
vector. Beside it, the same query's weights in every head, so heads can be compared
without hiding any.

Each rebuild draws on a new canvas and deletes the old one whole (stage_scene.py says
why a canvas is never cleared and filled again).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from mha_gui import theme
from mha_gui.document import Later
from mha_gui.engine.panels.stage_panels import weights_colours
from mha_gui.engine.teaching.explain import explain_cell
from mha_gui.views.accessibility.heatmap_access import attach_strip
from mha_gui.views.settings.display_options import HeatmapOptions
from mha_gui.views.stage.heatmap_panel import MIN_SQUARE_PX, HeatmapPanel
from mha_gui.views.stage.plot_items import TitleLabel, add_plot, set_label
from mha_gui.views.stage.square_grid import (
    LABEL_MAX_PX,
    READABLE,
    axis_label,
    text_width,
    tick_step,
)
from mha_gui.views.stage.stage_scene import discard_widget, fit_to_content, scroll_holder
from mha_gui.views.widgets.canvas import new_canvas
from mha_gui.views.widgets.never_raises import never_raises
from mha_gui.views.widgets.rich_text import esc

STRIP_VALUE_LIMIT = 16
# A strip of more cells than this (n = 2048, 12 heads: ~28 000) is built a panel per turn.
STEP_CELLS = 20_000
# The strip's height, at least: its size hint (every row), but at most MIN_SHARE of the
# window's height, and never below MIN_HEIGHT.
MIN_SHARE = 0.33
MIN_HEIGHT = 90
# Every key named legibly up to READABLE tokens: a key column is at least this wide (× the
# strip's zoom), so its upright label is drawn at 0.8 × 14 ≈ 11 px (≥ 10 px) and one
# label's line never touches the next; a strip that then needs more width scrolls.
KEY_PITCH_PX = 14.0
HEADS_PITCH_PX = 13.0  # a label of 0.8 × 13 ≈ 10 px (rotated when wider)


def feature_labels(count: int) -> list[str]:
    """A vector's column labels: every index up to 8 (a narrow q or z panel of 32 or
    64 features would pile its numbers on top of each other), else every k-th (0, 8,
    16 …; the others are named in their tooltips). Tokens are never thinned so."""
    step = 1 if count <= 8 else tick_step(count, 8)
    return [str(k) if k % step == 0 else "\u200b" for k in range(count)]


def _square_cells(vb, cols: int) -> None:
    """A vector's view box as tall as one of its columns is wide (square cells), never
    below its minimum (a 64-feature q at 6 px a column stays 24 px tall, as bars)."""
    side = max(vb.minimumHeight(), vb.width() / max(1, cols))
    if abs(vb.maximumHeight() - side) > 0.5:
        vb.setMaximumHeight(side)


# Fits of the canvas to its items after one change of the strip, at most (see _fit_canvas).
MAX_FITS = 8


class QueryStrip(QWidget):
    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("queryStrip")
        # the strip is secondary and five titles share one line: it grows more slowly
        self.options = HeatmapOptions(
            restyle=self._restyle,
            show_values=self._show_values,
            weights_range=lambda _name: self._refresh_soon(),
            zoom_scale=lambda zoom: zoom**0.5,
        )
        self.panels: dict[str, HeatmapPanel] = {}
        self._shown: tuple[int, int] | None = None  # (head, query) on screen
        self.titles: dict[str, pg.LabelItem] = {}
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        # the strip scrolls when a dock leaves it less height than its labels need (its
        # labels are never cut)
        self._scroll = scroll_holder(None)
        self._scroll.setObjectName("queryStripScroll")
        self._scroll.setAccessibleName("Query strip (scrolls when its keys need more room)")
        self._layout.addWidget(self._scroll)
        self._fit_later = Later(self, self._fit_canvas)
        # the sizes fitted since the strip last changed, and whether they oscillated
        self._fit_sizes: list[tuple[int, int]] = []
        self._fit_settled = False
        self.canvas: pg.GraphicsLayoutWidget | None = None
        self._built_for: tuple | None = None  # the panel shapes of the last rebuild
        self._window_height = 0  # the window's height the minimum was last taken at
        self._watched = None  # the window whose resizes it follows

        # Counters for tests and benchmarks: panels built, and every panel and title
        # refreshed. One edit that changes shape, config and tokens at once (+ token)
        # costs one of each: the signals of one event-loop turn are coalesced.
        self.rebuild_count = 0
        self.refresh_count = 0
        self._pending: str | None = None  # "rebuild" or "refresh", done on the next turn
        self._rendered_at = -1  # the document's recompute_count the panels show
        self._later = Later(self, self._run_pending)
        self._building = None  # the steps left of a large strip's build (`rebuild`)
        self._build_later = Later(self, self._continue_build)

        document.traceChanged.connect(self._on_trace)
        document.configChanged.connect(self._on_config)  # it follows every shapeChanged
        document.tokensChanged.connect(self._on_tokens)
        document.viewChanged.connect(self._on_view)
        self.rebuild()

    @property
    def settled(self) -> bool:
        """Nothing pending: no rebuild or refresh waits for the next turn (what a test
        waits for after an action)."""
        return not (self._later.pending or self._fit_later.pending or self.building)

    @never_raises(default=QSize(0, MIN_HEIGHT))
    def sizeHint(self):
        hint = super().sizeHint()
        # small enough that the heads above keep most of a 720 px projector's height
        zoom = self.options.zoom
        height = 112 + 12 * min(self.document.config.h, 8) + 40 * (zoom - 1)
        height += self._key_label_room()
        if self.canvas is not None:  # what its items were fitted to (12 heads' rows, …)
            height = max(height, self.canvas.minimumHeight())
        hint.setHeight(round(height))
        return hint

    @never_raises(default=QSize(0, MIN_HEIGHT))
    def minimumSizeHint(self):
        """Never squeezed below the height its rows need (a dock opened below the window
        takes the room from the grid above, which scrolls, not from the strip's rows),
        but at most MIN_SHARE of the window's height: a short window keeps its grid."""
        hint = super().minimumSizeHint()
        rows = self.sizeHint().height()
        window = self.window()
        share = MIN_SHARE * window.height() if window is not self else rows
        hint.setHeight(round(max(MIN_HEIGHT, min(rows, share))))
        return hint

    def _follow_window(self) -> None:
        """The minimum is a share of the window's height: ask again when that changed."""
        height = self.window().height()
        if height != self._window_height:
            self._window_height = height
            self.updateGeometry()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        window = self.window()
        if window is not self and window is not self._watched:
            if self._watched is not None:
                self._watched.removeEventFilter(self)
            window.installEventFilter(self)
            self._watched = window
        self._follow_window()

    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        if obj is self._watched and event.type() == QEvent.Type.Resize:
            self._follow_window()
        return False

    def _key_label_room(self) -> float:
        """The height the key labels need beyond one line when they stand upright
        (every key is named up to 40 tokens: in a narrow strip they turn)."""
        tokens = self.document.tokens
        if len(tokens) <= 8:
            return 0.0
        px = LABEL_MAX_PX * self.options.zoom**0.5 * 0.8
        labels = [axis_label(t, i) for i, t in enumerate(tokens[:READABLE])]
        return min(90.0, max(0.0, text_width(labels, px) - px))

    # ----------------------------------------------------- display settings ------
    def bind_display(self, settings) -> None:
        """Follow a DisplaySettings: current values now, every change later (through
        `options`, which validates them)."""
        self.options.bind(settings)

    def _restyle(self) -> None:
        self.updateGeometry()  # the size hint follows the zoom
        self.rebuild()

    def _show_values(self, show: bool) -> None:
        for panel in self.panels.values():
            panel.set_show_values(show)

    def cell_tooltip(self, part: str, row: int, col: int) -> str:
        """Hover text of a strip cell; part is q, s, a, z or heads (row = head there)."""
        doc = self.document
        view = doc.view
        kind, head = {"q": "Q", "s": "S", "a": "A", "z": "Z", "heads": "A"}[part], view.head
        if part == "heads":
            head = row
        return explain_cell(
            kind,
            head,
            view.query,
            col,
            trace=doc.trace(),
            params=doc.parameters,
            config=doc.config,
            tokens=doc.tokens,
        )

    # ----------------------------------------------------------------- building ---
    def rebuild(self) -> None:
        """New panels for the layer's shapes on a new canvas: in one go, or — a strip of
        more than STEP_CELLS cells — one panel per event-loop turn (n = 2048, 12 heads:
        the five plots in one turn froze the window ~70 ms as the layer opened)."""
        self._pending = None
        self._later.cancel()
        self.rebuild_count += 1
        self._built_for = self._shapes()
        self.updateGeometry()
        self._new_canvas()
        self.canvas.setBackground(self.options.palette.background)
        steps = self._build_steps()
        if self._cells() > STEP_CELLS:
            # only the background is painted until every panel is in (transparent, not
            # hidden: hidden items would have no size to lay out)
            self.canvas.ci.setOpacity(0.0)
            self._building = steps
            self._continue_build()
        else:
            for _ in steps:
                pass

    def _cells(self) -> int:
        c = self.document.config
        return c.d_k + 2 * c.n + c.d_v + c.h * c.n

    @property
    def building(self) -> bool:
        """Is a large strip still being built, a panel per event-loop turn?"""
        return self._building is not None

    def _continue_build(self) -> None:
        steps = self._building
        if steps is None:
            return
        try:
            next(steps)
        except StopIteration:
            return  # the last step published the panels and ended the build
        self._build_later.schedule()

    def _build_steps(self):
        """The build as a generator, a panel (and its title) per step, then the finish:
        the panels are published (`panels`, `titles`) and filled only then, so nothing
        reads a half-built strip."""
        c = self.document.config
        options = self.options
        pal = options.palette
        shown_values = options.show_values
        panels: dict[str, HeatmapPanel] = {}
        titles: dict[str, TitleLabel] = {}
        values, weights = options.lut("values"), options.lut("weights")
        parts = (
            ("q", (1, c.d_k), values),
            ("s", (1, c.n), values),
            ("a", (1, c.n), weights),
            ("z", (1, c.d_v), values),
        )
        ci = self.canvas.ci
        col = 0
        for k, (name, shape, lut) in enumerate(parts):
            if k:
                ci.addLabel("→", row=1, col=col, size=options.pt(16), color=pal.muted)
                col += 1
            titles[name] = self._title(ci, col)
            plot = add_plot(ci, 1, col)
            ci.layout.setColumnStretchFactor(col, max(2, shape[1]))
            panels[name] = self._panel(plot, name, shape, lut, pal)
            plot.getAxis("left").setWidth(4)
            plot.hideAxis("left")
            col += 1
            yield
        # the same query's weights in every head (rows = heads)
        titles["heads"] = self._title(ci, col)
        plot = add_plot(ci, 1, col)
        ci.layout.setColumnStretchFactor(col, max(3, c.n))
        panels["heads"] = self._panel(plot, "heads", (c.h, c.n), weights, pal)
        yield
        self._building = None
        self.panels, self.titles = panels, titles
        if options.show_values != shown_values:  # switched while the strip was built
            self._show_values(options.show_values)
        ci.setOpacity(1.0)
        reshaped = self._shapes() != self._built_for
        if reshaped or self.document.computing:
            # the layer changed while the strip was built: the trace shown is not yet
            # the config's; the refresh (or the rebuild) waits for the new trace
            self._schedule("rebuild" if reshaped else "refresh")
        else:
            self._refresh_all()

    def _title(self, ci, col: int) -> TitleLabel:
        """A panel's title that keeps the largest size its texts needed: following
        another query ("q = Q₀[cat]" → "q = Q₀[down]") then repaints the title instead
        of laying the whole strip out again (~60 % of a toy query switch's time)."""
        label = TitleLabel("", size=self.options.pt(10))
        ci.addItem(label, row=0, col=col)
        return label

    def _new_canvas(self) -> None:
        """An empty canvas in place of the last one, which Qt deletes with its items."""
        old = self._scroll.takeWidget()
        self.panels, self.titles = {}, {}
        self._building = None  # a build still in steps drew on the old canvas
        self._build_later.cancel()
        self.canvas = new_canvas()  # only Qt deletes its items
        self.canvas.setObjectName("queryStripCanvas")
        attach_strip(self.canvas, self)  # keyboard cursor, accessible tables
        self.canvas.ci.setContentsMargins(4, 2, 4, 2)
        self._scroll.setWidget(self.canvas)
        if old is not None:
            discard_widget(old)
        self._fit_soon()

    def _fit_soon(self) -> None:
        """Fit the canvas on the next turn, and again after the resizes that fit causes."""
        self._fit_sizes, self._fit_settled = [], False
        self._fit_later.schedule()

    def _fit_after_resize(self, *_args) -> None:
        if not self._fit_settled:
            self._fit_later.schedule()

    def _fit_canvas(self) -> None:
        """The canvas asks for the room its items need. A fit can oscillate: a scroll bar
        that comes with the new size takes the room the labels were fitted to, they
        refit, the bar goes, and so on (a random user found the window never idle so).
        Back at a size it had since the strip last changed — or after MAX_FITS fits
        whose sizes kept drifting (the soak saw one never repeat) — it keeps the largest
        of them until the next change."""
        if self.canvas is None or self._fit_settled:
            return
        fit_to_content(self.canvas)
        size = self.canvas.minimumSize()
        seen, now = self._fit_sizes, (size.width(), size.height())
        if seen and seen[-1] == now:
            return
        if now in seen or len(seen) >= MAX_FITS:
            self._fit_settled = True
            widest = max(w for w, _h in [*seen, now])
            tallest = max(h for _w, h in [*seen, now])
            self.canvas.setMinimumSize(QSize(widest, tallest))
        seen.append(now)
        self.updateGeometry()  # the size hint covers the fitted canvas

    def _shapes(self) -> tuple:
        c = self.document.config
        return (c.n, c.h, c.d_k, c.d_v)

    def _on_tokens(self) -> None:
        self.updateGeometry()  # longer labels need more room when they stand upright
        self._schedule("refresh")

    def _on_config(self) -> None:
        """New shapes or config: new panel shapes are a rebuild; any other change (the
        mask, RoPE, the scale, K/V sharing: the titles) a refresh."""
        self._schedule("rebuild" if self._shapes() != self._built_for else "refresh")

    def _panel(self, plot, name, shape, lut, pal) -> HeatmapPanel:
        panel = HeatmapPanel(
            plot,
            "A" if name == "heads" else name.upper(),
            None,
            shape,
            palette=pal,
            lut=lut,
            show_values=self.options.show_values,
            on_tooltip=lambda _k, _h, r, c, part=name: self.cell_tooltip(part, r, c),
            on_click=lambda _h, r, part=name: self._clicked(part, r),
            query_rows=name == "heads",
            value_limit=STRIP_VALUE_LIMIT,
            zoom=self.options.zoom**0.5,
        )
        # the cells keep a readable height whatever room the labels below take
        plot.getViewBox().setMinimumHeight(max(24, 12 * shape[0]))
        if name in ("s", "a", "heads") and shape[1] <= READABLE:
            # and a key column the width its label needs (the strip scrolls if it must)
            zoom = self.options.zoom**0.5
            plot.getViewBox().setMinimumWidth(KEY_PITCH_PX * max(zoom, 1.0) * shape[1])
        # labels refitted to a new size change the room the canvas needs: fit it again
        plot.getViewBox().sigResized.connect(self._fit_after_resize)
        if shape[0] == 1:  # a vector: square cells, not bars as tall as "every head"
            vb = plot.getViewBox()
            vb.sigResized.connect(lambda *_a, vb=vb, cols=shape[1]: _square_cells(vb, cols))
            plot.layout.setAlignment(vb, Qt.AlignmentFlag.AlignBottom)  # on its labels
        # square cells in whatever box the strip gives (the toy's 2 heads of 4 keys
        # were 46 × 22 px cells), keys at least as wide as their labels need
        keys = name in ("s", "a", "heads") and shape[1] <= READABLE
        # (the heads' squares: every key still named at 10 px, rotated if it must)
        least = KEY_PITCH_PX * max(self.options.zoom**0.5, 1.0) if keys else MIN_SQUARE_PX
        if keys and name == "heads":
            least = HEADS_PITCH_PX
        panel.keep_square("left" if name == "heads" else "centre", least)
        return panel

    def _clicked(self, part: str, row: int) -> None:
        if part == "heads":
            self.document.set_head(row)

    # ------------------------------------------------------------------ content ---
    def _schedule(self, kind: str) -> None:
        """Rebuild or refresh once, on the next event-loop turn, however many signals
        ask for it in this one (a rebuild includes the refresh)."""
        if self._pending != "rebuild":
            self._pending = kind
        self._later.schedule()

    def _run_pending(self) -> None:
        if self.document.computing:
            return  # a large layer is computing: its traceChanged runs this again
        kind, self._pending = self._pending, None
        if kind == "rebuild":
            self.rebuild()
        elif kind == "refresh":
            self._refresh_all()

    def _refresh_all(self, *_args) -> None:
        self._pending = None
        self._later.cancel()
        self._update(None)
        self._fit_soon()  # new labels may need more height

    def _on_view(self) -> None:
        """The strip follows the inspected head and the query token, not the stage."""
        view = self.document.view
        if (view.head, view.query) == self._shown:
            return
        self._refresh_soon()

    def _refresh_soon(self) -> None:
        """Refresh at once (a click on a head or a token is one signal), or with what is
        pending already, or when the document has finished computing."""
        if self._pending is not None or self.document.computing:
            self._schedule("refresh")
        else:
            self._refresh_all()

    def _on_trace(self, heads) -> None:
        if self._pending is not None:
            self._later.schedule()  # the pending refresh reads the new trace
        elif self.document.recompute_count != self._rendered_at:
            self._update(heads)
        # else: a refresh already read this very trace (it was pending in this turn)

    def _weight_colours(self, weights: np.ndarray, query: int) -> np.ndarray | None:
        """What the colours of query `query`'s weights show in every head (h × n), under
        the weights colour range; None for "fixed" (the weights themselves)."""
        weights_range = self.options.weights_range
        if weights_range == "fixed":
            return None
        return np.stack([weights_colours(w, weights_range)[query] for w in weights])

    def _update(self, heads) -> None:
        doc = self.document
        if not self.panels:
            return
        c, t, view = doc.config, doc.shown_trace(), doc.view
        self._rendered_at = doc.recompute_count
        i, j, g = view.head, view.query, c.kv_group(view.head)
        pal = self.options.palette
        tokens = doc.tokens
        mask_row = t.mask[j][None, :]
        if heads is None or i in heads:
            q = t.q_scores[i, j][None, :]  # rotated with RoPE: the q the scores use
            s = t.scores[i, j][None, :]
            z = t.heads[i, j][None, :]
            self.panels["q"].set_matrix(q, theme.levels_for("values", q))
            self.panels["s"].set_matrix(s, theme.levels_for("values", s), mask_row)
            colours = self._weight_colours(t.weights, j)
            self.panels["a"].set_matrix(
                t.weights[i, j][None, :],
                (0.0, 1.0),
                mask_row,
                colours=None if colours is None else colours[i][None, :],
            )
            self.panels["z"].set_matrix(z, theme.levels_for("values", z))
        if heads is None or heads:
            self.panels["heads"].set_matrix(
                t.weights[:, j, :],
                (0.0, 1.0),
                np.repeat(mask_row, c.h, axis=0),
                colours=self._weight_colours(t.weights, j),
            )
        if heads is not None:
            return
        self.refresh_count += 1
        self._shown = (i, j)
        token = tokens[j]
        shown = esc(token)  # a token like <s> is text, not a tag
        colour = theme.head_text_color(i, self.options.theme)
        # with RoPE the strip follows the rotated vectors q̃ = Q̃_i[j] and K̃ (what S reads)
        tilde = "\u0303" if c.rope else ""
        kv = f"K{tilde}<sub>{g if c.variant != 'MHA' else i}</sub>"
        scale = "/ √d<sub>k</sub>" if c.scale is None else f"· {c.scale:g}"

        def two_lines(formula: str, shape: str) -> str:
            # the shape on a second line keeps five titles within a projector's width
            return (
                f"{formula}<br><span style='color:{pal.muted}; font-weight:normal'>{shape}</span>"
            )

        for name, text in (
            ("q", two_lines(f"q{tilde} = Q{tilde}<sub>{i}</sub>[{shown}]", f"1×{c.d_k}")),
            ("s", two_lines(f"s = q{tilde} {kv}ᵀ {scale}", f"1×{c.n}")),
            ("a", two_lines("a = softmax(s)", f"1×{c.n}")),
            ("z", two_lines(f"z<sub>{i}</sub> = a V<sub>{g}</sub>", f"1×{c.d_v}")),
        ):
            set_label(self.titles[name], text, color=colour, size=self.options.pt(10), bold=True)
        set_label(
            self.titles["heads"],
            two_lines(f"“{shown}” weights in every head", f"{c.h}×{c.n}"),
            color=pal.text,
            size=self.options.pt(10),
        )
        self.panels["q"].set_axis_labels([token], feature_labels(c.d_k))
        self.panels["z"].set_axis_labels([token], feature_labels(c.d_v))
        for name in ("s", "a"):
            self.panels[name].set_axis_labels([token], tokens)
        heads_panel = self.panels["heads"]
        heads_panel.set_axis_labels([f"head {h}" for h in range(c.h)], tokens)
        heads_panel.set_query(i)
