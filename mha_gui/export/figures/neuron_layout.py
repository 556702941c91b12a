"""The neuron view's layout: its numbers, where each row and bar goes, what is under the mouse.

export/figures/neuron.py paints this layout; views/docks/neuron/neuron_view.py is the dock and the
registration. The layout measures text, so it needs a QApplication (ensure_app).
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui.engine.layer.numbers import minus, nice_peak, num, number_format
from mha_gui.engine.panels.stage_panels import check_weights_range, symbol
from mha_gui.engine.teaching.neuron import Neuron, neuron
from mha_gui.export.text import ensure_app, text_width

MARGIN = 28.0
WIDTH = 1120.0
GUTTER = 210.0  # row labels left of the cells and the bars
TITLE_PX = 24.0
TEXT_PX = 17.0
NOTE_PX = 15.0
LABEL_PX = 15.0
VALUE_PX = 14.0
CELL_H = 40.0
MAX_CELL_W = 80.0
SUM_W = 118.0  # the "Σ" cell right of the products
WATERFALL_H = 150.0
SCORE_W, WEIGHT_W, NUM_W, CHART_GAP = 300.0, 300.0, 84.0, 30.0
EXPLICIT_SUM_MAX = 8  # write the sum out term by term up to this d_k


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
    ):
        """`interactive`: the dock's drawing, whose notes say what a click does; an
        exported figure has no mouse, so it leaves those words out."""
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
        self._layout()

    # ------------------------------------------------------------------ layout -----
    def _layout(self) -> None:
        nu = self.neuron
        d = nu.d_k
        self.width = WIDTH
        self.x0 = MARGIN + GUTTER
        room = WIDTH - 2 * MARGIN - GUTTER - SUM_W - 24
        self.cw = min(MAX_CELL_W, room / d)
        qk_top = nice_peak(max(np.max(np.abs(nu.q)), np.max(np.abs(nu.k))))
        p_top = nice_peak(float(np.max(np.abs(nu.products))))
        self.qk_levels = (-qk_top, qk_top)
        self.p_levels = (-p_top, p_top)
        self.qk_fmt = number_format("values", self.qk_levels)
        self.p_fmt = number_format("values", self.p_levels)
        longest = max(
            text_width(self.qk_fmt.cell(float(v)), VALUE_PX)
            for v in np.concatenate([nu.q, nu.k, nu.products])
        )
        self.show_numbers = self.cw >= longest + 8 and self.cw >= 30
        self.dim_step = 1
        while self.cw * self.dim_step < text_width(str(d - 1), LABEL_PX) + 8:
            self.dim_step += 1

        y = MARGIN
        self.title_y = y
        y += TITLE_PX * 1.6
        self.formula_y = y
        y += TEXT_PX * 1.7
        self.notes = self._notes()
        self.notes_y = y
        y += len(self.notes) * NOTE_PX * 1.5 + 16
        self.dims_y = y
        y += LABEL_PX * 1.6
        self.rows_y = [y, y + CELL_H + 8, y + 2 * (CELL_H + 8) + 10]
        y = self.rows_y[2] + CELL_H + 26
        self.fall_y = y
        y += WATERFALL_H + 20
        self.sum_x = self.x0 + d * self.cw + 24
        self.equation_y = y
        y += (TEXT_PX * 1.7) * (2 if 1 < d <= EXPLICIT_SUM_MAX else 1) + NOTE_PX * 1.6 + 22

        # every key of this query: a row of bars per key
        self.keys_title_y = y
        y += TEXT_PX * 1.8
        self.chart_head_y = y
        y += NOTE_PX * 1.6 + 6
        n = self.config.n
        self.row_h = max(4.0, min(30.0, 640.0 / n))
        self.keys_y = y
        self.label_step = max(1, math.ceil(13.0 / self.row_h))
        y += n * self.row_h + 14
        self.legend_y = y if nu.blocked_keys.any() else None
        if self.legend_y is not None:
            y += NOTE_PX * 1.8
        self.score_x = self.x0
        self.weight_x = self.score_x + SCORE_W + NUM_W + CHART_GAP
        self.height = y + MARGIN - 10

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
        """("key", k) over a key's row of bars, ("dim", d) over a column of the vectors."""
        nu = self.neuron
        in_rows = self.keys_y <= y < self.keys_y + self.config.n * self.row_h
        if in_rows and MARGIN <= x <= self.width - MARGIN:
            return ("key", int((y - self.keys_y) // self.row_h))
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
