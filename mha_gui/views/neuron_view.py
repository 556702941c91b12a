"""The neuron view: why the followed query attends to a key, one dimension at a time.

For the inspected head i, the followed query j and a key k (click one; by default the key
with the largest weight), it shows q_j and k_k (rotated when RoPE is on), their
elementwise product q_j ⊙ k_k as coloured cells and as a running sum that climbs to
Σ = q_j · k_k, then × scale = S_i[j, k]; below, every key's score and softmax weight for
query j as bars, the blocked keys hatched and the chosen key highlighted.

The figure is a Drawing (export/drawing.py): the same object paints the dock widget and
`mha-gui export --view neuron --head I --query J [--key K]`.
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui import theme
from mha_gui.engine.neuron import Neuron, neuron
from mha_gui.engine.numbers import minus, nice_peak, num, number_format, sub
from mha_gui.engine.stage_panels import check_weights_range, symbol
from mha_gui.export.text import _elide, _qcolor, draw_rich, ensure_app, make_font, text_width
from mha_gui.views.drawing_widget import DrawingWidget
from mha_gui.views.registry import FigureOptions, ViewSpec, register_view

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
# the document's signals after which a view's numbers may differ
NUMBER_SIGNALS = ("traceChanged", "tokensChanged", "shapeChanged", "configChanged", "maskChanged")


def quoted(token: str, px: float = LABEL_PX, width: float = 130.0) -> str:
    return f"“{_elide(token, px, width)}”"


def paint_text(painter, x, y, w, h, s, px, color, align=None, bold=False) -> None:
    """Plain text in the box (x, y, w, h): left and vertically centred unless `align`."""
    from PySide6.QtCore import QRectF, Qt

    painter.setFont(make_font(px, bold))
    painter.setPen(_qcolor(color))
    flags = align if align is not None else (Qt.AlignLeft | Qt.AlignVCenter)
    painter.drawText(QRectF(x, y, w, h), flags, s)


def make_pen(color: str, width: float = 1.0, dashed: bool = False):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPen

    pen = QPen(_qcolor(color))
    pen.setWidthF(width)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen


def outline(painter, rect, color: str, width: float = 1.0) -> None:
    """The rectangle's outline only (no fill)."""
    from PySide6.QtCore import Qt

    painter.save()
    painter.setPen(make_pen(color, width))
    painter.setBrush(Qt.NoBrush)
    painter.drawRect(rect)
    painter.restore()


def begin_paint(painter, drawing, pal) -> None:
    """Save the painter, switch antialiasing on and fill the drawing's background."""
    from PySide6.QtCore import QRectF

    painter.save()
    painter.setRenderHint(painter.RenderHint.Antialiasing, True)
    painter.setRenderHint(painter.RenderHint.TextAntialiasing, True)
    painter.fillRect(QRectF(0, 0, drawing.width, drawing.height), _qcolor(pal.background))


def follow(widget, document, settings, signals) -> None:
    """Rebuild `widget` on the document's `signals` (names) and follow the display
    settings' theme, colour map and zoom (settings may be None, e.g. in tests)."""
    for name in signals:
        getattr(document, name).connect(widget.refresh)
    if settings is not None:
        settings.follow("theme", widget.set_theme)
        settings.follow("colormap", widget.set_colormap)
        settings.follow("zoom", widget.set_zoom)


def paint_hatched(painter, x, y, w, h, pal) -> None:
    """A blocked box: the theme's blocked fill with diagonal hatching (as in the heatmaps)."""
    from PySide6.QtCore import QLineF, QRectF

    painter.fillRect(QRectF(x, y, w, h), _qcolor(pal.blocked))
    painter.save()
    painter.setClipRect(QRectF(x, y, w, h))
    painter.setPen(make_pen(pal.hatch))
    step = 7.0
    t = -h
    while t < w:
        painter.drawLine(QLineF(x + t, y + h, x + t + h, y))
        t += step
    painter.restore()


