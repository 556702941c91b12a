"""Printable worksheets (issue 10): a stage's matrices with K empty boxes to fill in by
hand, the operands a student needs, the formula, and an answer key on its own page.

    write_worksheet("ws.pdf", session, "weights", blanks=4, seed=7, students=3)

One worksheet per seed S, S+1, … (each its own exercise: other cells, same layer); every
question page first, then one answer-key page per worksheet, so a teacher can print the
questions and keep the keys. Same seed → same cells → same text. The plan
(`plan_worksheets`, export/worksheet_plan.py) is Qt-free and checks everything before a
page is painted; this module paints the pages: vector text and lines on A4 (QPdfWriter),
light only (a worksheet is printed).
"""

from __future__ import annotations

import math

from mha_gui import theme
from mha_gui.engine.layer.session import Session, atomic_write
from mha_gui.export.painter import painter_on, saved
from mha_gui.export.worksheet_plan import Sheet, Table, plan_worksheets

PAGE_W, PAGE_H = 595.0, 842.0  # A4 in points
MARGIN = 42.0
FONT_PX = 10.0  # table text, in points (a table too wide for the page is cut in blocks)
MIN_SCALE = 0.9  # no table printed below 9 pt: a wider one prints in column blocks
ROW_H = 19.0
BOX_MIN_W = 50.0  # room to write a number by hand
# Tables are drawn as large as the page allows, up to 2 × FONT_PX (a small layer's
# question then fills its page at ~16 pt instead of leaving half of it empty).
SCALES = (2.0, 1.8, 1.6, 1.45, 1.3, 1.15, 1.0)
HEADING_PX = 10.5


def write_worksheet(path, session: Session, stage, blanks: int, seed: int, students: int = 1):
    """Plan (and check) the worksheets, then write the PDF atomically; returns the path."""
    sheets = plan_worksheets(session, stage, blanks, seed, students)
    return atomic_write(path, lambda tmp: paint_worksheets(tmp, sheets))


def paint_worksheets(path, sheets: list[Sheet]) -> None:
    """Question pages of every sheet, then one answer-key page per sheet."""
    from PySide6.QtCore import QMarginsF
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

    from mha_gui.export.text import ensure_app

    ensure_app()
    writer = QPdfWriter(str(path))
    writer.setResolution(600)
    writer.setCreator("mha-gui")
    writer.setTitle("mha-gui worksheet")
    writer.setPageLayout(
        QPageLayout(
            QPageSize(QPageSize.PageSizeId.A4),
            QPageLayout.Orientation.Portrait,
            QMarginsF(0, 0, 0, 0),
        )
    )
    with painter_on(writer, "PDF", path) as painter:
        pages = _Pages(writer, painter, len(sheets))
        for sheet in sheets:
            pages.question(sheet)
        for sheet in sheets:
            pages.answers(sheet)


