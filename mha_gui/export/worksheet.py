"""Printable worksheets (issue 10): a stage's matrices with K empty boxes to fill in by
hand, the operands a student needs, the formula, and an answer key on its own page.

    write_worksheet("ws.pdf", session, "weights", blanks=4, seed=7, students=3)

One worksheet per seed S, S+1, … (each its own exercise: other cells, same layer); every
question page first, then one answer-key page per worksheet, so a teacher can print the
questions and keep the keys. Same seed → same cells → same text. The plan
(`plan_worksheets`) is Qt-free and checks everything before a page is painted; the pages
are vector text and lines on A4 (QPdfWriter), light only (a worksheet is printed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from mha_gui import theme
from mha_gui.engine.exercises import Cell, Exercise, answer_text, make_exercise
from mha_gui.engine.numbers import NumberFormat, fixed_format, minus, num, peak, pretty
from mha_gui.engine.session import Session, atomic_write
from mha_gui.engine.stage_panels import as_stage
from mha_gui.engine.stages import formula_for

PAGE_W, PAGE_H = 595.0, 842.0  # A4 in points
MARGIN = 42.0
MAX_ROWS, MAX_COLS = 24, 16  # larger matrices do not fit a printed page legibly
MAX_STUDENTS = 200
GIVEN_DECIMALS = 3  # operands are printed with up to 3 places (integers stay integers)
FONT_PX = 10.0  # table text, in points (a table too wide for the page is scaled down)
ROW_H = 19.0
BOX_MIN_W = 50.0  # room to write a number by hand


@dataclass
class Table:
    """One matrix as it is printed: cell texts, and the numbered boxes of hidden cells."""

    title: str  # rich text: W_0^Q, A_1
    texts: list[list[str]]
    rows: list[str]
    cols: list[str]
    boxes: dict[tuple[int, int], int] = field(default_factory=dict)  # (r, c) → number
    muted: set[tuple[int, int]] = field(default_factory=set)  # blocked cells, greyed


@dataclass
class Sheet:
    """One student's worksheet: what the question page prints and what the key says."""

    number: int  # 1, 2, … (student)
    exercise: Exercise
    title: str
    formula: str
    setting: str
    instruction: str
    given: list[Table]
    fill: list[Table]
    key: list[tuple[str, str]]  # ("1. A_1[2,0] = 0.42", worked explanation)


# ------------------------------------------------------------------- planning ------
def plan_worksheets(
    session: Session, stage, blanks: int, seed: int, students: int = 1
) -> list[Sheet]:
    """Check every argument and lay out the worksheets' contents (no Qt).

    Raises ValueError (one sentence) for an unknown stage, blanks < 1 or more than the
    stage's cells, a negative seed, students < 1, or matrices too large to print.
    """
    s = as_stage(stage)
    if isinstance(students, bool) or not isinstance(students, int) or students < 1:
        raise ValueError(f"the number of students must be a whole number ≥ 1, got {students!r}")
    if students > MAX_STUDENTS:
        raise ValueError(f"at most {MAX_STUDENTS} worksheets in one file, got {students}")
    trace = session.run()
    sheets = []
    for k in range(students):
        ex = make_exercise(session, s, blanks, _seed(seed) + k, trace=trace)
        sheets.append(_sheet(session, trace, ex, k + 1))
    return sheets


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"the seed must be a whole number ≥ 0, got {seed!r}")
    return seed


