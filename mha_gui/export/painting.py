"""Painting a laid-out figure on any QPainter (image, SVG generator, PDF writer).

Heatmap cells are vector rectangles and every label is text, except panels the layout
marked `raster` (see figure.py), which are one nearest-neighbour image each.
"""

from __future__ import annotations

import numpy as np

from mha_gui import theme
from mha_gui.engine.layer.numbers import sub
from mha_gui.export.layout import (
    BAR_WIDTH,
    CAPTION_PX,
    INFO_PX,
    LABEL_PX,
    MARGIN,
    PANEL_TITLE_PX,
    SHAPES_PX,
    TICK_PX,
    TITLE_PX,
    BarGeom,
    Layout,
    PanelGeom,
    _tick_values,
    bar_label,
)
from mha_gui.export.painter import saved
from mha_gui.export.primitives import make_pen
from mha_gui.export.scene import Panel, PanelRow
from mha_gui.export.text import draw_rich, elide, make_font, qcolor, rich_width, text_width


def _matrix_image(p: Panel, levels, lut, pal, upscale: int = 1):
    from PySide6.QtGui import QImage

    rgb = theme.colors_for(p.display, levels, lut).astype(np.uint8)
    if p.blocked is not None:
        rgb[p.blocked] = [int(pal.blocked[i : i + 2], 16) for i in (1, 3, 5)]
    if upscale > 1:
        rgb = np.repeat(np.repeat(rgb, upscale, axis=0), upscale, axis=1)
    rgb = np.ascontiguousarray(rgb)
    h, w = rgb.shape[:2]
    img = QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888)
    return img.copy()  # own the pixels


def paint_scene(
    painter, layout: Layout, theme_name: str = "light", colormap: str = theme.DEFAULT_COLORMAP
) -> None:
    """Paint the whole figure in logical units on an already scaled painter.

    `colormap` is one of `theme.COLORMAP_CHOICES` (default blue–white–red)."""
    from PySide6.QtCore import QRectF, Qt

    pal = theme.palette(theme_name)
    sc = layout.scene
    with saved(painter):
        painter.setRenderHint(painter.RenderHint.TextAntialiasing, True)
        painter.fillRect(QRectF(0, 0, layout.width, layout.height), qcolor(pal.background))

        def text(x, y, w, h, s, px, color, bold=False, align=None):
            painter.setFont(make_font(px, bold))
            painter.setPen(qcolor(color))
            painter.drawText(
                QRectF(x, y, w, h),
                align if align is not None else (Qt.AlignLeft | Qt.AlignVCenter),
                s,
            )

        # ---- title block: "Stage k · Title   formula", shapes, then the setting
        y = layout.title_y
        inner_w = layout.width - 2 * MARGIN
        if layout.header:
            draw_rich(painter, MARGIN, y, sc.title, TITLE_PX, pal.text, True)
            fx = MARGIN + rich_width(sc.title, TITLE_PX, True) + 28
            draw_rich(painter, fx, y, sc.formula, TITLE_PX, pal.text)
            y += TITLE_PX * 1.5
            draw_rich(painter, MARGIN, y, "shapes:  " + sc.shapes, SHAPES_PX, pal.text)
            y += SHAPES_PX * 1.5
            draw_rich(painter, MARGIN, y, sc.info, INFO_PX, pal.muted)

        for cx, cy, caption in layout.captions:
            draw_rich(painter, cx, cy, caption, CAPTION_PX, pal.muted)

        row_of = {id(p): r for r in sc.rows for p in r.panels}
        for g in layout.panels:
            row = row_of[id(g.panel)]
            _paint_panel(painter, g, row, pal, layout.vector, colormap)

        for b in layout.bars:
            _paint_bar(painter, b, pal, colormap)

        if layout.legend_y is not None:
            sw = 18.0
            x0 = MARGIN
            r = QRectF(x0, layout.legend_y + 4, sw, sw)
            _paint_blocked_cell(painter, r, pal, True)
            text(
                x0 + sw + 8,
                layout.legend_y,
                inner_w,
                sw + 8,
                "blocked by the mask: score −∞, weight 0",
                LABEL_PX,
                pal.text,
            )


def _paint_blocked_cell(painter, r, pal, cross: bool) -> None:
    from PySide6.QtCore import QLineF, Qt

    painter.fillRect(r, qcolor(pal.blocked))
    side = min(r.width(), r.height())
    if side < 6:
        return
    with saved(painter):
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        painter.setPen(make_pen(pal.hatch, max(0.6, side * 0.03)))
        # three diagonal hatch lines (↗), clipped by construction to the square cell
        x0, y0, s = r.left(), r.top(), side
        for f in (0.25, 0.5, 0.75):
            painter.drawLine(QLineF(x0, y0 + s * f, x0 + s * f, y0))
            painter.drawLine(QLineF(x0 + s * f, y0 + s, x0 + s, y0 + s * f))
        painter.drawLine(QLineF(x0, y0 + s, x0 + s, y0))
        if cross and side >= 14:
            painter.setFont(make_font(min(side * 0.45, 20)))
            painter.setPen(qcolor(pal.text))
            painter.drawText(r, Qt.AlignCenter, "×")