class _Pages:
    """A cursor down A4 pages: headers, wrapped text, tables flowed left to right."""

    def __init__(self, writer, painter, count: int):
        self.writer, self.p = writer, painter
        self.pal = theme.palette("light")
        self.count = count
        self.first = True
        self.y = MARGIN
        self.footer = ""

    # -- page handling
    def new_page(self, footer: str) -> None:
        if not self.first:
            self.writer.newPage()
        self.first = False
        self.p.resetTransform()
        unit = self.writer.resolution() / 72.0
        self.p.scale(unit, unit)
        self.y = MARGIN
        self.footer = footer
        self._footer()

    def _footer(self) -> None:
        from PySide6.QtCore import QRectF, Qt

        from mha_gui.export.text import make_font, qcolor

        self.p.setFont(make_font(7.5))
        self.p.setPen(qcolor(self.pal.muted))
        self.p.drawText(
            QRectF(MARGIN, PAGE_H - MARGIN + 10, PAGE_W - 2 * MARGIN, 12),
            Qt.AlignRight | Qt.AlignVCenter,
            self.footer,
        )

    def room(self, height: float, again: str) -> None:
        """Start a new page (with a short `again` header) unless `height` still fits."""
        if self.y + height > PAGE_H - MARGIN:
            self.new_page(self.footer)
            self.text(again, 9, muted=True)
            self.y += 4

    # -- text
    def text(self, text: str, px: float, bold=False, muted=False, gap: float = 4) -> None:
        """Rich text (W_i^Q gets its sub/superscripts): bold on one line, else wrapped."""
        from mha_gui.export.text import draw_rich, draw_rich_wrapped

        color = self.pal.muted if muted else self.pal.text
        if bold:
            draw_rich(self.p, MARGIN, self.y, text, px, color, True)
            h = px * 1.35
        else:
            h = draw_rich_wrapped(self.p, MARGIN, self.y, PAGE_W - 2 * MARGIN, text, px, color)
        self.y += h + gap

    def working(self, text: str, px: float, gap: float = 4) -> None:
        """The worked solution, typeset as the window's hint is (`e^0.707` and
        `Σ_j e^S_1[2,j]` get their exponents and indices: engine/panels/notation.py), indented."""
        from mha_gui.export.text import draw_rich_wrapped

        width = PAGE_W - 2 * MARGIN - 14
        self.y += draw_rich_wrapped(self.p, MARGIN + 14, self.y, width, text, px, self.pal.muted)
        self.y += gap

    def rule(self) -> None:
        from PySide6.QtCore import QPointF

        from mha_gui.export.text import qcolor

        self.p.setPen(qcolor(self.pal.grid))
        self.p.drawLine(QPointF(MARGIN, self.y), QPointF(PAGE_W - MARGIN, self.y))
        self.y += 8

    # -- pages
    def question(self, sheet: Sheet) -> None:
        ex = sheet.exercise
        who = f"worksheet {sheet.number} of {self.count} · seed {ex.seed}"
        self.new_page(f"mha-gui · {who}")
        self.text(f"Multi-head attention · {sheet.title}", 15, bold=True)
        self.text("Name: ______________________________      Date: ______________", 9.5, gap=8)
        self.text(sheet.formula, 13, gap=6)
        self.text(sheet.setting, 8.5, muted=True)
        self.text(ex.stage.what + " " + sheet.instruction, 9.5, gap=8)
        self.rule()
        # one scale for both parts when they share this page, else each part as large as
        # its page allows (the fill-in part then starts a page of its own)
        together = _best_scale(
            lambda s: (
                _section_height(sheet.fill, s)
                + (_section_height(sheet.given, s) + 6 if sheet.given else 0.0)
            ),
            PAGE_H - MARGIN - self.y,
        )
        if sheet.given:
            scale = (
                together
                or _best_scale(lambda s: _section_height(sheet.given, s), PAGE_H - MARGIN - self.y)
                or 1.0
            )
            self.text("Given", HEADING_PX, bold=True)
            self.tables(sheet.given, f"Given (continued) · {who}", scale)
            self.y += 6
        if together is None:
            fresh = PAGE_H - 2 * MARGIN - 20  # a new page, below its short header
            here = _best_scale(lambda s: _section_height(sheet.fill, s), PAGE_H - MARGIN - self.y)
            scale = here or _best_scale(lambda s: _section_height(sheet.fill, s), fresh) or 1.0
            if here is None:
                self.room(PAGE_H, f"Fill in · {who}")
        else:
            scale = together
        self.text("Fill in", HEADING_PX, bold=True)
        self.tables(sheet.fill, f"Fill in (continued) · {who}", scale)

    def answers(self, sheet: Sheet) -> None:
        ex = sheet.exercise
        who = f"worksheet {sheet.number} of {self.count} · seed {ex.seed}"
        self.new_page(f"mha-gui · answer key · {who}")
        self.text(f"Answer key · {who}", 14, bold=True)
        self.text(f"{sheet.title}:  {sheet.formula}", 11, gap=8)
        self.rule()
        for answer, worked in sheet.key:
            self.room(48, f"Answer key (continued) · {who}")
            self.text(answer, 12, bold=True, gap=3)
            self.working(worked, 10, gap=12)

    def tables(self, tables: list[Table], again: str, scale: float = 1.0) -> None:
        """Flow tables left to right at `scale` (narrower if a table is wider than the
        page), wrapping to the next line and page as needed."""
        inner = PAGE_W - 2 * MARGIN
        x, line_h = MARGIN, 0.0
        for t in _blocks(tables):
            w, h = _table_size(t)
            s = min(scale, inner / w)
            w, h = w * s, h * s
            if x + w > PAGE_W - MARGIN and x > MARGIN:
                x, self.y, line_h = MARGIN, self.y + line_h + 12, 0.0
            if self.y + h > PAGE_H - MARGIN:
                self.room(h, again)
                x, line_h = MARGIN, 0.0
            with saved(self.p):
                self.p.translate(x, self.y)
                self.p.scale(s, s)
                self._paint_table(t)
            x += w + 22
            line_h = max(line_h, h)
        self.y += line_h + 8

    def _paint_table(self, t: Table) -> None:
        from PySide6.QtCore import QRectF, Qt

        from mha_gui.export.text import draw_rich, make_font, qcolor

        lw, cw = _label_w(t), _cell_w(t)
        draw_rich(self.p, 0, 0, t.title, FONT_PX + 2.5, self.pal.text, True)
        top = ROW_H + 4
        font = make_font(FONT_PX)
        small = make_font(FONT_PX - 1)
        muted, text, grid = (qcolor(c) for c in (self.pal.muted, self.pal.text, self.pal.grid))
        self.p.setFont(small)
        self.p.setPen(muted)
        for j, label in enumerate(t.cols):
            r = QRectF(lw + j * cw, top, cw - 4, ROW_H)
            self.p.drawText(r, Qt.AlignRight | Qt.AlignVCenter, label[:8])
        for i, row in enumerate(t.texts):
            y = top + ROW_H * (i + 1)
            self.p.setFont(small)
            self.p.setPen(muted)
            self.p.drawText(
                QRectF(0, y, lw - 6, ROW_H), Qt.AlignRight | Qt.AlignVCenter, t.rows[i][:10]
            )
            for j, cell in enumerate(row):
                r = QRectF(lw + j * cw, y, cw - 4, ROW_H)
                number = t.boxes.get((i, j))
                if number is not None:
                    self.p.setPen(text)
                    self.p.setBrush(Qt.NoBrush)
                    self.p.drawRect(QRectF(r.x() + 2, y + 1, cw - 4, ROW_H - 2))
                    # the box's number, as the answer key lists it, legible in a corner
                    self.p.setFont(make_font(7.5, True))
                    self.p.setPen(muted)
                    self.p.drawText(
                        QRectF(r.x() + 3.5, y + 1.5, 16, 9), Qt.AlignLeft | Qt.AlignTop, str(number)
                    )
                    continue
                self.p.setFont(font)
                self.p.setPen(muted if (i, j) in t.muted else text)
                self.p.drawText(r, Qt.AlignRight | Qt.AlignVCenter, cell)
        bottom = top + ROW_H * (len(t.texts) + 1)
        self.p.setPen(grid)
        self.p.drawLine(
            QRectF(lw - 2, top + ROW_H, 0, 0).topLeft(), QRectF(lw - 2, bottom, 0, 0).topLeft()
        )