class NeuronDrawing:
    """The neuron view of (head, query, key) for one StageData, in logical units."""

    def __init__(self, data, head: int, query: int, key: int | None, weights_range="fixed"):
        ensure_app()  # the layout measures text
        self.weights_range = check_weights_range(weights_range)
        self.n: Neuron = neuron(data, head, query, key)  # ValueError for a bad index
        self.config = data.config
        self.tokens = list(data.tokens)
        nu, c = self.n, self.config
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
        nu = self.n
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
        nu, c, tok = self.n, self.config, self.tokens
        notes = []
        if nu.chosen:
            notes.append(
                f"key {nu.key} “{tok[nu.key]}” chosen — click it again for the strongest key"
            )
        else:
            notes.append(
                f"key {nu.key} “{tok[nu.key]}” has the largest weight for this query — "
                f"click a key below to take another apart"
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
        nu = self.n
        in_rows = self.keys_y <= y < self.keys_y + self.config.n * self.row_h
        if in_rows and MARGIN <= x <= self.width - MARGIN:
            return ("key", int((y - self.keys_y) // self.row_h))
        top, bottom = self.rows_y[0], self.fall_y + WATERFALL_H
        if top <= y <= bottom and self.x0 <= x < self.x0 + nu.d_k * self.cw:
            return ("dim", int((x - self.x0) // self.cw))
        return None

    def tooltip(self, item) -> str:
        nu, tok = self.n, self.tokens
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

    # ----------------------------------------------------------------- painting ----
    def paint(self, painter, theme_name: str, colormap: str) -> None:
        pal = theme.palette(theme_name)
        begin_paint(painter, self, pal)
        self._paint_header(painter, pal, theme_name)
        self._paint_vectors(painter, pal, colormap)
        self._paint_waterfall(painter, pal, colormap)
        self._paint_equation(painter, pal)
        self._paint_keys(painter, pal, colormap, theme_name)
        painter.restore()

    def _paint_header(self, painter, pal, theme_name) -> None:
        from PySide6.QtCore import QRectF

        nu, tok = self.n, self.tokens
        painter.fillRect(
            QRectF(MARGIN, self.title_y + 8, 16, 16), _qcolor(theme.head_color(nu.head))
        )
        paint_text(
            painter, MARGIN + 24, self.title_y, self.width, TITLE_PX * 1.4,
            f"Neuron view · head {nu.head}: why query “{_elide(tok[nu.query], TITLE_PX, 220)}” "
            f"attends to key “{_elide(tok[nu.key], TITLE_PX, 220)}”",
            TITLE_PX, pal.text, bold=True,
        )  # fmt: skip
        q_name, k_name = f"q{sub(nu.query)}", f"k{sub(nu.key)}"
        draw_rich(
            painter, MARGIN, self.formula_y,
            f"{self.sym_s}[{nu.query}, {nu.key}] = scale · Σ_d {q_name}[d] · {k_name}[d]"
            f"  — the products show which of the d_k = {nu.d_k} dimensions agree",
            TEXT_PX, pal.text,
        )  # fmt: skip
        for i, note in enumerate(self.notes):
            color = theme.head_text_color(nu.head, theme_name) if i == 1 and nu.rotated else None
            paint_text(
                painter, MARGIN, self.notes_y + i * NOTE_PX * 1.5, self.width - 2 * MARGIN,
                NOTE_PX * 1.5, note, NOTE_PX, color or pal.muted,
            )  # fmt: skip

    def _cells(self, painter, pal, y, values, levels, fmt, lut) -> None:
        from PySide6.QtCore import QLineF, QRectF, Qt

        rgb = theme.colors_for(values, levels, lut)
        cw = self.cw
        for d, v in enumerate(values):
            r = QRectF(self.x0 + d * cw, y, cw, CELL_H)
            painter.fillRect(r, _qcolor(rgb[d]))
            if self.show_numbers:
                painter.setFont(make_font(VALUE_PX))
                painter.setPen(_qcolor(theme.text_color_on(rgb[d])))
                painter.drawText(r, Qt.AlignCenter, fmt.cell(float(v)))
        if cw >= 10:
            painter.setPen(make_pen(pal.background))
            for d in range(1, len(values)):
                x = self.x0 + d * cw
                painter.drawLine(QLineF(x, y, x, y + CELL_H))
        outline(painter, QRectF(self.x0, y, len(values) * cw, CELL_H), pal.grid)

    def _row_label(self, painter, pal, y, text, fmt, bold=False) -> None:
        from PySide6.QtCore import Qt

        width = GUTTER - 14
        paint_text(
            painter, MARGIN, y, width, CELL_H if not fmt.factor else CELL_H * 0.6, text,
            LABEL_PX, pal.text, Qt.AlignRight | Qt.AlignVCenter, bold,
        )  # fmt: skip
        if fmt.factor:  # the common power of ten the cells are printed in
            draw_rich(painter, MARGIN + width - 70, y + CELL_H * 0.55, fmt.factor, 13, pal.muted)

    def _paint_vectors(self, painter, pal, colormap) -> None:
        from PySide6.QtCore import QRectF, Qt

        nu, tok = self.n, self.tokens
        lut = theme.colormap_for("values", colormap)
        right = Qt.AlignRight | Qt.AlignVCenter
        paint_text(
            painter, MARGIN, self.dims_y, GUTTER - 14, LABEL_PX * 1.4, "dimension d",
            LABEL_PX, pal.muted, right,
        )  # fmt: skip
        for d in range(0, nu.d_k, self.dim_step):
            paint_text(
                painter, self.x0 + d * self.cw - 20, self.dims_y, self.cw + 40, LABEL_PX * 1.4,
                str(d), LABEL_PX, pal.muted, Qt.AlignCenter,
            )  # fmt: skip
        rot = " rotated" if nu.rotated else ""
        q_name, k_name = f"q{sub(nu.query)}", f"k{sub(nu.key)}"
        labels = [
            f"{q_name}{rot} · “{_elide(tok[nu.query], LABEL_PX, 80)}”",
            f"× {k_name}{rot} · “{_elide(tok[nu.key], LABEL_PX, 80)}”",
            f"= {q_name} ⊙ {k_name}",
        ]
        rows = [
            (nu.q, self.qk_levels, self.qk_fmt),
            (nu.k, self.qk_levels, self.qk_fmt),
            (nu.products, self.p_levels, self.p_fmt),
        ]
        for y, label, (values, levels, fmt) in zip(self.rows_y, labels, rows, strict=True):
            self._row_label(painter, pal, y, label, fmt, bold=label.startswith("="))
            self._cells(painter, pal, y, values, levels, fmt, lut)

        # the sum of the products, right of them
        y = self.rows_y[2]
        paint_text(
            painter, self.sum_x - 24, y, 24, CELL_H, "→", LABEL_PX, pal.muted, Qt.AlignCenter
        )
        rgb = theme.colors_for(np.array([nu.dot]), self.p_levels, lut)[0]
        box = QRectF(self.sum_x, y, SUM_W, CELL_H)
        painter.fillRect(box, _qcolor(rgb))
        outline(painter, box, pal.text, 1.5)
        paint_text(
            painter, self.sum_x, y, SUM_W, CELL_H, minus(f"Σ = {num(nu.dot)}"), VALUE_PX + 1,
            theme.text_color_on(rgb), Qt.AlignCenter, True,
        )  # fmt: skip

    def _paint_waterfall(self, painter, pal, colormap) -> None:
        """The running sum of the products: each dimension's bar starts where the last one
        ended, so the bars climb (agreeing dimensions) and fall (disagreeing ones) to Σ."""
        from PySide6.QtCore import QLineF, QRectF, Qt

        nu = self.n
        lut = theme.colormap_for("values", colormap)
        cum = np.cumsum(nu.products)
        starts = np.concatenate([[0.0], cum[:-1]])
        lo, hi = min(0.0, float(cum.min()), nu.dot), max(0.0, float(cum.max()), nu.dot)
        if hi - lo <= 0:
            lo, hi = -1.0, 1.0
        top, h = self.fall_y, WATERFALL_H

        def ymap(v: float) -> float:
            return top + h * (hi - v) / (hi - lo)

        right = Qt.AlignRight | Qt.AlignVCenter
        zero = ymap(0.0)
        label_h = LABEL_PX * 1.4 + NOTE_PX * 1.4
        label_y = top + (h - label_h) / 2
        if label_y - 14 < zero < label_y + label_h + 14:  # keep clear of the "0" tick
            label_y = top + h - label_h if zero - top < h / 2 else top
        paint_text(
            painter, MARGIN, label_y, GUTTER - 14, LABEL_PX * 1.4, "running sum", LABEL_PX,
            pal.text, right,
        )  # fmt: skip
        paint_text(
            painter, MARGIN, label_y + LABEL_PX * 1.4, GUTTER - 14, NOTE_PX * 1.4,
            "up to dimension d", NOTE_PX, pal.muted, right,
        )  # fmt: skip
        paint_text(painter, MARGIN, zero - 10, GUTTER - 14, 20, "0", NOTE_PX, pal.muted, right)
        painter.save()
        painter.setPen(make_pen(pal.muted))
        painter.drawLine(QLineF(self.x0 - 6, zero, self.sum_x + SUM_W, zero))
        rgb = theme.colors_for(nu.products, self.p_levels, lut)
        cw = self.cw
        edge = make_pen(pal.muted, 0.8)
        link = make_pen(pal.muted, 0.8, dashed=True)
        for d in range(nu.d_k):
            y0, y1 = sorted((ymap(starts[d]), ymap(cum[d])))
            r = QRectF(self.x0 + d * cw + cw * 0.12, y0, max(cw * 0.76, 0.5), max(y1 - y0, 0.8))
            painter.fillRect(r, _qcolor(rgb[d]))
            if cw >= 6:
                painter.setPen(edge)
                painter.setBrush(Qt.NoBrush)
                painter.drawRect(r)
            if cw >= 8:  # the next bar starts where this one ends
                painter.setPen(link)
                end = self.x0 + (d + 1) * cw + cw * 0.12 if d + 1 < nu.d_k else self.sum_x
                painter.drawLine(QLineF(r.right(), ymap(cum[d]), end, ymap(cum[d])))
        # Σ: the whole sum as one bar from zero
        y0, y1 = sorted((ymap(0.0), ymap(nu.dot)))
        bar = QRectF(self.sum_x + SUM_W * 0.25, y0, SUM_W * 0.5, max(y1 - y0, 1.0))
        painter.fillRect(bar, _qcolor(theme.colors_for(np.array([nu.dot]), self.p_levels, lut)[0]))
        painter.restore()
        outline(painter, bar, pal.text, 1.5)
        below = nu.dot < 0
        paint_text(
            painter, self.sum_x, bar.bottom() + 2 if below else bar.top() - 22, SUM_W, 20,
            "Σ", LABEL_PX, pal.text, Qt.AlignCenter, True,
        )  # fmt: skip

    def _paint_equation(self, painter, pal) -> None:
        nu, c = self.n, self.config
        y = self.equation_y
        if 1 < nu.d_k <= EXPLICIT_SUM_MAX:
            terms = num(nu.products[0])
            for v in nu.products[1:]:
                terms += f" − {num(-v)}" if v < 0 else f" + {num(v)}"
            draw_rich(painter, MARGIN, y, minus(f"Σ = {terms} = {num(nu.dot)}"), TEXT_PX, pal.text)
            y += TEXT_PX * 1.7
        s_name = f"{self.sym_s}[{nu.query}, {nu.key}]"
        line = f"{s_name} = scale × Σ = {num(nu.scale, 4)} × {num(nu.dot)} = {num(nu.scaled)}"
        if nu.blocked:
            line += "   but the mask blocks this pair: S = −∞, weight 0"
        paint_text(
            painter, MARGIN, y, self.width - 2 * MARGIN, TEXT_PX * 1.6, minus(line),
            TEXT_PX + 2, pal.text, bold=True,
        )  # fmt: skip
        y += TEXT_PX * 1.7
        if c.scale is None:
            scale = f"scale = 1/√d_k = 1/√{c.d_k} ≈ {num(nu.scale, 4)}"
        else:
            scale = f"scale = {num(nu.scale, 4)} (set in the configuration)"
        weight = (
            f"{self.sym_a}[{nu.query}, {nu.key}] = softmax({self.sym_s}[{nu.query}, :])"
            f"[{nu.key}] = {num(nu.weight)}"
        )
        draw_rich(painter, MARGIN, y, minus(f"{scale}   ·   weight {weight}"), NOTE_PX, pal.muted)

    def _paint_keys(self, painter, pal, colormap, theme_name) -> None:
        from PySide6.QtCore import QLineF, QRectF, Qt

        nu, tok, n = self.n, self.tokens, self.config.n
        j = nu.query
        paint_text(
            painter, MARGIN, self.keys_title_y, self.width, TEXT_PX * 1.6,
            f"Every key for query {j} “{_elide(tok[j], TEXT_PX, 200)}” · head {nu.head}",
            TEXT_PX + 1, pal.text, bold=True,
        )  # fmt: skip
        wmax = 1.0
        if self.weights_range != "fixed":
            wmax = float(nu.weights.max()) or 1.0
        w_note = "0 to 1" if wmax == 1.0 else f"axis to the row's largest weight, {num(wmax)}"
        draw_rich(
            painter, self.score_x, self.chart_head_y,
            f"score {self.sym_s}[{j}, k] = scale · q{sub(j)} · k_k", NOTE_PX, pal.muted,
        )  # fmt: skip
        draw_rich(
            painter, self.weight_x, self.chart_head_y,
            minus(f"weight {self.sym_a}[{j}, k] = softmax ({w_note})"), NOTE_PX, pal.muted,
        )  # fmt: skip

        finite = nu.scores[np.isfinite(nu.scores)]
        lo = min(0.0, float(finite.min())) if finite.size else -1.0
        hi = max(0.0, float(finite.max())) if finite.size else 1.0
        if hi - lo <= 0:
            lo, hi = -1.0, 1.0
        s_top = nice_peak(max(abs(lo), abs(hi)))
        values_lut = theme.colormap_for("values", colormap)
        weights_lut = theme.colormap_for("weights", colormap)
        s_rgb = theme.colors_for(nu.scores, (-s_top, s_top), values_lut)
        w_rgb = theme.colors_for(nu.weights / wmax, (0.0, 1.0), weights_lut)
        zero_x = self.score_x + SCORE_W * (0 - lo) / (hi - lo)
        rh, y0 = self.row_h, self.keys_y
        numbers = rh >= 13
        px = min(LABEL_PX, max(9.0, rh * 0.62))
        edge = make_pen(pal.muted, 0.8)
        right = Qt.AlignRight | Qt.AlignVCenter

        # the chosen key: a band across the row
        band = QRectF(MARGIN, y0 + nu.key * rh, self.width - 2 * MARGIN, rh)
        painter.fillRect(band, _qcolor(pal.panel))
        for k in range(n):
            y = y0 + k * rh
            bar_h = max(rh * 0.7, 1.0)
            by = y + (rh - bar_h) / 2
            chosen = k == nu.key
            near = abs(k - nu.key) < self.label_step
            if chosen or (k % self.label_step == 0 and not near):
                paint_text(
                    painter, MARGIN, y + rh / 2 - 12, GUTTER - 14, 24,
                    f"{k} “{_elide(tok[k], px, GUTTER - 60)}”", px,
                    pal.text if chosen else pal.muted, right, chosen,
                )  # fmt: skip
            if nu.blocked_keys[k]:
                paint_hatched(painter, self.score_x, by, SCORE_W, bar_h, pal)
                paint_hatched(painter, self.weight_x, by, WEIGHT_W, bar_h, pal)
                if numbers:
                    paint_text(
                        painter, self.score_x + SCORE_W + 8, y, NUM_W, rh, "−∞", px,
                        pal.muted,
                    )  # fmt: skip
                    paint_text(
                        painter, self.weight_x + WEIGHT_W + 8, y, NUM_W, rh, "0", px, pal.muted
                    )
                continue
            s = float(nu.scores[k])
            x1 = self.score_x + SCORE_W * (s - lo) / (hi - lo)
            r = QRectF(min(zero_x, x1), by, max(abs(x1 - zero_x), 0.8), bar_h)
            painter.fillRect(r, _qcolor(s_rgb[k]))
            w = float(nu.weights[k])
            wr = QRectF(self.weight_x, by, max(WEIGHT_W * w / wmax, 0.8), bar_h)
            painter.fillRect(wr, _qcolor(w_rgb[k]))
            if rh >= 8:
                painter.setPen(edge)
                painter.setBrush(Qt.NoBrush)
                painter.drawRect(r)
                painter.drawRect(wr)
            if numbers:
                paint_text(
                    painter, self.score_x + SCORE_W + 8, y, NUM_W, rh, minus(num(s)), px,
                    pal.text, bold=chosen,
                )  # fmt: skip
                paint_text(
                    painter, self.weight_x + WEIGHT_W + 8, y, NUM_W, rh, num(w), px, pal.text,
                    bold=chosen,
                )  # fmt: skip

        painter.setPen(make_pen(pal.muted))
        bottom = y0 + n * rh
        painter.drawLine(QLineF(zero_x, y0 - 3, zero_x, bottom + 3))
        painter.drawLine(QLineF(self.weight_x, y0 - 3, self.weight_x, bottom + 3))
        outline(painter, band, pal.highlight, 2.0)
        # axis ends under the charts
        for x, text in (
            (self.score_x, num(lo)),
            (zero_x, "0"),
            (self.score_x + SCORE_W, num(hi)),
            (self.weight_x, "0"),
            (self.weight_x + WEIGHT_W, num(wmax)),
        ):
            paint_text(
                painter, x - 40, bottom + 2, 80, 18, minus(text), 12, pal.muted, Qt.AlignCenter
            )
        if self.legend_y is not None:
            paint_hatched(painter, MARGIN, self.legend_y + 4, 18, 18, pal)
            paint_text(
                painter, MARGIN + 26, self.legend_y, self.width, 26,
                "blocked by the mask: score −∞, weight 0", NOTE_PX, pal.text,
            )  # fmt: skip
        del theme_name


def neuron_drawing(data, options: FigureOptions) -> NeuronDrawing:
    """The neuron view of options.head / query / key (None: the strongest key)."""
    return NeuronDrawing(data, options.head, options.query, options.key, options.weights_range)


class NeuronView(DrawingWidget):
    """The dock: follows the document's head, query and numbers; a click on a key takes
    that key's score apart (a click on the chosen key goes back to the strongest key).
    The chosen key is view state, not an undo step; it is kept when the head changes
    (compare heads on one pair) and reset when the query changes."""

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.setObjectName("neuronView")
        self.key: int | None = None
        self.weights_range = "fixed"
        self._query = document.view.query
        follow(self, document, settings, NUMBER_SIGNALS)
        document.viewChanged.connect(self._view_changed)
        self.hitClicked.connect(self._clicked)

    def set_key(self, key: int | None) -> None:
        """Take key `key` apart (None: the strongest key of the query)."""
        if key is not None and not 0 <= int(key) < self.document.config.n:
            raise ValueError(f"key {key} is out of range: tokens 0..{self.document.config.n - 1}")
        self.key = None if key is None else int(key)
        self.refresh()

    def set_weights_range(self, name: str) -> None:
        self.weights_range = check_weights_range(name)
        self.refresh()

    def _view_changed(self) -> None:
        if self.document.view.query != self._query:
            self._query = self.document.view.query
            self.key = None
        self.refresh()

    def _clicked(self, item) -> None:
        kind, index = item
        if kind == "key":
            self.set_key(None if index == self.key else index)

    def make_drawing(self) -> NeuronDrawing:
        doc = self.document
        if self.key is not None and self.key >= doc.config.n:
            self.key = None  # fewer tokens now
        view = doc.view
        return NeuronDrawing(doc, view.head, view.query, self.key, self.weights_range)


register_view(
    ViewSpec(
        "neuron",
        "Neuron view",
        "neuronView",
        create=lambda document, settings: NeuronView(document, settings),
        drawing=neuron_drawing,
        area="right",
    )
)