def _sheet(session: Session, trace, ex: Exercise, number: int) -> Sheet:
    c = session.config
    s = ex.stage
    given: dict[str, Table] = {}
    fill: dict[tuple[str, int], list[int]] = {}
    for i, cell in enumerate(ex.cells):
        for title, m, rows, cols in _operands(session, trace, cell):
            mask = trace.mask if title[:2] in ("S_", "A_") else None  # hatch S and A only
            given.setdefault(title, _table(title, m, rows, cols, mask, None))
        fill.setdefault((cell.kind, -1 if cell.head is None else cell.head), []).append(i)
    tables = []
    for (kind, head), indices in fill.items():
        first = ex.cells[indices[0]]
        m, rows, cols = _matrix(session, trace, kind, None if head < 0 else head)
        table = _table(first.symbol, m, rows, cols, trace.mask if kind in ("S", "A") else None, ex)
        table.boxes = {(ex.cells[i].row, ex.cells[i].col): i + 1 for i in indices}
        tables.append(table)
    for t in tables:
        _check_size(t)
    for t in given.values():
        _check_size(t)
    places = ex.fmt.decimals
    factor = f" (in units of 10^{{{ex.fmt.exponent}}})" if ex.fmt.exponent else ""
    instruction = (
        f"Fill in the {len(ex.cells)} numbered boxes{factor}, each to {places} decimal "
        f"places. Given numbers are rounded to {GIVEN_DECIMALS} places."
    )
    key = [
        (f"{i + 1}.  {_rich_power(answer_text(cell, ex.fmt))}", minus(ex.solutions[i]))
        for i, cell in enumerate(ex.cells)
    ]
    return Sheet(
        number,
        ex,
        f"Stage {s.index} · {s.title}",
        pretty(formula_for(s, c)),
        pretty(_setting(session)),
        instruction,
        list(given.values()),
        tables,
        key,
    )


def _rich_power(text: str) -> str:
    """`×10^-5` → rich text `×10^{−5}` (a superscript for the whole exponent)."""
    return minus(re.sub(r"\^(-?\d+)", r"^{\1}", text))


def _setting(session: Session) -> str:
    c = session.config
    scale = f"1/√{c.d_k} = {num(c.effective_scale, 4)}" if c.scale is None else f"{c.scale:g}"
    parts = [
        f"{c.variant}: n={c.n}, d_model={c.d_model}, h={c.h}",
        f"h_kv={c.h_kv}" if c.variant != "MHA" else "",
        f"d_k={c.d_k}, d_v={c.d_v}, scale {scale}",
        "causal mask" if c.causal else "",
        "extra mask" if session.mask is not None and session.mask.any() else "",
        f"RoPE θ={c.rope_theta:g}" if c.rope else "",
        "biases" if c.bias else "",
    ]
    toks = list(session.tokens)
    return "  ·  ".join(p for p in parts if p) + "  ·  tokens: " + " ".join(toks[:16])


def _index(count: int) -> list[str]:
    return [str(j) for j in range(count)]


def _matrix(session: Session, trace, kind: str, head: int | None):
    """(matrix, row labels, column labels) of a result panel."""
    c, tok = session.config, list(session.tokens)
    g = None if head is None else c.kv_group(head)
    table = {
        "X": lambda: (session.params.X, tok, _index(c.d_model)),
        "Q": lambda: (trace.q[head], tok, _index(c.d_k)),
        "K": lambda: (trace.k[g], tok, _index(c.d_k)),
        "V": lambda: (trace.v[g], tok, _index(c.d_v)),
        "S": lambda: (trace.scores[head], tok, tok),
        "A": lambda: (trace.weights[head], tok, tok),
        "Z": lambda: (trace.heads[head], tok, _index(c.d_v)),
        "H": lambda: (trace.concat, tok, _index(c.h * c.d_v)),
        "Y": lambda: (trace.output, tok, _index(c.d_model)),
        "C": lambda: (trace.contributions[head], tok, _index(c.d_model)),
    }
    return table[kind]()


