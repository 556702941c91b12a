"""The neuron view's layout: its numbers, where each row and bar goes, what is under the mouse.

export/figures/neuron.py paints this layout; views/docks/neuron/neuron_view.py is the dock and the
registration. The layout measures text, so it needs a QApplication (ensure_app).
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui.engine.layer.numbers import minus, nice_peak, num, number_format, sub
from mha_gui.engine.panels.stage_panels import check_weights_range, symbol
from mha_gui.engine.teaching.neuron import Neuron, neuron
from mha_gui.export.text import (
    draw_plain_wrapped,
    elide,
    ensure_app,
    text_width,
    wrapped_height,
)

MARGIN = 28.0
WIDTH = 1120.0  # the figure's own width (an export); a narrow dock lays it out narrower
MIN_WIDTH = 480.0
GUTTER = 210.0  # row labels left of the cells and the bars
NARROW_GUTTER = 120.0
MIN_CHART_W = 200.0  # narrower than this side by side: the two charts are stacked
TITLE_PX = 24.0
TEXT_PX = 17.0
NOTE_PX = 15.0
LABEL_PX = 15.0
VALUE_PX = 14.0
CELL_H = 40.0
MAX_CELL_W = 80.0
SUM_W = 118.0  # the "Σ" cell right of the products
WATERFALL_H = 150.0
CHART_W, NUM_W, CHART_GAP = 300.0, 84.0, 30.0
EXPLICIT_SUM_MAX = 8  # write the sum out term by term up to this d_k
VALUE_SIZES = (VALUE_PX, 13.0, 12.0, 11.0, 10.0)  # a cell's number: the largest that fits


class KeyChart:
    """One bar chart of the keys of the followed query: its kind ("score" or "weight"),
    left edge and bar length, the top of its rows, and the y of its heading."""

    def __init__(self, kind: str, x: float, w: float, heading_y: float, rows_y: float):
        self.kind, self.x, self.w, self.heading_y, self.rows_y = kind, x, w, heading_y, rows_y


class NeuronLayout:
    """Where everything of the neuron view of (head, query, key) goes, for one StageData,
    in logical units; NeuronDrawing (export/figures/neuron.py) paints it."""

    def __init__(
        self,
        data,
        head: int,
        query: int,
        key: int | None,
        weights_range="fixed",
        interactive: bool = False,
        width: float = WIDTH,
    ):
        """`interactive`: the dock's drawing, whose notes say what a click does; an
        exported figure has no mouse, so it leaves those words out. `width`: what the
        figure may take (MIN_WIDTH to WIDTH, logical units); narrower than WIDTH, its row
        labels take less room, its texts wrap and the two key charts are stacked."""
        ensure_app()  # the layout measures text
        self.interactive = interactive
        self.weights_range = check_weights_range(weights_range)
        self.neuron: Neuron = neuron(data, head, query, key)  # ValueError for a bad index
        self.config = data.config
        self.tokens = list(data.tokens)
        nu, c = self.neuron, self.config
        tok = self.tokens
        self.sym_s = symbol("S", nu.head, c).pretty
        self.sym_a = symbol("A", nu.head, c).pretty
        self.sym_k = symbol("K", nu.head, c).pretty
        self.title = (
            f"Neuron view · head {nu.head} · query {nu.query} “{tok[nu.query]}” → "
            f"key {nu.key} “{tok[nu.key]}”"
        )
        self.description = (
            f"{c.variant}, n={c.n}, d_k={c.d_k}{', RoPE' if nu.rotated else ''}: "
            f"{self.sym_s}[{nu.query}, {nu.key}] = {nu.scale:.6g} × {nu.dot:.6g}"
        )
        self._layout(max(MIN_WIDTH, min(WIDTH, float(width))))

    # ------------------------------------------------------------------ layout -----
    def _layout(self, width: float) -> None:
        nu = self.neuron
        d = nu.d_k
        self.width = width
        narrow = width < WIDTH
        self.gutter = GUTTER if not narrow else max(NARROW_GUTTER, min(GUTTER, 0.2 * width))
        self.text_w = width - 2 * MARGIN  # texts wrap to this
        self.sum_text = minus(f"Σ = {num(nu.dot)}")
        self.sum_w = (
            SUM_W if not narrow else max(90.0, text_width(self.sum_text, VALUE_PX + 1, True) + 16)
        )
        self.x0 = MARGIN + self.gutter
        room = width - 2 * MARGIN - self.gutter - self.sum_w - 24
        self.cw = min(MAX_CELL_W, room / d)
        qk_top = nice_peak(max(np.max(np.abs(nu.q)), np.max(np.abs(nu.k))))
        p_top = nice_peak(float(np.max(np.abs(nu.products))))
        self.qk_levels = (-qk_top, qk_top)
        self.p_levels = (-p_top, p_top)
        self.qk_fmt = number_format("values", self.qk_levels)
        self.p_fmt = number_format("values", self.p_levels)
        texts = [self.qk_fmt.cell(float(v)) for v in np.concatenate([nu.q, nu.k])]
        texts += [self.p_fmt.cell(float(v)) for v in nu.products]
        self.value_px = next(
            (
                px
                for px in VALUE_SIZES
                if self.cw >= max(text_width(t, px) for t in texts) + 4 and self.cw >= 30
            ),
            None,
        )
        self.show_numbers = self.value_px is not None
        self.dim_step = 1
        while self.cw * self.dim_step < text_width(str(d - 1), LABEL_PX) + 8:
            self.dim_step += 1

        y = MARGIN
        self.title_y = y
        self.title_h = max(TITLE_PX * 1.4, self._plain_h(self.title_text(), TITLE_PX, True, 24))
        y += self.title_h + TITLE_PX * 0.2
        self.formula_y = y
        y += max(TEXT_PX * 1.7, wrapped_height(self.formula_text(), TEXT_PX, self.text_w) + 6)
        self.notes = self._notes()
        self.notes_y = []
        for note in self.notes:
            self.notes_y.append(y)
            y += max(NOTE_PX * 1.5, self._plain_h(note, NOTE_PX) + 4)
        y += 16
        self.dims_y = y
        y += LABEL_PX * 1.6
        self.rows_y = [y, y + CELL_H + 8, y + 2 * (CELL_H + 8) + 10]
        y = self.rows_y[2] + CELL_H + 26
        self.fall_y = y
        y += WATERFALL_H + 20
        self.sum_x = self.x0 + d * self.cw + 24
        fall_note = "up to dimension d"
        self.fall_note_px = min(
            NOTE_PX, NOTE_PX * (self.gutter - 14) / text_width(fall_note, NOTE_PX)
        )
        # the equation: Σ term by term, S = scale × Σ (bold), the scale and the weight
        self.equation = []  # (y, text, px, rich, bold)
        lines = [(self.sum_line(), TEXT_PX, True, False)] if 1 < d <= EXPLICIT_SUM_MAX else []
        lines += [
            (self.score_line(), TEXT_PX + 2, False, True),
            (self.scale_line(), NOTE_PX, True, False),
        ]
        for text, px, rich, bold in lines:
            self.equation.append((y, text, px, rich, bold))
            h = (
                wrapped_height(text, px, self.text_w, bold)
                if rich
                else self._plain_h(text, px, bold)
            )
            y += max(px * 1.7 if px > NOTE_PX else px * 1.6, h + 6)
        y += 22

        # every key of this query: a row of bars per key, a chart of scores, one of weights
        self.keys_title_y = y
        y += TEXT_PX * 1.8
        n = self.config.n
        x = self.x0
        side_w = (width - 2 * MARGIN - self.gutter - 2 * NUM_W - CHART_GAP) / 2
        self.stacked = side_w < MIN_CHART_W
        self.row_h = max(4.0, min(30.0 if not self.stacked else 26.0, 640.0 / n))
        self.label_step = max(1, math.ceil(13.0 / self.row_h))
        self.charts: list[KeyChart] = []
        if self.stacked:
            w = width - 2 * MARGIN - self.gutter - NUM_W
            for kind in ("score", "weight"):
                head_h = wrapped_height(self.chart_heading(kind), NOTE_PX, w + NUM_W)
                self.charts.append(KeyChart(kind, x, w, y, y + head_h + 6))
                y += head_h + 6 + n * self.row_h + 30
            y -= 16
        else:
            w = min(CHART_W, side_w)
            head_h = max(
                wrapped_height(self.chart_heading(kind), NOTE_PX, w + NUM_W)
                for kind in ("score", "weight")
            )
            for kind in ("score", "weight"):
                self.charts.append(KeyChart(kind, x, w, y, y + head_h + 6))
                x += w + NUM_W + CHART_GAP
            y += head_h + 6 + n * self.row_h + 14
        self.keys_y = self.charts[0].rows_y  # the first chart's rows
        self.legend_y = y if nu.blocked_keys.any() else None
        if self.legend_y is not None:
            y += NOTE_PX * 1.8
        self.height = y + MARGIN - 10

    def _plain_h(self, text: str, px: float, bold: bool = False, indent: float = 0.0) -> float:
        return draw_plain_wrapped(None, 0, 0, self.text_w - indent, text, px, "#000000", bold)

    # ------------------------------------------------------------------- texts -----
    def title_text(self) -> str:
        nu, tok = self.neuron, self.tokens
        return (
            f"Neuron view · head {nu.head}: why query “{elide(tok[nu.query], TITLE_PX, 220)}” "
            f"attends to key “{elide(tok[nu.key], TITLE_PX, 220)}”"
        )

    def formula_text(self) -> str:
        nu = self.neuron
        return (
            f"{self.sym_s}[{nu.query}, {nu.key}] = scale · Σ_d q{sub(nu.query)}[d] · "
            f"k{sub(nu.key)}[d]  — the products show which of the d_k = {nu.d_k} dimensions agree"
        )

    def sum_line(self) -> str:
        nu = self.neuron
        terms = num(nu.products[0])
        for v in nu.products[1:]:
            terms += f" − {num(-v)}" if v < 0 else f" + {num(v)}"
        return minus(f"Σ = {terms} = {num(nu.dot)}")

    def score_line(self) -> str:
        nu = self.neuron
        s_name = f"{self.sym_s}[{nu.query}, {nu.key}]"
        line = f"{s_name} = scale × Σ = {num(nu.scale, 4)} × {num(nu.dot)} = {num(nu.scaled)}"
        if nu.blocked:
            line += "   but the mask blocks this pair: S = −∞, weight 0"
        return minus(line)

    def scale_line(self) -> str:
        nu, c = self.neuron, self.config
        if c.scale is None:
            scale = f"scale = 1/√d_k = 1/√{c.d_k} ≈ {num(nu.scale, 4)}"
        else:
            scale = f"scale = {num(nu.scale, 4)} (set in the configuration)"
        weight = (
            f"{self.sym_a}[{nu.query}, {nu.key}] = softmax({self.sym_s}[{nu.query}, :])"
            f"[{nu.key}] = {num(nu.weight)}"
        )
        return minus(f"{scale}   ·   weight {weight}")

    def weights_top(self) -> float:
        """The weight axis's end: 1, or the row's largest weight (View ▸ Weights range)."""
        if self.weights_range == "fixed":
            return 1.0
        return float(self.neuron.weights.max()) or 1.0

    def chart_heading(self, kind: str) -> str:
        j = self.neuron.query
        if kind == "score":
            return f"score {self.sym_s}[{j}, k] = scale · q{sub(j)} · k_k"
        wmax = self.weights_top()
        w_note = "0 to 1" if wmax == 1.0 else f"axis to the row's largest weight, {num(wmax)}"
        return minus(f"weight {self.sym_a}[{j}, k] = softmax ({w_note})")

    def _notes(self) -> list[str]:
        nu, c, tok = self.neuron, self.config, self.tokens
        notes = []
        if nu.chosen:
            again = " — click it again for the strongest key" if self.interactive else ""
            notes.append(f"key {nu.key} “{tok[nu.key]}” chosen{again}")
        else:
            other = " — click a key below to take another apart" if self.interactive else ""
            notes.append(
                f"key {nu.key} “{tok[nu.key]}” has the largest weight for this query{other}"
            )
        if nu.rotated:
            notes.append(
                f"RoPE is on: q and k are rotated to their positions ({nu.query} and {nu.key}) "
                f"before the product — the score sees their distance {nu.query - nu.key}"
            )
        if c.variant != "MHA":
            shared = [i for i in range(c.h) if c.kv_group(i) == nu.group]
            notes.append(
                f"{c.variant}: k comes from {self.sym_k}, shared by query heads "
                f"{shared[0]}–{shared[-1]}"
                if len(shared) > 1
                else f"k comes from {self.sym_k}"
            )
        return notes

    # -------------------------------------------------------------- hit-testing ----
    def hit(self, x: float, y: float):
        """("key", k) over a key's row of bars (in either chart), ("dim", d) over a column
        of the vectors."""
        nu = self.neuron
        for chart in self.charts:
            in_rows = chart.rows_y <= y < chart.rows_y + self.config.n * self.row_h
            if in_rows and MARGIN <= x <= self.width - MARGIN:
                return ("key", int((y - chart.rows_y) // self.row_h))
        top, bottom = self.rows_y[0], self.fall_y + WATERFALL_H
        if top <= y <= bottom and self.x0 <= x < self.x0 + nu.d_k * self.cw:
            return ("dim", int((x - self.x0) // self.cw))
        return None

    def tooltip(self, item) -> str:
        nu, tok = self.neuron, self.tokens
        kind, index = item
        if kind == "key":
            score = "−∞ (blocked by the mask)" if nu.blocked_keys[index] else num(nu.scores[index])
            return minus(
                f"key {index} “{tok[index]}”: score {score}, weight {num(nu.weights[index])}"
                " — click to take this score apart"
            )
        q, k = nu.q[index], nu.k[index]
        return minus(
            f"dimension {index}: q {num(q)} × k {num(k)} = {num(q * k)}"
            f" ({'agree' if q * k > 0 else 'disagree' if q * k < 0 else 'zero'})"
        )
