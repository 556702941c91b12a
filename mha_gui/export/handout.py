"""A printable handout: one A4 page per stage (and, for a large layer, pages that
continue its tables: no number is printed below 9 pt) with one header (stage number, title,
formula, shapes, the setting, a sentence to read out), the figure, the stage's
matrices printed as numbers when small enough, and in the room left a worked example:
the followed query token's cells of the stage, each with the explanation the window
gives on hover (engine/teaching/worked_example.py), which paper cannot show otherwise.

Everything is vector (QPdfWriter): the figure is the same scene as the PDF export,
scaled to the page width, without its own title block (the page header replaces it).
The handout is for printing, so it is always light: `export_to` refuses theme='dark'
with handout=True instead of silently ignoring it. `colormap` colours the figures.
"""

from __future__ import annotations

import math

from mha_gui import theme
from mha_gui.engine.layer.numbers import NumberFormat, fixed_format, peak
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.teaching.worked_example import worked_example
from mha_gui.export import figure
from mha_gui.export.latex import stage_matrices
from mha_gui.export.layout import LABEL_PX, side_by_side
from mha_gui.export.painter import painter_on, saved

PAGE_W, PAGE_H = 595.0, 842.0  # A4 in points
MARGIN = 42.0
TABLE_MAX_SIDE = 16  # print a matrix as numbers up to 16×16
INFO_PT = 10.0  # the settings line: its subscripts print at ~7 pt


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
    """A4 pages, one per stage and its continuation pages (light: a handout is printed)."""
    from PySide6.QtCore import QRectF

    figure.ensure_app()
    pal = theme.palette("light")
    trace = session.run()
    framed = head if head is not None else session.view.head
    followed = query if query is not None else session.view.query
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
            # the settings at the body's size, wrapped: at 8.5 pt their subscripts
            # (d_model, d_k) printed at ~5 pt
            y += figure.draw_rich_wrapped(painter, MARGIN, y, inner, scene.info, INFO_PT, pal.muted)
            y += 6
            y += figure.draw_rich_wrapped(painter, MARGIN, y, inner, stage.what, 10.5, pal.text)
            y += 10
            # matrices as numbers, flowed left to right while they fit the page
            mats, kind = page_tables(session, stage, head, trace)
            # the figure without its title block, and the tables: both as large as the
            # page allows (no table below TABLE_MIN_PX); tables that do not fit below
            # the figure continue on pages of their own
            lay, s, px, together = figure_plan(scene, mats, y, decimals, kind)
            with saved(painter):
                painter.translate(MARGIN + (inner - lay.width * s) / 2, y)
                painter.scale(s, s)
                figure.paint_scene(painter, lay, "light", colormap)
            y += lay.height * s + 14
            fmt = table_format([m[1] for m in mats], decimals, kind)
            if not together:  # what fits below the figure, then pages of their own
                px = _continued_px(mats, fmt)
            y, rest = _tables(painter, _pieces(mats, fmt, px), y, pal, fmt, px)
            if not rest:  # the head the figure frames, the query given or the session's
                example = worked_example(session, stage, framed, followed, trace)
                draw_worked_example(painter, example, y + 16, pal)
            while rest:
                _footer(painter, pal, c, stage)
                writer.newPage()
                painter.fillRect(QRectF(0, 0, PAGE_W, PAGE_H), figure.qcolor(pal.background))
                figure.draw_rich(
                    painter, MARGIN, MARGIN, f"Stage {stage.number}, continued: its numbers",
                    14, pal.text, True,
                )  # fmt: skip
                left = len(rest)
                y, rest = _tables(painter, rest, MARGIN + 30, pal, fmt, px)
                if len(rest) == left:  # taller than a page: cannot happen up to 16 rows
                    break
            _footer(painter, pal, c, stage)


def page_tables(session: Session, stage, head, trace) -> tuple[list, str]:
    """The stage's matrices small enough to print as numbers (symbol, matrix, row and
    column labels), and the kind of numbers they hold ("weights" or "values")."""
    mats = [
        (p.symbol.text, p.matrix, p.row_labels, p.col_labels)
        for p in stage_matrices(session, stage, head=head, trace=trace)
        if max(p.matrix.shape) <= TABLE_MAX_SIDE
    ]
    return mats, "weights" if stage.name == "weights" else "values"


WORKED_PX = 11.0  # the worked example's text (points)