def _operands(session: Session, trace, cell: Cell) -> list[tuple[str, np.ndarray, list, list]]:
    """What a student needs to compute `cell`: (title, matrix, row labels, column labels)."""
    c, p, tok = session.config, session.params, list(session.tokens)
    i, kind = cell.head, cell.kind
    g = None if i is None else c.kv_group(i)
    feats = _index(c.d_model)
    x = ("X", p.X, tok, feats)

    def weight(name: str, idx: int, width: int):
        sym = f"W_{idx}^{name[-1]}"
        out = [(sym, getattr(p, name)[idx], feats, _index(width))]
        bias = getattr(p, "b_" + name[-1])
        if bias is not None:
            out.append((f"b_{idx}^{name[-1]}", bias[idx][None, :], [""], _index(width)))
        return out

    if kind == "Q":
        return [x, *weight("W_Q", i, c.d_k)]
    if kind == "K":
        return [x, *weight("W_K", g, c.d_k)]
    if kind == "V":
        return [x, *weight("W_V", g, c.d_v)]
    if kind == "S":
        if trace.q_rot is not None:
            return [
                (f"Q_{i} after RoPE", trace.q_rot[i], tok, _index(c.d_k)),
                (f"K_{g} after RoPE", trace.k_rot[g], tok, _index(c.d_k)),
            ]
        return [
            (f"Q_{i}", trace.q[i], tok, _index(c.d_k)),
            (f"K_{g}", trace.k[g], tok, _index(c.d_k)),
        ]
    if kind == "A":
        return [(f"S_{i}", trace.scores[i], tok, tok)]
    if kind == "Z":
        return [(f"A_{i}", trace.weights[i], tok, tok), (f"V_{g}", trace.v[g], tok, _index(c.d_v))]
    if kind == "H":
        j = cell.col // c.d_v
        return [(f"Z_{j}", trace.heads[j], tok, _index(c.d_v))]
    w_o = ("W_O", p.W_O, _index(c.h * c.d_v), feats)
    if kind == "Y":
        h = ("H", trace.concat, tok, _index(c.h * c.d_v))
        bias = [] if p.b_O is None else [("b_O", p.b_O[None, :], [""], feats)]
        return [h, w_o, *bias]
    if kind == "C":
        lo, hi = i * c.d_v, (i + 1) * c.d_v
        rows = [str(r) for r in range(lo, hi)]
        return [
            (f"Z_{i}", trace.heads[i], tok, _index(c.d_v)),
            (f"W_O[{lo}:{hi},:]", p.W_O[lo:hi], rows, feats),
        ]
    return []  # X: nothing to compute from


def _table(title, m, rows, cols, mask, ex: Exercise | None) -> Table:
    """Cell texts: results in the stage's format (as the window prints them), operands
    with GIVEN_DECIMALS places — tiny or huge ones with a common ×10^k in the title."""
    square = mask is not None and m.shape == mask.shape
    fmt = ex.fmt if ex is not None else _given_format(title, m)
    if ex is None and fmt.exponent:
        title += f"  (×10^{{{minus(str(fmt.exponent))}}})"
    texts = [[fmt.cell(float(v)) for v in row] for row in m]
    muted = {(r, c) for r, c in np.argwhere(mask)} if square else set()
    return Table(title, texts, [str(x) for x in rows], [str(x) for x in cols], muted=muted)


def _given_format(title: str, m: np.ndarray) -> NumberFormat:
    kind = "weights" if title.startswith("A_") else "values"
    return fixed_format(peak(m), GIVEN_DECIMALS, kind)


def _check_size(t: Table) -> None:
    r, c = len(t.texts), len(t.texts[0]) if t.texts else 0
    if r > MAX_ROWS or c > MAX_COLS:
        raise ValueError(
            f"{t.title} is {r}×{c}: a worksheet prints matrices up to {MAX_ROWS}×{MAX_COLS}; "
            f"use a smaller layer (fewer tokens or features)"
        )


# ------------------------------------------------------------------- painting -----
def write_worksheet(path, session: Session, stage, blanks: int, seed: int, students: int = 1):
    """Plan (and check) the worksheets, then write the PDF atomically; returns the path."""
    sheets = plan_worksheets(session, stage, blanks, seed, students)
    return atomic_write(path, lambda tmp: paint_worksheets(tmp, sheets))


