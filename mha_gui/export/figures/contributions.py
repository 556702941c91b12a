"""The contribution view's figure: a bar table of what each head adds to Y, per token.

Rows are tokens; one column per head shows ‖C_i[t]‖ = ‖Z_i W_O^i‖ as a bar in the head's
colour, a last column ‖Y − b_O‖; a switched-off head's column is greyed and its bars are
hatched outlines of what it would add. A Drawing (export/drawing.py): the dock
(views/docks/contributions/contribution_view.py) and `mha-gui export --view contributions` paint this one.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt

from mha_gui import theme
from mha_gui.engine.layer.numbers import fixed_format, nice_peak, num, sub
from mha_gui.engine.teaching.contributions import ContributionNorms, contribution_norms
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.primitives import hatched_outline, make_pen, page, paint_text
from mha_gui.export.text import (
    draw_rich,
    draw_rich_wrapped,
    elide,
    ensure_app,
    qcolor,
    rich_width,
    text_width,
    wrapped_height,
)

MARGIN = 28.0
TITLE_PX, NOTE_PX, HEAD_PX, LABEL_PX = 24.0, 14.0, 15.0, 14.0
MAX_WIDTH = 1600.0
NARROW = 700.0  # below this width: small margins, a short title, wrapped notes
MAX_COLUMN, MIN_COLUMN = 230.0, 24.0
MAX_ROW, MIN_ROW = 36.0, 6.0
TABLE_HEIGHT = 620.0  # rows shrink to fit a long sequence into about this height


def total_name(bias: bool) -> str:
    """What the last column measures: ‖Y − b_O‖ with biases, which is ‖Y‖ without."""
    return "‖Y − b_O‖" if bias else "‖Y‖"


@dataclass(frozen=True)
class Cell:
    """What the mouse is over: a head's bar (head = index) or the total (head = None)."""

    token: int
    head: int | None


@dataclass(frozen=True)
class Header:
    head: int | None


