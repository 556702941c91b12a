"""The MHA / GQA / MQA figure for the layer being edited (`--view kv-cache`).

One row per choice of the number of key/value heads h_kv — MHA (h_kv = h), a few GQA
divisors of h (always the layer's own) and MQA (h_kv = 1) — each with a diagram of which
query heads read which K/V head (coloured groups), the K/V cache at this n and the
parameter count as bars with their numbers; the layer's own variant is highlighted.
Numbers come from engine/panels/stats.py (`kv_variants`), whose K/V cache is h_kv·(d_k + d_v)
numbers per token, as `mha-gui info` prints it. A Drawing (export/drawing.py): the dock
(views/docks/kv_cache/kv_cache_view.py) paints it, laid out for its width.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt

from mha_gui import theme
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.numbers import sub
from mha_gui.engine.panels.stats import KvVariant, kv_variants
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.primitives import make_pen, page, paint_text
from mha_gui.export.text import (
    draw_rich,
    draw_rich_wrapped,
    ensure_app,
    qcolor,
    rich_width,
    text_width,
    wrapped_height,
)

MARGIN = 28.0
TITLE_PX, NOTE_PX, HEAD_PX, LABEL_PX, NUMBER_PX = 24.0, 14.0, 15.0, 15.0, 14.0
LABEL_W = 150.0
DIAGRAM_W = 380.0
CACHE_W, PARAMS_W = 300.0, 240.0
GAP = 36.0
ROW_H = 84.0
MAX_WIDTH = 1600.0
WIDE = 1100.0  # below this width the two bars of a row are stacked
NARROW = 700.0  # below this width: small margins
# Group tints behind the diagram: alternate so neighbouring groups read as separate.
GROUP_TINTS = {"light": ("#e8eef7", "#f5ead9"), "dark": ("#2d3a4d", "#4a3d2a")}


def kv_name(g: int) -> str:
    return f"K{sub(g)}V{sub(g)}"


def group_text(variant: KvVariant, h: int) -> str:
    """`heads 0–3 read K₀V₀, heads 4–7 read K₁V₁` (shortened for many groups)."""
    groups = variant.groups(h)
    if variant.h_kv == h:
        return "each query head reads its own K/V head"
    if variant.h_kv == 1:
        return f"all {h} query heads read one K/V head"
    if len(groups) > 4:
        return f"each K/V head is read by {h // variant.h_kv} query heads (head i reads i // {h // variant.h_kv})"
    return ", ".join(
        f"heads {r.start}–{r.stop - 1} read {kv_name(g)}" for g, r in enumerate(groups)
    )


@dataclass(frozen=True)
class VariantRow:
    index: int


class KvCacheDrawing:
    """The side-by-side figure (a Drawing, export/drawing.py)."""

    def __init__(self, config: Config, width: float = MAX_WIDTH):
        """`width`: the most the figure may take (a dock passes its own). Below `WIDE` the
        two bars of a variant are stacked in one column instead of side by side."""
        ensure_app()
        c = config
        width = max(480.0, min(MAX_WIDTH, float(width)))
        self.stacked = width < WIDE
        self.margin = MARGIN if width >= NARROW else 12.0
        self.config = c
        self.variants = kv_variants(c)
        self.title = "MHA, GQA and MQA for this layer"
        self.description = (
            f"K/V cache and parameters for h_kv in {[v.h_kv for v in self.variants]} "
            f"at n={c.n}, d_model={c.d_model}, h={c.h}, d_k={c.d_k}, d_v={c.d_v}"
        )
        self.subtitle = (
            f"n = {c.n} tokens · d_model = {c.d_model} · h = {c.h} query heads · "
            f"d_k = {c.d_k} · d_v = {c.d_v}{' · biases' if c.bias else ''} · only the number "
            "of K/V heads h_kv changes"
        )
        self.notes = [
            "K/V cache = n · h_kv · (d_k + d_v) numbers per layer (× 2 bytes in fp16): what "
            "inference keeps for every token already seen",
            "parameters = h·d_model·d_k + h_kv·d_model·(d_k + d_v) + h·d_v·d_model"
            + (" + biases" if c.bias else "")
            + ": only W^K and W^V shrink",
            f"Q, the scores and the weights keep all h = {c.h} heads in every variant "
            f"(h·n² = {c.h * c.n * c.n:,} attention entries)",
        ]
        if c.h == 1:
            self.notes.append("with one query head, MHA and MQA are the same layer")
        elif not any(v.variant == "GQA" for v in self.variants):
            self.notes.append(
                f"h = {c.h} has no GQA: h_kv must divide h and lie strictly between 1 and h"
            )
        self.max_cache = max(v.kv_cache for v in self.variants)
        self.max_params = max(v.parameters for v in self.variants)
        self.cache_text = [self._cache_label(v) for v in self.variants]
        self.params_text = [f"{v.parameters:,}" for v in self.variants]
        cache_num_w = max(text_width(t, NUMBER_PX, True) for t in self.cache_text) + 12
        params_num_w = max(text_width(t, NUMBER_PX, True) for t in self.params_text) + 12
        # ---- geometry
        m = self.margin
        self.label_w = LABEL_W if not self.stacked else 110.0
        self.x_label = m
        self.x_diagram = self.x_label + self.label_w
        if self.stacked:  # one column: the cache bar above the parameters bar
            number_w = max(cache_num_w, params_num_w)
            room = width - 2 * m - self.label_w - GAP - number_w
            self.diagram_w = max(120.0, min(DIAGRAM_W, room * 0.5))
            self.x_cache = self.x_params = self.x_diagram + self.diagram_w + GAP
            self.cache_w = self.params_w = max(80.0, room - self.diagram_w)
            right = self.x_cache + self.cache_w + number_w
            self.headers = [
                (self.x_diagram, "query heads → K/V heads"),
                (self.x_cache, f"K/V cache at n = {c.n} (top) · parameters"),
            ]
        else:
            self.diagram_w, self.cache_w, self.params_w = DIAGRAM_W, CACHE_W, PARAMS_W
            self.x_cache = self.x_diagram + DIAGRAM_W + GAP
            self.x_params = self.x_cache + CACHE_W + cache_num_w + GAP
            right = self.x_params + PARAMS_W + params_num_w
            self.headers = [
                (self.x_diagram, "query heads (top) → the K/V head they read"),
                (self.x_cache, f"K/V cache for n = {c.n} tokens (numbers)"),
                (self.x_params, "parameters"),
            ]
        text_w = max(
            text_width(self.title, TITLE_PX, True),
            rich_width(self.subtitle, NOTE_PX),
            *(rich_width(t, NOTE_PX) for t in self.notes),
        )
        self.width = max(right, m + min(text_w, width - 2 * m)) + m
        self.text_w = self.width - 2 * m  # subtitle and notes wrap to it
        self.subtitle_y = m + TITLE_PX * 1.5
        self.subtitle_h = wrapped_height(self.subtitle, NOTE_PX, self.text_w)
        self.header_y = self.subtitle_y + self.subtitle_h + 18
        self.rows_y = self.header_y + HEAD_PX * 1.8 + 6
        self.notes_y = self.rows_y + len(self.variants) * ROW_H + 14
        self.note_h = [wrapped_height(t, NOTE_PX, self.text_w) for t in self.notes]
        self.height = self.notes_y + sum(self.note_h) + 4 * len(self.notes) + m

    def _cache_label(self, v: KvVariant) -> str:
        return f"{v.kv_cache:,} ({v.kv_cache_per_token:,} per token)"

    def row_y(self, k: int) -> float:
        return self.rows_y + k * ROW_H

    # ---------------------------------------------------------------- mouse ---------
    def hit(self, x: float, y: float):
        if self.margin <= x < self.width - self.margin and self.rows_y <= y:
            k = int((y - self.rows_y) // ROW_H)
            if k < len(self.variants):
                return VariantRow(k)
        return None

    def tooltip(self, item) -> str:
        v = self.variants[item.index]
        c = self.config
        mha = self.variants[0]
        this = " — this layer" if v.current else ""
        return (
            f"{v.label}{this}: {group_text(v, c.h)}.\n"
            f"K/V cache: {c.n} tokens × {v.h_kv}·({c.d_k}+{c.d_v}) = {v.kv_cache:,} numbers "
            f"({100 * v.kv_cache / mha.kv_cache:.0f}% of MHA's); parameters {v.parameters:,} "
            f"({100 * v.parameters / mha.parameters:.0f}% of MHA's)."
        )

    # -------------------------------------------------------------- painting --------
    def paint(self, painter, theme_name: str, colormap: str) -> None:
        from PySide6.QtCore import QPointF

        pal = theme.palette(theme_name)
        with page(painter, self, pal):
            m = self.margin
            draw_rich(painter, m, m, self.title, TITLE_PX, pal.text, True)
            draw_rich_wrapped(
                painter, m, self.subtitle_y, self.text_w, self.subtitle, NOTE_PX, pal.muted
            )
            edges = [x for x, _ in self.headers[1:]] + [self.width - m]
            for (x, text), stop in zip(self.headers, edges, strict=True):
                room = stop - x - 10  # a header shrinks rather than run into the next one
                px = min(HEAD_PX, HEAD_PX * room / max(1.0, rich_width(text, HEAD_PX, True)))
                draw_rich(painter, x, self.header_y, text, px, pal.text, True)
            painter.setPen(make_pen(pal.grid))
            line_y = self.rows_y - 4
            painter.drawLine(QPointF(m, line_y), QPointF(self.width - m, line_y))
            for k, v in enumerate(self.variants):
                self._paint_row(painter, pal, theme_name, k, v)
            y = self.notes_y
            for note, height in zip(self.notes, self.note_h, strict=True):
                draw_rich_wrapped(painter, m, y, self.text_w, note, NOTE_PX, pal.muted)
                y += height + 4

    def _paint_row(self, painter, pal, theme_name, k: int, v: KvVariant) -> None:
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QPen

        y = self.row_y(k)
        if v.current:
            inset = min(8.0, self.margin - 2)
            rect = QRectF(
                self.margin - inset, y + 2, self.width - 2 * self.margin + 2 * inset, ROW_H - 4
            )
            painter.setBrush(qcolor(pal.panel))
            pen = QPen(qcolor(pal.highlight))
            pen.setWidthF(2.0)
            painter.setPen(pen)
            painter.drawRoundedRect(rect, 6, 6)
        # label
        paint_text(
            painter, self.x_label, y + 10, self.label_w - 10, 26, v.variant, LABEL_PX + 3,
            pal.text, bold=True,
        )  # fmt: skip
        draw_rich(painter, self.x_label, y + 38, f"h_kv = {v.h_kv}", LABEL_PX, pal.muted)
        if v.current:
            draw_rich(painter, self.x_label, y + 58, "this layer", NOTE_PX, pal.text, True)
        self._paint_diagram(painter, pal, theme_name, y, v)
        # bars
        bar_h = 22.0 if not self.stacked else 18.0
        cache_y = y + (ROW_H - bar_h) / 2 if not self.stacked else y + 16
        params_y = cache_y if not self.stacked else y + 46
        for x, width, value, top, text, by, solid in (
            (self.x_cache, self.cache_w, v.kv_cache, self.max_cache, self.cache_text[k], cache_y,
             True),
            (self.x_params, self.params_w, v.parameters, self.max_params, self.params_text[k],
             params_y, not self.stacked),
        ):  # fmt: skip
            length = width * value / top if top else 0.0
            colour = qcolor(pal.text if v.current else pal.muted)
            if solid:
                painter.fillRect(QRectF(x, by, length, bar_h), colour)
            else:  # stacked: the parameters bar is an outline, so the two read apart
                pen = QPen(colour)
                pen.setWidthF(2.0)
                painter.setPen(pen)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(QRectF(x + 1, by + 1, max(0.0, length - 2), bar_h - 2))
            paint_text(
                painter, x + length + 6, by - 4, 400, bar_h + 8, text, NUMBER_PX, pal.text,
                bold=v.current,
            )  # fmt: skip

    def _paint_diagram(self, painter, pal, theme_name, y: float, v: KvVariant) -> None:
        from PySide6.QtCore import QLineF, QRectF
        from PySide6.QtGui import QPen

        h = self.config.h
        slot = self.diagram_w / h
        s = max(1.5, min(18.0, slot * 0.78))
        q_y, kv_y, box_h = y + 10, y + ROW_H - 32, 21.0
        tints = GROUP_TINTS.get(theme_name, GROUP_TINTS["light"])
        for g, heads in enumerate(v.groups(h)):
            gx0 = self.x_diagram + heads.start * slot
            gx1 = self.x_diagram + heads.stop * slot
            if v.h_kv < h:  # a band behind each group (MHA: every head is its own group)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(qcolor(tints[g % 2]))
                painter.drawRoundedRect(QRectF(gx0 + 1, q_y - 4, gx1 - gx0 - 2, ROW_H - 18), 4, 4)
            centre = (gx0 + gx1) / 2
            box_w = max(s, min(gx1 - gx0 - 4, 58.0))
            # fan of lines from the group's query heads to its K/V head
            pen = QPen(qcolor(pal.muted))
            pen.setWidthF(1.0 if slot >= 6 else 0.5)
            painter.setPen(pen)
            for i in heads:
                qx = self.x_diagram + (i + 0.5) * slot
                painter.drawLine(QLineF(qx, q_y + s, centre, kv_y))
            box = QRectF(centre - box_w / 2, kv_y, box_w, box_h)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(qcolor(pal.text))
            painter.drawRoundedRect(box, 3, 3)
            # the K/V head's name at the stage figures' label size (LABEL_PX)
            label = kv_name(g) if text_width(kv_name(g), LABEL_PX, True) < box_w - 2 else str(g)
            if text_width(label, LABEL_PX, True) < box_w - 2:
                paint_text(
                    painter, box.x(), box.y(), box.width(), box.height(), label, LABEL_PX,
                    pal.background, Qt.AlignmentFlag.AlignCenter, True,
                )  # fmt: skip
        for i in range(h):
            qx = self.x_diagram + (i + 0.5) * slot
            painter.fillRect(QRectF(qx - s / 2, q_y, s, s), qcolor(theme.head_color(i)))


def kv_cache_drawing(data, options: FigureOptions | None = None) -> KvCacheDrawing:
    """The figure for a StageData — `mha-gui export --view kv-cache`."""
    return KvCacheDrawing(data.config)


__all__ = ["KvCacheDrawing", "group_text", "kv_cache_drawing", "kv_name"]