def _worked_lines(example) -> list[tuple[float, str]]:
    """(indent, text) of each printed line: an explanation's second line (the dot product
    written out) indented under its first; the gap before a note kept (rich text would
    fold three spaces into one)."""
    out = []
    for text in example.lines:
        first, *more = text.split("\n")
        out.append((14.0, first.replace("   (", "\u2003(")))
        out.extend((28.0, line.strip()) for line in more)
    return out


def draw_worked_example(painter, example, y: float, pal) -> float:
    """A worked example (engine/teaching/worked_example.py) from `y` down, as many of its
    lines as the page has room for (none when not even the first fits); returns the y
    below it. The stage handout's pages and the lesson handout's use it."""
    from mha_gui.export.text import wrapped_height

    lines = [
        (indent, text, wrapped_height(text, WORKED_PX, PAGE_W - 2 * MARGIN - indent))
        for indent, text in _worked_lines(example)
    ]
    head_h = WORKED_PX * 1.3 * 1.35 + 4
    if not lines or y + head_h + lines[0][2] > BOTTOM:
        return y
    figure.draw_rich(painter, MARGIN, y, example.heading, WORKED_PX * 1.3, pal.text, True)
    y += head_h
    for indent, text, h in lines:
        if y + h > BOTTOM:
            break
        width = PAGE_W - 2 * MARGIN - indent
        color = pal.text if indent < 20 else pal.muted
        figure.draw_rich_wrapped(painter, MARGIN + indent, y, width, text, WORKED_PX, color)
        y += h + 3
    return y


def _footer(painter, pal, c, stage) -> None:
    from PySide6.QtCore import QRectF, Qt

    painter.setFont(figure.make_font(8))
    painter.setPen(figure.qcolor(pal.muted))
    painter.drawText(
        QRectF(MARGIN, PAGE_H - MARGIN + 8, PAGE_W - 2 * MARGIN, 14),
        Qt.AlignRight | Qt.AlignVCenter,
        f"mha-gui · n={c.n}, d_model={c.d_model}, h={c.h} · stage {stage.number} of 7",
    )


def table_format(mats, decimals: int, kind: str = "values") -> NumberFormat:
    """`decimals` places; all tables of a page share one ×10^k when needed (fixed_format)."""
    return fixed_format(max((peak(m) for m in mats), default=0.0), decimals, kind)


TABLE_PX = (14.0, 13.0, 12.0, 11.0, 10.0, 9.0)  # the tables' text, largest first (points)
TABLE_MIN_PX = TABLE_PX[-1]  # read on paper without a magnifier
TABLE_READ_PX = 10.0  # read comfortably: what a small layer's tables keep at least
FIGURE_MIN_SHARE = 0.4  # the figure keeps at least this share of the page's height
BOTTOM = PAGE_H - MARGIN - 6  # where the tables end


# the figure's widths tried on a page: narrower, it has smaller cells and larger text
FIGURE_WIDTHS = (1600.0, 1200.0, 960.0, 760.0)


def figure_plan(scene, mats, y: float, decimals: int, kind: str):
    """(layout, figure scale, table text size, whether the tables share the page) of the
    figure width, its rows in one column or side by side, that prints the page's
    smallest text largest: the figure's labels (LABEL_PX × scale) or the tables' text,
    whichever is smaller; tables on the figure's page first (then the larger figure)."""
    best, best_key = None, None
    heights = table_heights(mats, decimals, kind)  # the same for every figure tried
    for width in FIGURE_WIDTHS:
        laid = figure.layout_scene(scene, vector=True, header=False, max_width=width)
        # a tall figure's rows also side by side (the projections' Q, K and V)
        for cols in range(1, len(scene.rows) + 1):
            lay = side_by_side(laid, cols)
            s, px, together = _page_plan(lay, mats, y, decimals, kind, heights)
            key = (together, round(min(s * LABEL_PX, px if mats else math.inf), 2), s)
            if best_key is None or key > best_key:
                best, best_key = (lay, s, px, together), key
    return best


def table_heights(mats, decimals: int, kind: str) -> list[tuple[float, float]]:
    """(text size, height) of the page's tables printed at each of TABLE_PX, largest
    first: measured once for all the figure layouts a page plan tries."""
    figure.ensure_app()  # text is measured with Qt's fonts
    fmt = table_format([m[1] for m in mats], decimals, kind)
    return [
        (px, _tables(None, _pieces(mats, fmt, px), 0.0, None, fmt, px, measure=True)[0])
        for px in TABLE_PX
    ]


