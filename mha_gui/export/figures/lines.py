"""The token lines figure: which keys each query reads, every head at once.

Queries in the left column, keys in the right; a line joins query j to key k for every
head, its opacity and width growing with the weight A_i[j, k], in the head's colour.
A hovered token shows only its lines; a head's chip shows it on or hidden; the followed
query is marked. Blocked pairs draw no line; above 32 tokens weak lines are left out and
the figure says how many (engine/teaching/token_lines.py). A Drawing (export/drawing.py): the
dock (views/docks/lines/line_view.py) paints it and `mha-gui export --view lines
[--head I]` writes it.
"""

from __future__ import annotations

import math

from mha_gui import theme
from mha_gui.engine.layer.numbers import num
from mha_gui.engine.panels.stage_panels import WEIGHTS_RANGES, check_weights_range
from mha_gui.engine.teaching.neuron import check_index
from mha_gui.engine.teaching.token_lines import LineModel, token_lines
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.painter import saved
from mha_gui.export.primitives import make_pen, page, paint_text
from mha_gui.export.text import (
    draw_plain_wrapped,
    draw_rich_wrapped,
    elide,
    ensure_app,
    qcolor,
    text_width,
    wrapped_height,
)

MARGIN = 28.0
WIDTH = 960.0  # the figure's own width (an export); a narrow dock lays it out narrower
MIN_WIDTH = 360.0  # about a side dock at 150 % (~510 px)
TITLE = "Token lines: which keys each query reads"
TITLE_PX = 24.0
NOTE_PX = 15.0
CHIP_PX = 15.0
CHIP_H = 28.0
LABEL_MAX_W = 200.0


def unit_interval(value: float) -> float:
    """`value` clipped to 0..1 (0 for NaN): what a line's opacity and width can show; a
    layer of overflowing numbers must not hand Qt a NaN pen width."""
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


