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
    LABEL_PX,
    MARGIN,
    NOTE_PX,
    NUM_W,
    TEXT_PX,
    TITLE_PX,
    VALUE_PX,
    WATERFALL_H,
    KeyChart,
    NeuronLayout,
)
from mha_gui.export.painter import saved
from mha_gui.export.primitives import make_pen, outline, page, paint_hatched, paint_text
from mha_gui.export.text import (
    draw_plain_wrapped,
    draw_rich,
    draw_rich_wrapped,
    elide,
    make_font,
    qcolor,
    text_width,
)


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

        nu = self.neuron
        painter.fillRect(
            QRectF(MARGIN, self.title_y + 8, 16, 16), qcolor(theme.head_color(nu.head))
        )
        draw_plain_wrapped(
            painter, MARGIN + 24, self.title_y, self.text_w - 24, self.title_text(), TITLE_PX,
            pal.text, bold=True,
        )  # fmt: skip
        draw_rich_wrapped(
            painter, MARGIN, self.formula_y, self.text_w, self.formula_text(), TEXT_PX, pal.text
        )
        for i, (note, y) in enumerate(zip(self.notes, self.notes_y, strict=True)):
            color = theme.head_text_color(nu.head, theme_name) if i == 1 and nu.rotated else None
            draw_plain_wrapped(painter, MARGIN, y, self.text_w, note, NOTE_PX, color or pal.muted)

    def _cells(self, painter, pal, y, values, levels, fmt, lut) -> None:
        from PySide6.QtCore import QLineF, QRectF, Qt

        rgb = theme.colors_for(values, levels, lut)
        cw = self.cw
        for d, v in enumerate(values):
            r = QRectF(self.x0 + d * cw, y, cw, CELL_H)
            painter.fillRect(r, qcolor(rgb[d]))
            if self.show_numbers:
                painter.setFont(make_font(self.value_px))
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

        width = self.gutter - 14
        paint_text(
            painter, MARGIN, y, width, CELL_H if not fmt.factor else CELL_H * 0.6,
            elide(text, LABEL_PX, width, bold), LABEL_PX, pal.text,
            Qt.AlignRight | Qt.AlignVCenter, bold,
        )  # fmt: skip
        if fmt.factor:  # the common power of ten the cells are printed in
            draw_rich(painter, MARGIN + width - 70, y + CELL_H * 0.55, fmt.factor, 13, pal.muted)

    def _paint_vectors(self, painter, pal, colormap) -> None:
        from PySide6.QtCore import QRectF, Qt

        nu, tok = self.neuron, self.tokens
        lut = theme.colormap_for("values", colormap)
        right = Qt.AlignRight | Qt.AlignVCenter
        paint_text(
            painter, MARGIN, self.dims_y, self.gutter - 14, LABEL_PX * 1.4, "dimension d",
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
        box = QRectF(self.sum_x, y, self.sum_w, CELL_H)
        painter.fillRect(box, qcolor(rgb))
        outline(painter, box, pal.text, 1.5)
        paint_text(
            painter, self.sum_x, y, self.sum_w, CELL_H, self.sum_text, VALUE_PX + 1,
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
        gutter = self.gutter - 14
        paint_text(
            painter, MARGIN, label_y, gutter, LABEL_PX * 1.4, "running sum", LABEL_PX,
            pal.text, right,
        )  # fmt: skip
        paint_text(
            painter, MARGIN, label_y + LABEL_PX * 1.4, gutter, NOTE_PX * 1.4,
            "up to dimension d", self.fall_note_px, pal.muted, right,
        )  # fmt: skip
        paint_text(painter, MARGIN, zero - 10, gutter, 20, "0", NOTE_PX, pal.muted, right)
        sum_w = self.sum_w
        with saved(painter):
            painter.setPen(make_pen(pal.muted))
            painter.drawLine(QLineF(self.x0 - 6, zero, self.sum_x + sum_w, zero))
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
            bar = QRectF(self.sum_x + sum_w * 0.25, y0, sum_w * 0.5, max(y1 - y0, 1.0))
            painter.fillRect(
                bar, qcolor(theme.colors_for(np.array([nu.dot]), self.p_levels, lut)[0])
            )
        outline(painter, bar, pal.text, 1.5)
        below = nu.dot < 0
        paint_text(
            painter, self.sum_x, bar.bottom() + 2 if below else bar.top() - 22, sum_w, 20,
            "Σ", LABEL_PX, pal.text, Qt.AlignCenter, True,
        )  # fmt: skip

    def _paint_equation(self, painter, pal) -> None:
        for y, text, px, rich, bold in self.equation:
            color = pal.muted if px == NOTE_PX else pal.text
            if rich:
                draw_rich_wrapped(painter, MARGIN, y, self.text_w, text, px, color, bold)
            else:
                draw_plain_wrapped(painter, MARGIN, y, self.text_w, text, px, color, bold)

    def _paint_keys(self, painter, pal, colormap, theme_name) -> None:
        nu, tok = self.neuron, self.tokens
        j = nu.query
        paint_text(
            painter, MARGIN, self.keys_title_y, self.width, TEXT_PX * 1.6,
            elide(
                f"Every key for query {j} “{elide(tok[j], TEXT_PX, 200)}” · head {nu.head}",
                TEXT_PX + 1, self.text_w, True,
            ),
            TEXT_PX + 1, pal.text, bold=True,
        )  # fmt: skip
        finite = nu.scores[np.isfinite(nu.scores)]
        lo = min(0.0, float(finite.min())) if finite.size else -1.0
        hi = max(0.0, float(finite.max())) if finite.size else 1.0
        if hi - lo <= 0:
            lo, hi = -1.0, 1.0
        s_top = nice_peak(max(abs(lo), abs(hi)))
        wmax = self.weights_top()
        rgb = {
            "score": theme.colors_for(
                nu.scores, (-s_top, s_top), theme.colormap_for("values", colormap)
            ),
            "weight": theme.colors_for(
                nu.weights / wmax, (0.0, 1.0), theme.colormap_for("weights", colormap)
            ),
        }
        labelled = set()  # the rows whose key labels are drawn (once side by side)
        for chart in self.charts:
            draw_rich_wrapped(
                painter, chart.x, chart.heading_y, chart.w + NUM_W, self.chart_heading(chart.kind),
                NOTE_PX, pal.muted,
            )  # fmt: skip
            ends = (lo, hi) if chart.kind == "score" else (0.0, wmax)
            if chart.rows_y not in labelled:
                labelled.add(chart.rows_y)
                self._paint_key_labels(painter, pal, chart.rows_y)
            self._paint_chart(painter, pal, chart, ends, rgb[chart.kind])
        if self.legend_y is not None:
            paint_hatched(painter, MARGIN, self.legend_y + 4, 18, 18, pal)
            paint_text(
                painter, MARGIN + 26, self.legend_y, self.width, 26,
                "blocked by the mask: score −∞, weight 0", NOTE_PX, pal.text,
            )  # fmt: skip
        del theme_name

    def _label_px(self) -> float:
        return min(LABEL_PX, max(9.0, self.row_h * 0.62))

    def _paint_key_labels(self, painter, pal, y0: float) -> None:
        """The keys' names left of a chart's rows, the chosen key in a band across them."""
        from PySide6.QtCore import QRectF, Qt

        nu, tok, rh, px = self.neuron, self.tokens, self.row_h, self._label_px()
        band = QRectF(MARGIN, y0 + nu.key * rh, self.width - 2 * MARGIN, rh)
        painter.fillRect(band, qcolor(pal.panel))
        right = Qt.AlignRight | Qt.AlignVCenter
        for k in range(self.config.n):
            chosen = k == nu.key
            near = abs(k - nu.key) < self.label_step
            if chosen or (k % self.label_step == 0 and not near):
                prefix = f"{k} “"
                room = self.gutter - 14 - text_width(prefix + "”", px, chosen)
                paint_text(
                    painter, MARGIN, y0 + k * rh + rh / 2 - 12, self.gutter - 14, 24,
                    f"{prefix}{elide(tok[k], px, room, chosen)}”", px,
                    pal.text if chosen else pal.muted, right, chosen,
                )  # fmt: skip

    def _paint_chart(self, painter, pal, chart: KeyChart, ends, rgb) -> None:
        """One chart's bars (from 0), numbers right of them and axis ends below."""
        from PySide6.QtCore import QLineF, QRectF, Qt

        nu, n, rh, px = self.neuron, self.config.n, self.row_h, self._label_px()
        lo, hi = ends
        values = nu.scores if chart.kind == "score" else nu.weights
        y0 = chart.rows_y

        def xmap(v: float) -> float:
            return chart.x + chart.w * (v - lo) / (hi - lo)

        zero_x = xmap(0.0)
        edge = make_pen(pal.muted, 0.8)
        for k in range(n):
            y = y0 + k * rh
            bar_h = max(rh * 0.7, 1.0)
            by = y + (rh - bar_h) / 2
            chosen = k == nu.key
            num_x = chart.x + chart.w + 8
            if nu.blocked_keys[k]:
                paint_hatched(painter, chart.x, by, chart.w, bar_h, pal)
                if rh >= 13:
                    blocked = "−∞" if chart.kind == "score" else "0"
                    paint_text(painter, num_x, y, NUM_W, rh, blocked, px, pal.muted)
                continue
            v = float(values[k])
            x1 = xmap(v)
            r = QRectF(min(zero_x, x1), by, max(abs(x1 - zero_x), 0.8), bar_h)
            painter.fillRect(r, qcolor(rgb[k]))
            if rh >= 8:
                painter.setPen(edge)
                painter.setBrush(Qt.NoBrush)
                painter.drawRect(r)
            if rh >= 13:
                paint_text(painter, num_x, y, NUM_W, rh, minus(num(v)), px, pal.text, bold=chosen)
        painter.setPen(make_pen(pal.muted))
        bottom = y0 + n * rh
        painter.drawLine(QLineF(zero_x, y0 - 3, zero_x, bottom + 3))
        outline(
            painter,
            QRectF(MARGIN, y0 + nu.key * rh, self.width - 2 * MARGIN, rh),
            pal.highlight,
            2.0,
        )
        ticks = [(chart.x, num(lo)), (chart.x + chart.w, num(hi))]
        if lo < 0 < hi:
            ticks.insert(1, (zero_x, "0"))
        for x, text in ticks:
            paint_text(
                painter, x - 40, bottom + 2, 80, 18, minus(text), 12, pal.muted, Qt.AlignCenter
            )


def neuron_drawing(data, options: FigureOptions) -> NeuronDrawing:
    """`--view neuron`: options.head / query / key (None: the strongest key)."""
    return NeuronDrawing(data, options.head, options.query, options.key, options.weights_range)