def _paint_panel(
    painter, g: PanelGeom, row: PanelRow, pal, vector: bool, colormap=theme.DEFAULT_COLORMAP
) -> None:
    from PySide6.QtCore import QPointF, QRectF, Qt

    p = g.panel
    nr, nc = p.matrix.shape
    cell = g.cell
    lut = theme.colormap_for(row.kind, colormap)
    levels = row.levels

    # inspected-head frame
    if p.marked and p.head is not None:
        fx, fy, fw, fh = g.frame
        with saved(painter):
            painter.setRenderHint(painter.RenderHint.Antialiasing, True)
            painter.setPen(make_pen(theme.head_color(p.head), 3.0))
            painter.setBrush(qcolor(pal.panel))
            painter.drawRoundedRect(QRectF(fx, fy, fw, fh), 8, 8)

    # title with head colour swatch
    tx = g.x
    ty = g.title_y
    if p.head is not None:
        painter.fillRect(QRectF(tx, ty + 5, 12, 12), qcolor(theme.head_color(p.head)))
        tx += 18
    # rich text, so "W_O[1]" gets its subscript; vertically centred on the swatch
    draw_rich(painter, tx, ty + 1, p.title, PANEL_TITLE_PX, pal.text, True)

    heat = QRectF(g.x, g.y, nc * cell, nr * cell)
    label_font = make_font(g.label_px)

    # column blocks (concat): a strip per head above the column labels
    if p.col_blocks:
        by = g.y - g.col_label_h - 22
        for start, stop, hd in p.col_blocks:
            r = QRectF(g.x + start * cell, by, (stop - start) * cell, 18)
            painter.fillRect(r, qcolor(theme.head_color(hd)))
            name = f"{p.block_symbol}{sub(hd)}"
            if text_width(name, 12, True) < r.width() - 2:
                painter.setFont(make_font(12, True))
                painter.setPen(qcolor("#ffffff"))
                painter.drawText(r, Qt.AlignCenter, name)

    # column labels
    painter.setFont(label_font)
    painter.setPen(qcolor(pal.muted))
    for j in range(0, nc, g.col_step):
        s = p.col_labels[j]
        cx = g.x + (j + 0.5) * cell
        if g.col_rotated:
            with saved(painter):
                painter.translate(QPointF(cx, g.y - 4))
                painter.rotate(-90)
                painter.drawText(
                    QRectF(0, -g.label_px * 0.7, g.col_label_h - 6, g.label_px * 1.4),
                    Qt.AlignLeft | Qt.AlignVCenter,
                    elide(s, g.label_px, g.col_label_h - 6),
                )
        else:
            painter.drawText(
                QRectF(
                    cx - cell * g.col_step / 2,
                    g.y - g.col_label_h,
                    cell * g.col_step,
                    g.col_label_h - 4,
                ),
                Qt.AlignHCenter | Qt.AlignBottom,
                s,
            )

    # row labels
    if g.show_row_labels:
        gutter_w = 150.0
        for i in range(0, nr, g.row_step):
            bold = p.query_row == i
            painter.setFont(make_font(g.label_px, bold))
            painter.setPen(qcolor(pal.text if bold else pal.muted))
            painter.drawText(
                QRectF(
                    g.x - gutter_w - 8,
                    g.y + i * cell + cell / 2 - g.label_px,
                    gutter_w,
                    g.label_px * 2,
                ),
                Qt.AlignRight | Qt.AlignVCenter,
                elide(p.row_labels[i], g.label_px, gutter_w),
            )

    # cells
    rgb = theme.colors_for(p.display, levels, lut)
    blocked = p.blocked if p.blocked is not None else np.zeros(p.matrix.shape, bool)
    if g.raster:
        device_cell = cell * painter.transform().m11()
        if vector:
            up = max(1, min(8, int(512 // max(nr, nc))))
            img = _matrix_image(p, levels, lut, pal, up)
        else:
            img = _matrix_image(p, levels, lut, pal)
        with saved(painter):
            painter.setRenderHint(painter.RenderHint.SmoothPixmapTransform, device_cell < 1.0)
            painter.drawImage(heat, img)
    else:
        with saved(painter):
            painter.setRenderHint(painter.RenderHint.Antialiasing, False)
            painter.setPen(Qt.NoPen)
            for i in range(nr):
                for j in range(nc):
                    r = QRectF(g.x + j * cell, g.y + i * cell, cell, cell)
                    if blocked[i, j]:
                        _paint_blocked_cell(painter, r, pal, g.value_px > 0 or cell >= 14)
                    else:
                        painter.fillRect(r, qcolor(rgb[i, j]))
        if cell >= 12:  # thin separators make small matrices read like a table
            with saved(painter):
                painter.setPen(make_pen(pal.background))
                for i in range(1, nr):
                    yy = g.y + i * cell
                    painter.drawLine(QPointF(g.x, yy), QPointF(g.x + nc * cell, yy))
                for j in range(1, nc):
                    xx = g.x + j * cell
                    painter.drawLine(QPointF(xx, g.y), QPointF(xx, g.y + nr * cell))
        if g.value_px > 0:
            fmt = g.fmt or row.fmt
            painter.setFont(make_font(g.value_px))
            for i in range(nr):
                for j in range(nc):
                    if blocked[i, j]:
                        continue
                    r = QRectF(g.x + j * cell, g.y + i * cell, cell, cell)
                    painter.setPen(qcolor(theme.text_color_on(rgb[i, j])))
                    painter.drawText(r, Qt.AlignCenter, fmt.cell(float(p.matrix[i, j])))

    # a switched-off head: its panel (or its block of H) greyed and hatched, with "off"
    if p.off:
        _paint_off(painter, heat, pal)
    for start, stop, hd in p.col_blocks:
        if hd in p.off_blocks:
            _paint_off(
                painter, QRectF(g.x + start * cell, g.y, (stop - start) * cell, nr * cell), pal
            )

    # column-block separators (concat) and marked block
    if p.col_blocks:
        with saved(painter):
            painter.setPen(make_pen(pal.background, 3.0))
            for start, _stop, _hd in p.col_blocks[1:]:
                xx = g.x + start * cell
                painter.drawLine(
                    QPointF(xx, g.y - g.col_label_h - 22), QPointF(xx, g.y + nr * cell)
                )
            if p.marked_block is not None and len(p.col_blocks) > 1:
                start, stop, hd = p.col_blocks[p.marked_block]
                painter.setPen(make_pen(theme.head_color(hd), 3.0))
                painter.setBrush(Qt.NoBrush)
                painter.drawRect(
                    QRectF(
                        g.x + start * cell,
                        g.y - g.col_label_h - 22,
                        (stop - start) * cell,
                        nr * cell + g.col_label_h + 22,
                    )
                )

    # outline
    with saved(painter):
        painter.setPen(make_pen(pal.grid))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(heat)
        # selected query row
        if p.query_row is not None and 0 <= p.query_row < nr:
            painter.setPen(make_pen(pal.highlight, max(2.0, min(3.5, cell * 0.12))))
            painter.drawRect(
                QRectF(g.x - 1, g.y + p.query_row * cell - 1, nc * cell + 2, max(cell, 2.0) + 2)
            )


def _paint_off(painter, r, pal) -> None:
    """A switched-off head's cells: veiled in the blocked grey, hatched (↗ every 10
    units, clipped to the panel) and labelled "off" in the middle, so it reads as off
    on paper and in grey print as it does in the window."""
    from PySide6.QtCore import QLineF, QRectF, Qt

    with saved(painter):
        painter.setClipRect(r)
        veil = qcolor(pal.blocked)
        veil.setAlpha(190)
        painter.fillRect(r, veil)
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        painter.setPen(make_pen(pal.hatch, 1.0))
        step = 10.0
        k = 0.0
        while k < r.width() + r.height():
            painter.drawLine(QLineF(r.left() + k, r.bottom(), r.left() + k - r.height(), r.top()))
            k += step
        px = max(9.0, min(22.0, r.height() * 0.3, r.width() * 0.3))
        painter.setFont(make_font(px, True))
        w = text_width("off", px, True) + px
        tag = QRectF(r.center().x() - w / 2, r.center().y() - px * 0.8, w, px * 1.6)
        painter.fillRect(tag, qcolor(pal.panel))
        painter.setPen(qcolor(pal.text))
        painter.drawText(tag, Qt.AlignCenter, "off")


def _paint_bar(painter, b: BarGeom, pal, colormap=theme.DEFAULT_COLORMAP) -> None:
    from PySide6.QtCore import QPointF, QRectF, Qt

    row = b.row
    lut = theme.colormap_for(row.kind, colormap)
    lo, hi = row.levels
    steps = 64
    h = b.h
    for k in range(steps):
        # top = high values
        v0 = hi - (hi - lo) * (k + 0.5) / steps
        rgb = theme.colors_for(np.array([v0]), row.levels, lut)[0]
        painter.fillRect(QRectF(b.x, b.y + h * k / steps, BAR_WIDTH, h / steps + 0.5), qcolor(rgb))
    with saved(painter):
        painter.setPen(make_pen(pal.grid))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(QRectF(b.x, b.y, BAR_WIDTH, h))
        painter.setFont(make_font(TICK_PX))
        for v in _tick_values(row.kind, row.levels):
            yy = b.y + h * (hi - v) / (hi - lo)
            painter.setPen(qcolor(pal.muted))
            painter.drawLine(QPointF(b.x + BAR_WIDTH, yy), QPointF(b.x + BAR_WIDTH + 4, yy))
            painter.setPen(qcolor(pal.text))
            painter.drawText(
                QRectF(b.x + BAR_WIDTH + 7, yy - TICK_PX, 70, TICK_PX * 2),
                Qt.AlignLeft | Qt.AlignVCenter,
                row.fmt.tick(v),
            )
        draw_rich(painter, b.x, b.y - TICK_PX * 2.7, bar_label(row), TICK_PX, pal.muted, True)