class LinesDrawing:
    """Token lines of `heads` (default all) for one StageData, in logical units.

    `hidden`: heads whose chip is shown switched off (no lines); `focus`: ("query", j) or
    ("key", k), the hovered token whose lines alone are drawn; `query`: the followed
    query (its label is marked); `inspected`: the inspected head (its chip is marked).
    `interactive`: the dock's drawing, whose notes say what hovering and clicking do;
    a file (paper, a slide) has no mouse, so exported figures leave those words out.
    """

    def __init__(
        self,
        data,
        heads=None,
        hidden=(),
        focus=None,
        query: int | None = None,
        inspected: int | None = None,
        weights_range: str = "fixed",
        interactive: bool = False,
        width: float = WIDTH,
    ):
        """`width`: what the figure may take (MIN_WIDTH to WIDTH logical units): the
        lines get shorter, the title and notes wrap."""
        ensure_app()  # the layout measures text
        self.interactive = interactive
        c = self.config = data.config
        self.tokens = list(data.tokens)
        self.weights_range = check_weights_range(weights_range)
        self.heads = (
            tuple(range(c.h))
            if heads is None
            else tuple(check_index("head", i, c.h, "heads") for i in heads)
        )
        self.hidden = frozenset(i for i in hidden if i in self.heads)
        if focus is not None:
            check_index(focus[0], focus[1], c.n, "tokens")
        self.focus = focus
        self.query = query
        self.inspected = inspected
        trace = data.trace()
        self.mask = trace.mask
        shown = [i for i in self.heads if i not in self.hidden]
        self.model: LineModel = token_lines(
            trace.weights, trace.mask, shown, focus, self.weights_range
        )
        # the threshold and counts of the whole figure, not of the hovered token alone
        self.overall = (
            self.model
            if focus is None
            else token_lines(trace.weights, trace.mask, shown, None, self.weights_range)
        )
        which = "all heads" if heads is None else ", ".join(f"head {i}" for i in self.heads)
        self.title = f"Token lines · {which}"
        self.description = (
            f"{c.variant}, n={c.n}, h={c.h}: a line from each query to each key per head, "
            f"opacity and width by weight"
        )
        self._layout(max(MIN_WIDTH, min(WIDTH, float(width))))

    # ------------------------------------------------------------------ layout -----
    def _layout(self, width: float) -> None:
        tok = self.tokens
        self.width = width
        self.text_w = width - 2 * MARGIN
        n = self.config.n
        self.row_h = max(6.0, min(40.0, 620.0 / n))
        self.px = max(8.0, min(18.0, self.row_h * 0.6))
        self.label_step = max(1, math.ceil(12.0 / self.row_h))
        self.idx_w = text_width(str(n - 1), 12) + 10
        widest = max(text_width(t, self.px) for t in tok)
        longest = max(widest, text_width("queries", NOTE_PX, True)) + 6
        self.label_w = min(LABEL_MAX_W, 0.22 * width, longest)  # longer tokens are elided
        self.q_right = MARGIN + self.idx_w + self.label_w  # query labels end here
        self.k_left = width - MARGIN - self.idx_w - self.label_w  # key labels start here
        self.x_from, self.x_to = self.q_right + 12, self.k_left - 12

        y = MARGIN
        self.title_y = y
        title_h = draw_plain_wrapped(None, 0, 0, self.text_w, TITLE, TITLE_PX, "#000000", True)
        y += max(TITLE_PX * 1.6, title_h + TITLE_PX * 0.3)
        self.notes = self._notes()
        self.notes_y = []
        for note in self.notes:
            self.notes_y.append(y)
            y += max(NOTE_PX * 1.5, wrapped_height(note, NOTE_PX, self.text_w) + 4)
        y += 10
        # one chip per head, wrapping
        self.chips: list[tuple[int, float, float, float]] = []  # head, x, y, w
        x = MARGIN
        for i in self.heads:
            w = text_width(f"head {i}", CHIP_PX, True) + 40
            if x + w > width - MARGIN and x > MARGIN:
                x, y = MARGIN, y + CHIP_H + 8
            self.chips.append((i, x, y, w))
            x += w + 8
        y += CHIP_H + 18
        self.columns_y = y
        y += NOTE_PX * 1.6 + 4
        self.rows_y = y
        y += n * self.row_h
        self.height = y + MARGIN

    def _notes(self) -> list[str]:
        c, m, tok = self.config, self.overall, self.tokens
        what = (
            "the weight A_i[j, k]"
            if self.weights_range == "fixed"
            else f"the {WEIGHTS_RANGES[self.weights_range].replace('weight ', 'weight A_i[j, k] ')}"
        )
        notes = [f"a line from query j to key k for every head: opacity and width = {what}"]
        if self.focus is not None:
            kind, index = self.focus
            notes.append(
                f"only the lines of {kind} {index} “{tok[index]}” (the token under the mouse)"
            )
        elif self.interactive:
            notes.append("hover a token to see only its lines · click a head to hide or show it")
        if m.threshold > 0:
            notes.append(
                f"{c.n} tokens: lines weaker than {num(m.threshold, 2)} are left out "
                f"({len(m.lines):,} of {m.candidates:,} drawn)"
            )
        blocked = self._blocked_pairs()
        if blocked:
            notes.append(f"{blocked:,} blocked (query, key) pairs have no line")
        if self.heads and all(i in self.hidden for i in self.heads):
            again = ": click a head to show it again" if self.interactive else ""
            notes.append(f"every head is hidden{again}")
        return notes

    def _blocked_pairs(self) -> int:
        return 0 if self.mask is None else int(self.mask.sum())

    # -------------------------------------------------------------- geometry -------
    def row_y(self, index: int) -> float:
        return self.rows_y + (index + 0.5) * self.row_h

    def head_offset(self, head: int) -> float:
        """Heads' lines leave and reach a token at slightly different heights."""
        shown = [i for i in self.heads if i not in self.hidden]
        if len(shown) < 2 or head not in shown:
            return 0.0
        spread = min(self.row_h * 0.5, 3.0 * len(shown))
        return (shown.index(head) / (len(shown) - 1) - 0.5) * spread

    def hit(self, x: float, y: float):
        for i, cx, cy, w in self.chips:
            if cx <= x <= cx + w and cy <= y <= cy + CHIP_H:
                return ("head", i)
        if self.rows_y <= y < self.rows_y + self.config.n * self.row_h:
            index = int((y - self.rows_y) // self.row_h)
            if MARGIN <= x <= self.x_from:
                return ("query", index)
            if self.x_to <= x <= self.width - MARGIN:
                return ("key", index)
        return None

    def tooltip(self, item) -> str:
        kind, index = item
        tok = self.tokens
        if kind == "head":
            state = "hidden" if index in self.hidden else "shown"
            return f"head {index} ({state}): click to {'show' if state == 'hidden' else 'hide'} its lines"
        lines = [ln for ln in self.overall.lines if getattr(ln, kind) == index]
        best = {}
        for ln in lines:  # weakest first: the last one per head is the strongest
            best[ln.head] = ln
        other = "key" if kind == "query" else "query"
        parts = [
            f"head {i} → {other} {getattr(ln, other)} “{tok[getattr(ln, other)]}” "
            f"({num(ln.weight, 2)})"
            for i, ln in sorted(best.items())
        ]
        head = f"{kind} {index} “{tok[index]}”"
        if kind == "query":
            head += " (click to follow it)"
        return head + (": strongest " + other + " per head: " + "; ".join(parts) if parts else "")

    # ----------------------------------------------------------------- painting ----
    def paint(self, painter, theme_name: str, colormap: str) -> None:
        from PySide6.QtCore import QLineF, QRectF, Qt
        from PySide6.QtGui import QColor, QPen

        pal = theme.palette(theme_name)
        with page(painter, self, pal):
            draw_plain_wrapped(
                painter, MARGIN, self.title_y, self.text_w, TITLE, TITLE_PX, pal.text, True
            )
            for note, y in zip(self.notes, self.notes_y, strict=True):
                draw_rich_wrapped(painter, MARGIN, y, self.text_w, note, NOTE_PX, pal.muted)
            self._paint_chips(painter, pal, theme_name)

            tok, n, rh = self.tokens, self.config.n, self.row_h
            paint_text(
                painter, MARGIN, self.columns_y, self.q_right - MARGIN, NOTE_PX * 1.5,
                "queries", NOTE_PX, pal.muted, Qt.AlignRight | Qt.AlignVCenter, True,
            )  # fmt: skip
            paint_text(
                painter, self.k_left, self.columns_y, self.label_w, NOTE_PX * 1.5, "keys",
                NOTE_PX, pal.muted, bold=True,
            )  # fmt: skip

            # the hovered token's row
            if self.focus is not None:
                kind, index = self.focus
                x0, x1 = (
                    (MARGIN, self.q_right + 6)
                    if kind == "query"
                    else (self.k_left - 6, self.width - MARGIN)
                )
                painter.fillRect(
                    QRectF(x0, self.rows_y + index * rh, x1 - x0, rh), qcolor(pal.panel)
                )

            # lines, weakest first
            with saved(painter):
                for ln in self.model.lines:
                    colour = QColor(theme.head_color(ln.head))
                    strength = unit_interval(ln.strength)
                    colour.setAlphaF(strength)
                    pen = QPen(colour)
                    pen.setWidthF(0.5 + 5.0 * strength)
                    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                    painter.setPen(pen)
                    off = self.head_offset(ln.head)
                    painter.drawLine(
                        QLineF(
                            self.x_from,
                            self.row_y(ln.query) + off,
                            self.x_to,
                            self.row_y(ln.key) + off,
                        )
                    )

            # token labels
            label_h = max(rh, self.px * 1.4)
            for j in range(n):
                focus = self.focus is not None and self.focus[1] == j
                followed = j == self.query
                if j % self.label_step and not followed and not focus:
                    continue
                y = self.row_y(j) - label_h / 2
                text = elide(tok[j], self.px, self.label_w)
                q_bold = followed or (focus and self.focus[0] == "query")
                k_bold = focus and self.focus[0] == "key"
                paint_text(
                    painter, MARGIN + self.idx_w, y, self.label_w, label_h, text, self.px,
                    pal.text if q_bold else pal.muted, Qt.AlignRight | Qt.AlignVCenter, q_bold,
                )  # fmt: skip
                paint_text(
                    painter, self.k_left, y, self.label_w, label_h, text, self.px,
                    pal.text if k_bold else pal.muted, bold=k_bold,
                )  # fmt: skip
                small = min(12.0, self.px)
                paint_text(painter, MARGIN, y, self.idx_w - 6, label_h, str(j), small, pal.muted)
                paint_text(
                    painter, self.width - MARGIN - self.idx_w + 6, y, self.idx_w, label_h, str(j), small,
                    pal.muted,
                )  # fmt: skip
                if followed:  # the followed query: a marker in the highlight colour
                    painter.setPen(make_pen(pal.highlight, 2.0))
                    painter.drawLine(
                        QLineF(self.q_right + 4, y + 3, self.q_right + 4, y + label_h - 3)
                    )

    def _paint_chips(self, painter, pal, theme_name) -> None:
        from PySide6.QtCore import QLineF, QRectF, Qt
        from PySide6.QtGui import QPen

        for i, x, y, w in self.chips:
            off = i in self.hidden
            r = QRectF(x, y, w, CHIP_H)
            with saved(painter):
                painter.setPen(
                    make_pen(
                        theme.head_color(i) if not off else pal.grid,
                        2.5 if i == self.inspected else 1.2,
                    )
                )
                painter.setBrush(qcolor(pal.panel if not off else pal.background))
                painter.drawRoundedRect(r, 6, 6)
                swatch = QRectF(x + 10, y + CHIP_H / 2 - 7, 14, 14)
                if off:
                    painter.setBrush(Qt.NoBrush)
                    painter.setPen(QPen(qcolor(theme.head_color(i))))
                    painter.drawRect(swatch)
                else:
                    painter.fillRect(swatch, qcolor(theme.head_color(i)))
            color = pal.muted if off else theme.head_text_color(i, theme_name)
            paint_text(
                painter, x + 30, y, w - 34, CHIP_H, f"head {i}", CHIP_PX, color,
                bold=not off,
            )  # fmt: skip
            if off:  # struck through: its lines are hidden
                painter.setPen(make_pen(pal.muted, 1.2))
                painter.drawLine(QLineF(x + 30, y + CHIP_H / 2, x + w - 8, y + CHIP_H / 2))


def lines_drawing(data, options: FigureOptions) -> LinesDrawing:
    """All heads, or only `options.extra["head"]` (the CLI's --head) when it is given;
    `options.extra["hidden"]`: heads switched off in the window's legend."""
    head = options.extra.get("head")
    return LinesDrawing(
        data,
        heads=None if head is None else [head],
        hidden=options.extra.get("hidden", ()),
        query=options.query,
        inspected=options.head if head is None else head,
        weights_range=options.weights_range,
    )


__all__ = ["LinesDrawing", "lines_drawing"]