def paint_worksheets(path, sheets: list[Sheet]) -> None:
    """Question pages of every sheet, then one answer-key page per sheet."""
    from PySide6.QtCore import QMarginsF
    from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter

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
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"could not write PDF to {path}")
    pages = _Pages(writer, painter, len(sheets))
    try:
        for sheet in sheets:
            pages.question(sheet)
        for sheet in sheets:
            pages.answers(sheet)
    finally:
        painter.end()


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

        from mha_gui.export.text import _qcolor, make_font

        self.p.setFont(make_font(7.5))
        self.p.setPen(_qcolor(self.pal.muted))
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

    def plain(self, text: str, px: float, gap: float = 4) -> None:
        """Wrapped text drawn as it is (explanations: `e^0.707` must not be superscripted)."""
        from PySide6.QtCore import QRectF, Qt

        from mha_gui.export.text import _qcolor, make_font

        self.p.setFont(make_font(px))
        self.p.setPen(_qcolor(self.pal.muted))
        box = QRectF(MARGIN + 14, self.y, PAGE_W - 2 * MARGIN - 14, PAGE_H)
        flags = Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap
        used = self.p.boundingRect(box, flags, text)
        self.p.drawText(box, flags, text)
        self.y += used.height() + gap

    def rule(self) -> None:
        from PySide6.QtCore import QPointF

        from mha_gui.export.text import _qcolor

        self.p.setPen(_qcolor(self.pal.grid))
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
        if sheet.given:
            self.text("Given", 10.5, bold=True)
            self.tables(sheet.given, f"Given (continued) · {who}")
            self.y += 6
        self.text("Fill in", 10.5, bold=True)
        self.tables(sheet.fill, f"Fill in (continued) · {who}")

    def answers(self, sheet: Sheet) -> None:
        ex = sheet.exercise
        who = f"worksheet {sheet.number} of {self.count} · seed {ex.seed}"
        self.new_page(f"mha-gui · answer key · {who}")
        self.text(f"Answer key · {who}", 14, bold=True)
        self.text(f"{sheet.title}:  {sheet.formula}", 11, gap=8)
        self.rule()
        for answer, worked in sheet.key:
            self.room(40, f"Answer key (continued) · {who}")
            self.text(answer, 11, bold=True, gap=2)
            self.plain(worked, 8.5, gap=9)

    def tables(self, tables: list[Table], again: str) -> None:
        """Flow tables left to right, wrapping to the next line and page as needed."""
        inner = PAGE_W - 2 * MARGIN
        x, line_h = MARGIN, 0.0
        for t in tables:
            w, h = _table_size(t)
            s = min(1.0, inner / w)
            w, h = w * s, h * s
            if x + w > PAGE_W - MARGIN and x > MARGIN:
                x, self.y, line_h = MARGIN, self.y + line_h + 12, 0.0
            if self.y + h > PAGE_H - MARGIN:
                self.room(h, again)
                x, line_h = MARGIN, 0.0
            self.p.save()
            self.p.translate(x, self.y)
            self.p.scale(s, s)
            self._paint_table(t)
            self.p.restore()
            x += w + 22
            line_h = max(line_h, h)
        self.y += line_h + 8

    def _paint_table(self, t: Table) -> None:
        from PySide6.QtCore import QRectF, Qt

        from mha_gui.export.text import _qcolor, draw_rich, make_font

        lw, cw = _label_w(t), _cell_w(t)
        draw_rich(self.p, 0, 0, t.title, FONT_PX + 2.5, self.pal.text, True)
        top = ROW_H + 4
        font = make_font(FONT_PX)
        small = make_font(FONT_PX - 1)
        muted, text, grid = (_qcolor(c) for c in (self.pal.muted, self.pal.text, self.pal.grid))
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
                    self.p.setFont(make_font(6.5))
                    self.p.setPen(muted)
                    self.p.drawText(
                        QRectF(r.x() + 3.5, y + 2, 14, 8), Qt.AlignLeft | Qt.AlignTop, str(number)
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


def _table_size(t: Table) -> tuple[float, float]:
    from mha_gui.export.text import rich_width

    w = max(_label_w(t) + _cell_w(t) * len(t.cols), rich_width(t.title, FONT_PX + 2.5, True))
    return w, ROW_H * (len(t.texts) + 2) + 6
