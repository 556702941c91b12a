"""A printable handout: one A4 page per stage with one header (stage number, title,
formula, shapes, the setting, a sentence to read out), the figure, and the stage's
matrices printed as numbers when small enough.

Everything is vector (QPdfWriter): the figure is the same scene as the PDF export,
scaled to the page width, without its own title block (the page header replaces it).
The handout is for printing, so it is always light: `export_to` refuses theme='dark'
with handout=True instead of silently ignoring it. `colormap` colours the figures.
"""

from __future__ import annotations

from mha_gui import theme
from mha_gui.engine.layer.numbers import NumberFormat, fixed_format, peak
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.export import figure
from mha_gui.export.latex import stage_matrices
from mha_gui.export.painter import painter_on, saved

PAGE_W, PAGE_H = 595.0, 842.0  # A4 in points
MARGIN = 42.0
TABLE_MAX_SIDE = 16  # print a matrix as numbers up to 16×16


def write_handout(
    path,
    session: Session,
    *,
    head=None,
    query=None,
    decimals: int = 2,
    colormap: str = theme.DEFAULT_COLORMAP,
    weights_range: str = "fixed",
) -> None:
    """Seven A4 pages (light theme: a handout is printed)."""
    from PySide6.QtCore import QRectF, Qt

    figure.ensure_app()
    pal = theme.palette("light")
    trace = session.run()
    writer = figure.pdf_writer(path, PAGE_W, PAGE_H, "Multi-head attention, stage by stage")
    with painter_on(writer, "PDF", path) as painter:
        unit = writer.resolution() / 72.0
        c = session.config
        for k, stage in enumerate(STAGES):
            if k:
                writer.newPage()
            painter.resetTransform()
            painter.scale(unit, unit)
            painter.fillRect(QRectF(0, 0, PAGE_W, PAGE_H), figure.qcolor(pal.background))
            scene = figure.build_scene(
                session, stage, head=head, query=query, trace=trace, weights_range=weights_range
            )
            y = MARGIN
            inner = PAGE_W - 2 * MARGIN
            figure.draw_rich(painter, MARGIN, y, scene.title, 18, pal.text, True)
            y += 28
            figure.draw_rich(painter, MARGIN, y, scene.formula, 14, pal.text)
            y += 22
            figure.draw_rich(painter, MARGIN, y, "shapes:  " + scene.shapes, 10, pal.text)
            y += 15
            figure.draw_rich(painter, MARGIN, y, scene.info, 8.5, pal.muted)
            y += 16
            y += figure.draw_rich_wrapped(painter, MARGIN, y, inner, stage.what, 10.5, pal.text)
            y += 10
            # matrices as numbers, flowed left to right while they fit the page
            mats = [
                (p.symbol.text, p.matrix, p.row_labels, p.col_labels)
                for p in stage_matrices(session, stage, head=head, trace=trace)
                if max(p.matrix.shape) <= TABLE_MAX_SIDE
            ]
            kind = "weights" if stage.name == "weights" else "values"
            # the figure without its title block, and the tables: both as large as the
            # page allows (the page is filled, no table below TABLE_MIN_PX)
            lay = figure.layout_scene(scene, vector=True, header=False)
            s, px = _page_plan(lay, mats, y, decimals, kind)
            with saved(painter):
                painter.translate(MARGIN + (inner - lay.width * s) / 2, y)
                painter.scale(s, s)
                figure.paint_scene(painter, lay, "light", colormap)
            y += lay.height * s + 14
            y = _tables(painter, mats, y, pal, decimals, kind, px)
            painter.setFont(figure.make_font(8))
            painter.setPen(figure.qcolor(pal.muted))
            painter.drawText(
                QRectF(MARGIN, PAGE_H - MARGIN + 8, inner, 14),
                Qt.AlignRight | Qt.AlignVCenter,
                f"mha-gui · n={c.n}, d_model={c.d_model}, h={c.h} · page {k + 1} of 7",
            )


def table_format(mats, decimals: int, kind: str = "values") -> NumberFormat:
    """`decimals` places; all tables of a page share one ×10^k when needed (fixed_format)."""
    return fixed_format(max((peak(m) for m in mats), default=0.0), decimals, kind)


TABLE_PX = (12.0, 11.0, 10.0, 9.0, 8.0, 7.0)  # the tables' text, largest first (points)
TABLE_MIN_PX = TABLE_PX[-1]
FIGURE_MIN_SHARE = 0.4  # the figure keeps at least this share of the page's height