def _page_plan(
    lay, mats, y: float, decimals: int, kind: str, heights=None
) -> tuple[float, float, bool]:
    """(figure scale, table text size, whether the tables share the figure's page) that
    fill the page below `y`: of the table sizes at which every table fits with the figure
    keeping FIGURE_MIN_SHARE of the page (or its full width), the one — TABLE_READ_PX or
    more where it can be — that prints the smaller of the tables' text and the figure's
    labels largest, the figure then taking all the room the tables leave. When the tables
    cannot fit so, the figure takes the page and they follow on pages of their own.
    `heights`: the tables' `table_heights`, when the caller has them."""
    inner = PAGE_W - 2 * MARGIN
    widest = inner / lay.width
    least = min(widest, PAGE_H * FIGURE_MIN_SHARE / lay.height)
    best = None
    for px, tables in heights or table_heights(mats, decimals, kind):
        room = BOTTOM - y - 14 - tables
        s = min(widest, room / lay.height)
        if s < least * 0.999:
            continue  # the tables leave the figure too little room at this size
        # tables at TABLE_READ_PX or more where they can be, then the smaller of the
        # figure's labels and the tables' text as large as it gets: a tall figure (the
        # toy's projections, three rows) printed its labels at ~5 pt beside 14 pt
        # tables; smaller tables give it the height it needs
        key = (px >= TABLE_READ_PX, round(min(s * LABEL_PX, px), 2), px)
        if best is None or key > best[0]:
            best = (key, s, px)
    if best is not None:
        return best[1], best[2], True
    return min(widest, (BOTTOM - y - 14) / lay.height), TABLE_MIN_PX, False


def _continued_px(mats, fmt: NumberFormat) -> float:
    """The largest text at which the tables fit one page of their own (else the least:
    they then take more pages)."""
    for px in TABLE_PX:
        height = _tables(None, _pieces(mats, fmt, px), 0.0, None, fmt, px, measure=True)[0]
        if height <= BOTTOM - MARGIN - 30:
            return px
    return TABLE_MIN_PX


def _table_box(m, rows, fmt: NumberFormat, px: float) -> tuple[float, float, float]:
    """(row-label width, column width, height) of a table at text size px."""
    texts = [fmt.cell(float(v)) for r in m for v in r]
    cw = max(figure.text_width(t, px) for t in texts) + 6
    lw = max(figure.text_width(r, px) for r in rows) + 6
    return lw, cw, px * 1.6 * (m.shape[0] + 1) + 4


def _pieces(mats, fmt: NumberFormat, px: float) -> list:
    """The tables as printed at px: one wider than the page is cut into column blocks
    (`W_O[:, 0:8]`, `W_O[:, 8:16]`), each as wide as the page allows."""
    inner = PAGE_W - 2 * MARGIN
    out = []
    for sym, m, rows, cols in mats:
        lw, cw, _h = _table_box(m, rows, fmt, px)
        per = max(1, int((inner - lw) // cw))
        per = math.ceil(m.shape[1] / math.ceil(m.shape[1] / per))  # even blocks: 8 + 8
        if per >= m.shape[1]:
            out.append((sym, m, rows, cols))
            continue
        for a in range(0, m.shape[1], per):
            b = min(a + per, m.shape[1])
            out.append((f"{sym}[:, {a}:{b}]", m[:, a:b], rows, cols[a:b]))
    return out


def _tables(
    painter, mats, y: float, pal, fmt: NumberFormat, px: float = TABLE_MIN_PX,
    measure: bool = False,
) -> tuple[float, list]:  # fmt: skip
    """Flow the tables left to right from `y`: (the y below them, the tables that did not
    fit above the page's foot, in order). `measure`: only the height they take (as if
    from y = 0, ignoring the page's foot)."""
    from PySide6.QtCore import QRectF, Qt

    if not mats:
        return y, []
    cell_h = px * 1.6
    x = MARGIN
    line_h = 0.0
    for k, (sym, m, rows, _cols) in enumerate(mats):
        texts = [[fmt.cell(float(v)) for v in r] for r in m]
        title = sym + (f"  ({fmt.factor})" if fmt.factor else "")
        lw, cw, h = _table_box(m, rows, fmt, px)
        w = lw + cw * m.shape[1]
        if x + w > PAGE_W - MARGIN and x > MARGIN:
            x = MARGIN
            y += line_h + 10
            line_h = 0.0
        if measure:
            x += w + 18
            line_h = max(line_h, h)
            continue
        if y + h > BOTTOM:
            return y, list(mats[k:])
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
    return y + line_h, []
