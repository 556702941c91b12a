"""The neuron view's figure: paints a NeuronLayout (export/figures/neuron_layout.py).

The figure is a Drawing (export/drawing.py): the same object paints the dock widget and
`mha-gui export --view neuron --head I --query J [--key K]`. From the top: the title and
notes, q_j, k_k and their elementwise product as coloured cells, the running sum of the
products climbing to Σ, the equation S_i[j, k] = scale × Σ, and every key's score and
weight for query j as bars (blocked keys hatched, the chosen key in a band).
"""

from __future__ import annotations

import numpy as np

from mha_gui import theme
from mha_gui.engine.layer.numbers import minus, nice_peak, num, sub
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.figures.neuron_layout import (
    CELL_H,
    EXPLICIT_SUM_MAX,
    GUTTER,
    LABEL_PX,
    MARGIN,
    NOTE_PX,
    NUM_W,
    SCORE_W,
    SUM_W,
    TEXT_PX,
    TITLE_PX,
    VALUE_PX,
    WATERFALL_H,
    WEIGHT_W,
    NeuronLayout,
)
from mha_gui.export.painter import saved
from mha_gui.export.primitives import make_pen, outline, page, paint_hatched, paint_text
from mha_gui.export.text import draw_rich, elide, make_font, qcolor


class NeuronDrawing(NeuronLayout):
    """The neuron view of (head, query, key) for one StageData, in logical units."""

    # ----------------------------------------------------------------- painting ----
    def paint(self, painter, theme_name: str, colormap: str) -> None:
        pal = theme.palette(theme_name)
        with page(painter, self, pal):
            self._paint_header(painter, pal, theme_name)
            self._paint_vectors(painter, pal, colormap)
            self._paint_waterfall(painter, pal, colormap)
            self._paint_equation(painter, pal)
            self._paint_keys(painter, pal, colormap, theme_name)

    def _paint_header(self, painter, pal, theme_name) -> None:
        from PySide6.QtCore import QRectF

        nu, tok = self.neuron, self.tokens
        painter.fillRect(
            QRectF(MARGIN, self.title_y + 8, 16, 16), qcolor(theme.head_color(nu.head))
        )
        paint_text(
            painter, MARGIN + 24, self.title_y, self.width, TITLE_PX * 1.4,
            f"Neuron view · head {nu.head}: why query “{elide(tok[nu.query], TITLE_PX, 220)}” "
            f"attends to key “{elide(tok[nu.key], TITLE_PX, 220)}”",
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
            painter.fillRect(r, qcolor(rgb[d]))
            if self.show_numbers:
                painter.setFont(make_font(VALUE_PX))
                painter.setPen(qcolor(theme.text_color_on(rgb[d])))
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

        nu, tok = self.neuron, self.tokens
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
            f"{q_name}{rot} · “{elide(tok[nu.query], LABEL_PX, 80)}”",
            f"× {k_name}{rot} · “{elide(tok[nu.key], LABEL_PX, 80)}”",
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
        painter.fillRect(box, qcolor(rgb))
        outline(painter, box, pal.text, 1.5)
        paint_text(
            painter, self.sum_x, y, SUM_W, CELL_H, minus(f"Σ = {num(nu.dot)}"), VALUE_PX + 1,
            theme.text_color_on(rgb), Qt.AlignCenter, True,
        )  # fmt: skip

    def _paint_waterfall(self, painter, pal, colormap) -> None:
        """The running sum of the products: each dimension's bar starts where the last one
        ended, so the bars climb (agreeing dimensions) and fall (disagreeing ones) to Σ."""
        from PySide6.QtCore import QLineF, QRectF, Qt

        nu = self.neuron
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
        with saved(painter):
            painter.setPen(make_pen(pal.muted))
            painter.drawLine(QLineF(self.x0 - 6, zero, self.sum_x + SUM_W, zero))
            rgb = theme.colors_for(nu.products, self.p_levels, lut)
            cw = self.cw
            edge = make_pen(pal.muted, 0.8)
            link = make_pen(pal.muted, 0.8, dashed=True)
            for d in range(nu.d_k):
                y0, y1 = sorted((ymap(starts[d]), ymap(cum[d])))
                r = QRectF(self.x0 + d * cw + cw * 0.12, y0, max(cw * 0.76, 0.5), max(y1 - y0, 0.8))
                painter.fillRect(r, qcolor(rgb[d]))
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
            painter.fillRect(
                bar, qcolor(theme.colors_for(np.array([nu.dot]), self.p_levels, lut)[0])
            )
        outline(painter, bar, pal.text, 1.5)
        below = nu.dot < 0
        paint_text(
            painter, self.sum_x, bar.bottom() + 2 if below else bar.top() - 22, SUM_W, 20,
            "Σ", LABEL_PX, pal.text, Qt.AlignCenter, True,
        )  # fmt: skip

    def _paint_equation(self, painter, pal) -> None:
        nu, c = self.neuron, self.config
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

        nu, tok, n = self.neuron, self.tokens, self.config.n
        j = nu.query
        paint_text(
            painter, MARGIN, self.keys_title_y, self.width, TEXT_PX * 1.6,
            f"Every key for query {j} “{elide(tok[j], TEXT_PX, 200)}” · head {nu.head}",
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
        painter.fillRect(band, qcolor(pal.panel))
        for k in range(n):
            y = y0 + k * rh
            bar_h = max(rh * 0.7, 1.0)
            by = y + (rh - bar_h) / 2
            chosen = k == nu.key
            near = abs(k - nu.key) < self.label_step
            if chosen or (k % self.label_step == 0 and not near):
                paint_text(
                    painter, MARGIN, y + rh / 2 - 12, GUTTER - 14, 24,
                    f"{k} “{elide(tok[k], px, GUTTER - 60)}”", px,
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
            painter.fillRect(r, qcolor(s_rgb[k]))
            w = float(nu.weights[k])
            wr = QRectF(self.weight_x, by, max(WEIGHT_W * w / wmax, 0.8), bar_h)
            painter.fillRect(wr, qcolor(w_rgb[k]))
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
    """`--view neuron`: options.head / query / key (None: the strongest key)."""
    return NeuronDrawing(data, options.head, options.query, options.key, options.weights_range)