def _label_w(t: Table) -> float:
    from mha_gui.export.text import text_width

    return max([text_width(r[:10], FONT_PX - 1) for r in t.rows] + [4.0]) + 8


def _cell_w(t: Table) -> float:
    from mha_gui.export.text import text_width

    widest = max(text_width(x, FONT_PX) for row in t.texts for x in row)
    widest = max([widest] + [text_width(c[:8], FONT_PX - 1) for c in t.cols])
    return max(widest + 10, BOX_MIN_W if t.boxes else 0.0)


def _best_scale(height, room: float) -> float | None:
    """The largest of SCALES at which `height(scale)` fits `room`, or None."""
    return next((s for s in SCALES if height(s) <= room), None)


def _section_height(tables: list[Table], scale: float) -> float:
    """A heading ("Given", "Fill in") and its tables flowed at `scale`."""
    return HEADING_PX * 1.35 + 4 + _flow_height(tables, scale)


def _flow_height(tables: list[Table], scale: float) -> float:
    """The height `_Pages.tables` takes for `tables` at `scale` on one page."""
    inner = PAGE_W - 2 * MARGIN
    x, y, line_h = MARGIN, 0.0, 0.0
    for t in _blocks(tables):
        w, h = _table_size(t)
        s = min(scale, inner / w)
        w, h = w * s, h * s
        if x + w > PAGE_W - MARGIN and x > MARGIN:
            x, y, line_h = MARGIN, y + line_h + 12, 0.0
        x += w + 22
        line_h = max(line_h, h)
    return y + line_h + 8


def _blocks(tables: list[Table]) -> list[Table]:
    """The tables as printed: one that would need shrinking below MIN_SCALE to fit the
    page is cut into even column blocks (`A_0 [:, 0:8]`, `A_0 [:, 8:16]`), keeping its
    row labels, its numbered boxes and its greyed cells."""
    inner = PAGE_W - 2 * MARGIN
    out = []
    for t in tables:
        w, _h = _table_size(t)
        if w * MIN_SCALE <= inner or len(t.cols) < 2:
            out.append(t)
            continue
        per = max(1, int((inner / MIN_SCALE - _label_w(t)) // _cell_w(t)))
        per = math.ceil(len(t.cols) / math.ceil(len(t.cols) / per))  # even blocks
        for a in range(0, len(t.cols), per):
            b = min(a + per, len(t.cols))
            out.append(
                Table(
                    f"{t.title} [:, {a}:{b}]",
                    [row[a:b] for row in t.texts],
                    t.rows,
                    t.cols[a:b],
                    {(i, j - a): n for (i, j), n in t.boxes.items() if a <= j < b},
                    {(i, j - a) for (i, j) in t.muted if a <= j < b},
                )
            )
    return out


def _table_size(t: Table) -> tuple[float, float]:
    from mha_gui.export.text import rich_width

    w = max(_label_w(t) + _cell_w(t) * len(t.cols), rich_width(t.title, FONT_PX + 2.5, True))
    return w, ROW_H * (len(t.texts) + 2) + 6


__all__ = ["Sheet", "Table", "paint_worksheets", "plan_worksheets", "write_worksheet"]
