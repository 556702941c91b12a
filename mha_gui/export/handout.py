"""A printable handout: one A4 page per stage with the figure, the formula, the shapes,
a sentence to read out, and the stage's matrices printed as numbers when small enough.

Everything is vector (QPdfWriter): the figure is the same scene as the PDF export,
scaled to the page width.
"""

from __future__ import annotations

import numpy as np

from mha_gui import theme
from mha_gui.engine.session import Session
from mha_gui.engine.stages import STAGES, formula_for, shapes_line
from mha_gui.engine.values import format_value
from mha_gui.export import figure
from mha_gui.export.latex import stage_matrices

PAGE_W, PAGE_H = 595.0, 842.0  # A4 in points
MARGIN = 42.0
TABLE_MAX_SIDE = 16  # print a matrix as numbers up to 16×16


def _plain_symbol(sym: str) -> str:
    """LaTeX symbol from latex.stage_matrices → figure rich-text notation."""
    return sym.replace("{", "").replace("}", "").replace(r"W_O^", "W_O").replace(" ", " ")


def write_handout(
    path,
    session: Session,
    *,
    head=None,
    query=None,
    theme_name: str = "light",
    decimals: int = 2,
) -> None:
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QPainter, QPen

    figure.ensure_app()
    pal = theme.palette(theme_name)
    trace = session.run()
    writer = figure.pdf_writer(path, PAGE_W, PAGE_H, "Multi-head attention, stage by stage")
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"could not write PDF to {path}")
    try:
        unit = writer.resolution() / 72.0
        c = session.config
        for k, stage in enumerate(STAGES):
            if k:
                writer.newPage()
            painter.resetTransform()
            painter.scale(unit, unit)
            painter.fillRect(QRectF(0, 0, PAGE_W, PAGE_H), figure._qcolor(pal.background))
            y = MARGIN
            inner = PAGE_W - 2 * MARGIN
            figure.draw_rich(
                painter, MARGIN, y, f"{stage.index + 1}/7  ·  {stage.title}", 18, pal.text, True
            )
            y += 30
            figure.draw_rich(painter, MARGIN, y, formula_for(stage, c), 14, pal.text)
            y += 22
            figure.draw_rich(painter, MARGIN, y, "shapes:  " + shapes_line(stage, c), 10, pal.text)
            y += 18
            painter.setFont(figure.make_font(10.5))
            painter.setPen(figure._qcolor(pal.muted))
            box = QRectF(MARGIN, y, inner, 40)
            painter.drawText(box, Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, stage.what)
            y += painter.boundingRect(box, Qt.AlignLeft | Qt.TextWordWrap, stage.what).height()
            y += 10
            # the figure, scaled to the page width, at most half the page height
            lay = figure.figure_layout(
                session, stage, head=head, query=query, vector=True, trace=trace
            )
            s = min(inner / lay.width, (PAGE_H * 0.5) / lay.height)
            painter.save()
            painter.translate(MARGIN + (inner - lay.width * s) / 2, y)
            painter.scale(s, s)
            figure.paint_scene(painter, lay, theme_name)
            painter.restore()
            y += lay.height * s + 14
            # matrices as numbers, flowed left to right while they fit the page
            mats = [
                m
                for m in stage_matrices(session, stage, head=head, trace=trace)
                if max(m[1].shape) <= TABLE_MAX_SIDE
            ]
            y = _tables(painter, mats, y, pal, decimals)
            painter.setFont(figure.make_font(8))
            painter.setPen(figure._qcolor(pal.muted))
            painter.drawText(
                QRectF(MARGIN, PAGE_H - MARGIN + 8, inner, 14),
                Qt.AlignRight | Qt.AlignVCenter,
                f"mha-gui · n={c.n}, d_model={c.d_model}, h={c.h} · page {k + 1} of 7",
            )
        del QPen
    finally:
        painter.end()


def _tables(painter, mats, y: float, pal, decimals: int) -> float:
    from PySide6.QtCore import QRectF, Qt

    if not mats:
        return y
    px = 7.0
    cell_h = px * 1.6
    x = MARGIN
    line_h = 0.0
    bottom = PAGE_H - MARGIN - 6
    skipped = 0
    for sym, m, rows, _cols in mats:
        texts = [
            [format_value(float(v), decimals) if np.isfinite(v) else "−∞" for v in r] for r in m
        ]
        cw = max(figure.text_width(t, px) for r in texts for t in r) + 6
        lw = max(figure.text_width(r, px) for r in rows) + 6
        w = lw + cw * m.shape[1]
        h = cell_h * (m.shape[0] + 1) + 4
        if x + w > PAGE_W - MARGIN and x > MARGIN:
            x = MARGIN
            y += line_h + 10
            line_h = 0.0
        if y + h > bottom or w > PAGE_W - 2 * MARGIN:
            skipped += 1
            continue
        figure.draw_rich(painter, x, y, _plain_symbol(sym), px + 2, pal.text, True)
        painter.setFont(figure.make_font(px))
        for i, r in enumerate(texts):
            yy = y + cell_h * (i + 1) + 2
            painter.setPen(figure._qcolor(pal.muted))
            painter.drawText(
                QRectF(x, yy, lw - 4, cell_h), Qt.AlignRight | Qt.AlignVCenter, rows[i][:12]
            )
            painter.setPen(figure._qcolor(pal.text))
            for j, t in enumerate(r):
                painter.drawText(
                    QRectF(x + lw + j * cw, yy, cw - 3, cell_h), Qt.AlignRight | Qt.AlignVCenter, t
                )
        x += w + 18
        line_h = max(line_h, h)
    y += line_h
    if skipped:
        painter.setFont(figure.make_font(8))
        painter.setPen(figure._qcolor(pal.muted))
        painter.drawText(
            QRectF(MARGIN, y + 4, PAGE_W - 2 * MARGIN, 12),
            Qt.AlignLeft | Qt.AlignVCenter,
            f"{skipped} more matrix(es) did not fit on this page: see the .tex or .npz export.",
        )
        y += 16
    return y