def _page_plan(lay, mats, y: float, decimals: int, kind: str) -> tuple[float, float]:
    """(figure scale, table text size) that fill the page below `y`: the largest table
    text at which every table fits and the figure still gets FIGURE_MIN_SHARE of the
    page (or its full width), the figure then taking all the room the tables leave."""
    inner = PAGE_W - 2 * MARGIN
    bottom = PAGE_H - MARGIN - 6
    widest = inner / lay.width
    least = min(widest, PAGE_H * FIGURE_MIN_SHARE / lay.height)
    for px in TABLE_PX:
        tables = _tables(None, mats, 0.0, None, decimals, kind, px, measure=True)
        room = bottom - y - 14 - tables
        s = min(widest, room / lay.height)
        if s >= least * 0.999 and _fits(mats, decimals, kind, px):
            return s, px
    # too many numbers for one page: the figure takes up to half of it (as it always did),
    # the tables that fit follow at the smallest size
    return min(widest, PAGE_H * 0.5 / lay.height), TABLE_MIN_PX


def _fits(mats, decimals: int, kind: str, px: float) -> bool:
    """Every table is narrower than the page at text size `px`."""
    fmt = table_format([m[1] for m in mats], decimals, kind)
    return all(_table_box(m, rows, fmt, px)[0] <= PAGE_W - 2 * MARGIN for _s, m, rows, _c in mats)


def _table_box(m, rows, fmt: NumberFormat, px: float) -> tuple[float, float]:
    texts = [[fmt.cell(float(v)) for v in r] for r in m]
    cw = max(figure.text_width(t, px) for r in texts for t in r) + 6
    lw = max(figure.text_width(r, px) for r in rows) + 6
    return lw + cw * m.shape[1], px * 1.6 * (m.shape[0] + 1) + 4


def _tables(
    painter, mats, y: float, pal, decimals: int, kind: str = "values", px: float = TABLE_MIN_PX,
    measure: bool = False,
) -> float:  # fmt: skip
    """Flow the tables left to right from `y`; the y below them. `measure`: only the
    height they take (as if from y = 0, ignoring the page's foot)."""
    from PySide6.QtCore import QRectF, Qt

    if not mats:
        return y
    cell_h = px * 1.6
    x = MARGIN
    line_h = 0.0
    bottom = PAGE_H - MARGIN - 6
    skipped = 0
    fmt = table_format([m[1] for m in mats], decimals, kind)
    for sym, m, rows, _cols in mats:
        texts = [[fmt.cell(float(v)) for v in r] for r in m]
        title = sym + (f"  ({fmt.factor})" if fmt.factor else "")
        cw = max(figure.text_width(t, px) for r in texts for t in r) + 6
        lw = max(figure.text_width(r, px) for r in rows) + 6
        w = lw + cw * m.shape[1]
        h = cell_h * (m.shape[0] + 1) + 4
        if x + w > PAGE_W - MARGIN and x > MARGIN:
            x = MARGIN
            y += line_h + 10
            line_h = 0.0
        if measure:
            x += w + 18
            line_h = max(line_h, h)
            continue
        if y + h > bottom or w > PAGE_W - 2 * MARGIN:
            skipped += 1
            continue
        figure.draw_rich(painter, x, y, title, px + 2, pal.text, True)
        painter.setFont(figure.make_font(px))
        for i, r in enumerate(texts):
            yy = y + cell_h * (i + 1) + 2
            painter.setPen(figure.qcolor(pal.muted))
            painter.drawText(
                QRectF(x, yy, lw - 4, cell_h), Qt.AlignRight | Qt.AlignVCenter, rows[i][:12]
            )
            painter.setPen(figure.qcolor(pal.text))
            for j, t in enumerate(r):
                painter.drawText(
                    QRectF(x + lw + j * cw, yy, cw - 3, cell_h), Qt.AlignRight | Qt.AlignVCenter, t
                )
        x += w + 18
        line_h = max(line_h, h)
    y += line_h
    if measure:
        return y
    if skipped:
        painter.setFont(figure.make_font(8))
        painter.setPen(figure.qcolor(pal.muted))
        painter.drawText(
            QRectF(MARGIN, y + 4, PAGE_W - 2 * MARGIN, 12),
            Qt.AlignLeft | Qt.AlignVCenter,
            f"{skipped} more matrix(es) did not fit on this page: see the .tex or .npz export.",
        )
        y += 16
    return y