class ContributionDrawing:
    """The bar table of contribution sizes (a Drawing, export/drawing.py)."""

    def __init__(
        self,
        norms: ContributionNorms,
        tokens: list[str],
        bias: bool,
        head: int | None = None,
        query: int | None = None,
        width: float = MAX_WIDTH,
    ):
        """`width`: the most the figure may take, in logical units (a narrow dock passes
        its own width so the table fits it instead of being shrunk into unreadable text)."""
        ensure_app()
        self.norms = norms
        self.tokens = list(tokens)
        self.bias = bias
        self.head = head
        self.query = query
        h, n = norms.h, norms.n
        top = nice_peak(norms.peak) if norms.peak > 0 else 1.0
        self.scale_top = top
        # two decimals; tiny sizes share a power of ten (printed once) instead of 0.007
        self.fmt = fixed_format(top, 2)
        width = max(240.0, min(MAX_WIDTH, float(width)))
        narrow = self.narrow = width < NARROW
        self.margin = 12.0 if narrow else MARGIN
        self.title_px = 18.0 if narrow else TITLE_PX
        self.title = "Head contributions to Y" + ("" if narrow else ", token by token")
        off = ", ".join(str(i) for i in norms.ablate)
        self.description = (
            f"‖C_i[t]‖ = ‖Z_i W_O^i‖ per token for {h} heads and {total_name(bias)}"
            + (f"; heads {off} switched off" if off else "")
        )
        # ---- geometry
        m = self.margin
        self.label_w = min(170.0, max(text_width(t, LABEL_PX, True) for t in self.tokens) + 14)
        self.label_w = max(self.label_w, 44.0 if narrow else 60.0)
        avail = width - 2 * m - self.label_w
        self.col_w = max(MIN_COLUMN, min(MAX_COLUMN, avail / (h + 1)))
        self.row_h = max(MIN_ROW, min(MAX_ROW, TABLE_HEIGHT / n))
        self.value_px = min(LABEL_PX, self.row_h * 0.45) if self.row_h >= 18 else 0.0
        self.number_w = (
            max(text_width(self._number(v), self.value_px) for v in self._all_values()) + 8
            if self.value_px
            else 0.0
        )
        if self.number_w > self.col_w * 0.5:  # no room for numbers beside the bars
            self.value_px, self.number_w = 0.0, 0.0
        self.head_px = min(HEAD_PX, max(9.0, self.col_w * 0.16))
        self.x0 = m + self.label_w
        self.title_y = m
        self.note_y = self.title_y + self.title_px * 1.5
        self.notes = self._notes()
        table_w = self.label_w + (h + 1) * self.col_w
        text_w = max(
            text_width(self.title, self.title_px, True),
            *(rich_width(t, NOTE_PX) for t in self.notes),
        )
        self.width = max(table_w, min(text_w, width - 2 * m)) + 2 * m
        self.notes_w = self.width - 2 * m  # notes wrap to the figure's width
        self.note_h = [wrapped_height(t, NOTE_PX, self.notes_w) for t in self.notes]
        self.header_y = self.note_y + sum(self.note_h) + 4 * len(self.notes) + 12
        self.header_h = self.head_px * 2.2
        self.table_y = self.header_y + self.header_h + 4
        self.height = self.table_y + n * self.row_h + m

    # --------------------------------------------------------------- numbers ------
    def _all_values(self):
        yield from self.norms.norms.ravel()[:4000]
        yield from self.norms.lost.ravel()[:4000]
        yield from self.norms.total

    def _number(self, v: float, lost: bool = False) -> str:
        text = self.fmt.cell(float(v))
        return f"({text})" if lost else text

    def _notes(self) -> list[str]:
        """What the figure shows, in words; a narrow dock gets the short version (the
        tooltips say the rest)."""
        total = total_name(self.bias)
        off = self.norms.ablate
        heads = ", ".join(str(i) for i in off)
        word = "head" if len(off) == 1 else "heads"
        if self.narrow:
            notes = [f"bar: ‖C_i[t]‖ = ‖Z_i W_O^i‖ · last column {total} = ‖Σ_i C_i‖"]
            if off:
                notes.append(f"{word} {heads} off: hatched = what it would add")
            return notes
        notes = [
            "bar: ‖C_i[t]‖ = ‖Z_i W_O^i‖, the length (L2 norm over d_model) of head i's share "
            f"of Y at token t · last column: {total} = ‖Σ_i C_i‖",
            "heads can cancel, so their lengths need not add up to the total · "
            f"one scale for all bars (full cell = {self.fmt.tick(self.scale_top)})"
            + (f" · every number {self.fmt.factor}" if self.fmt.factor else ""),
        ]
        if off:
            notes.append(
                f"{word} {heads} off: Z = 0, so C = 0 — hatched bars show what it would add "
                "(its weights are still computed)"
            )
        return notes

    # ------------------------------------------------------------ geometry --------
    def column_x(self, head: int | None) -> float:
        index = self.norms.h if head is None else head
        return self.x0 + index * self.col_w

    def row_y(self, token: int) -> float:
        return self.table_y + token * self.row_h

    def bar_length(self, value: float) -> float:
        room = self.col_w - 12 - self.number_w
        return max(0.0, room * float(value) / self.scale_top)

    def hit(self, x: float, y: float):
        h, n = self.norms.h, self.norms.n
        if not (self.x0 <= x < self.x0 + (h + 1) * self.col_w):
            if self.margin <= x < self.x0 and self.table_y <= y < self.table_y + n * self.row_h:
                return Cell(int((y - self.table_y) // self.row_h), None)
            return None
        col = int((x - self.x0) // self.col_w)
        head = None if col >= h else col
        if self.header_y <= y < self.table_y:
            return Header(head)
        if self.table_y <= y < self.table_y + n * self.row_h:
            return Cell(int((y - self.table_y) // self.row_h), head)
        return None

    def tooltip(self, item) -> str:
        nm = self.norms
        if isinstance(item, Header):
            if item.head is None:
                return (
                    f"{total_name(self.bias)} = ‖Σ_i C_i‖: the length of everything the heads "
                    "add to each token (the bias b_O belongs to no head)"
                )
            i = item.head
            state = "switched off (Z = 0)" if i in nm.ablate else "on"
            return f"head {i}: {state}. Click to inspect it."
        t = item.token
        token = self.tokens[t]
        if item.head is None:
            heads = float(nm.norms[:, t].sum())
            return (
                f"{token}: {total_name(self.bias)} = {num(nm.total[t])}; the heads' lengths add "
                f"up to {num(heads)} (cancellation makes the total shorter)"
            )
        i = item.head
        if i in nm.ablate:
            return (
                f"{token}, head {i} (off): C{sub(i)} = 0. Switched on it would add a vector "
                f"of length {num(nm.lost[i, t])}."
            )
        return (
            f"{token}, head {i}: ‖C{sub(i)}[{token}]‖ = {num(nm.norms[i, t])} "
            f"({100 * nm.share(i, t):.0f}% of the heads' lengths at this token)"
        )

    # --------------------------------------------------------------- painting -----
    def paint(self, painter, theme_name: str, colormap: str) -> None:
        from PySide6.QtCore import QPointF, QRectF

        pal = theme.palette(theme_name)
        nm = self.norms
        h, n = nm.h, nm.n
        with page(painter, self, pal, antialias=False):
            m = self.margin
            draw_rich(painter, m, self.title_y, self.title, self.title_px, pal.text, True)
            y = self.note_y
            for note, height in zip(self.notes, self.note_h, strict=True):
                draw_rich_wrapped(painter, m, y, self.notes_w, note, NOTE_PX, pal.muted)
                y += height + 4

            table_h = n * self.row_h
            # followed query: a band across the table
            if self.query is not None and 0 <= self.query < n:
                painter.fillRect(
                    QRectF(
                        m,
                        self.row_y(self.query),
                        self.x0 + (h + 1) * self.col_w - m,
                        self.row_h,
                    ),
                    qcolor(pal.panel),
                )
            # switched-off columns: greyed
            for i in nm.ablate:
                painter.fillRect(
                    QRectF(
                        self.column_x(i), self.header_y, self.col_w, self.header_h + 4 + table_h
                    ),
                    qcolor(pal.blocked),
                )
            if (
                self.fmt.factor and self.value_px
            ):  # the common power of ten, where the eye starts reading numbers
                draw_rich(
                    painter, m, self.header_y + self.header_h * 0.2, self.fmt.factor,
                    self.head_px, pal.muted,
                )  # fmt: skip
            # headers
            for i in [*range(h), None]:
                self._paint_header(painter, pal, theme_name, i)
            # grid: a line under the header, light row separators when rows are tall
            painter.setPen(make_pen(pal.grid))
            right = self.x0 + (h + 1) * self.col_w
            painter.drawLine(QPointF(m, self.table_y - 2), QPointF(right, self.table_y - 2))
            sep = self.column_x(None) - 0.5
            painter.drawLine(QPointF(sep, self.header_y), QPointF(sep, self.table_y + table_h))
            # token labels and bars
            for t in range(n):
                self._paint_row(painter, pal, t)
            # inspected head: a frame in its colour
            if self.head is not None and 0 <= self.head < h:
                painter.setPen(make_pen(theme.head_color(self.head), 2.5))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRoundedRect(
                    QRectF(
                        self.column_x(self.head) + 1.5,
                        self.header_y - 2,
                        self.col_w - 3,
                        self.header_h + 8 + table_h,
                    ),
                    5,
                    5,
                )

    def _paint_header(self, painter, pal, theme_name, head: int | None) -> None:
        from PySide6.QtCore import QRectF

        x, y, w = self.column_x(head), self.header_y, self.col_w
        px = self.head_px
        if head is None:
            text = total_name(self.bias)
            paint_text(
                painter, x + 6, y, w - 8, self.header_h, elide(text, px, w - 8, True), px,
                pal.text, bold=True,
            )  # fmt: skip
            return
        off = head in self.norms.ablate
        sw = min(12.0, px * 0.8)
        painter.fillRect(
            QRectF(x + 6, y + (self.header_h - sw) / 2, sw, sw), qcolor(theme.head_color(head))
        )
        label = f"head {head}" + (" · off" if off else "")
        room = w - sw - 14
        if text_width(label, px, True) > room:
            px = max(9.0, px * room / text_width(label, px, True))
        if text_width(label, px, True) > room:
            label = f"{head}" + (" off" if off else "")
        paint_text(
            painter, x + 10 + sw, y, w - sw - 12, self.header_h,
            elide(label, px, w - sw - 12, True), px,
            pal.muted if off else theme.head_text_color(head, theme_name), bold=True,
        )  # fmt: skip

    def _paint_row(self, painter, pal, t: int) -> None:
        from PySide6.QtCore import QRectF

        nm = self.norms
        y = self.row_y(t)
        rh = self.row_h
        if rh >= 9:
            bold = t == self.query
            px = min(LABEL_PX, rh * 0.5)
            paint_text(
                painter, self.margin, y, self.label_w - 10, rh,
                elide(self.tokens[t], px, self.label_w - 10, bold), px,
                pal.text if bold else pal.muted,
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, bold,
            )  # fmt: skip
        bar_h = max(2.0, min(rh * 0.62, 22.0))
        by = y + (rh - bar_h) / 2
        for i in [*range(nm.h), None]:
            x = self.column_x(i) + 6
            if i is None:
                value, colour, lost = float(nm.total[t]), pal.muted, False
            else:
                lost = i in nm.ablate
                value = float(nm.lost[i, t] if lost else nm.norms[i, t])
                colour = theme.head_color(i)
            length = self.bar_length(value)
            rect = QRectF(x, by, length, bar_h)
            if lost:
                hatched_outline(painter, rect, pal)
            elif length > 0:
                painter.fillRect(rect, qcolor(colour))
            if self.value_px:
                paint_text(
                    painter, x + length + 4, y, self.number_w + 4, rh,
                    self._number(value, lost), self.value_px,
                    pal.muted if lost else pal.text, bold=i is None,
                )  # fmt: skip


def contribution_drawing(
    data, options: FigureOptions | None = None, width: float = MAX_WIDTH
) -> ContributionDrawing:
    """The figure for a StageData (Document or SessionData) — `export --view contributions`."""
    options = options or FigureOptions()
    c = data.config
    head = options.head if 0 <= options.head < c.h else None
    query = options.query if 0 <= options.query < c.n else None
    norms = contribution_norms(data)
    return ContributionDrawing(norms, data.tokens, c.bias, head, query, width)
