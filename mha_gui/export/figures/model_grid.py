"""The model view's figure: every layer × head's attention weights as small maps.

One row per layer, one column per head; each map is that head's n × n weights (rows:
queries, columns: keys) on the 0–1 weights colour scale, with one colour bar. Token
labels sit on the outer axes when the maps are large enough to read them. The opened
layer and the inspected head are outlined. Above each map, a chip names the head's
strongest role from 0.4 up ("prev 0.92", "induction 0.71"; engine/teaching/model_roles.py), one
colour per role (a narrow map gets "ind 0.71", then "ind"); with `show=ROLE` the heads that play that role keep their chip (with
that role's score) and the others are veiled, so a class sees at once which heads do
what. The note says where each role was measured. A Drawing (export/drawing.py): the
dock paints it and `mha-gui export --model DIR --text ... --view model` writes it.
"""

from __future__ import annotations

import math

import numpy as np

from mha_gui import theme
from mha_gui.engine.models import attention_maps
from mha_gui.engine.teaching.model_roles import grid_roles
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.painter import saved
from mha_gui.export.primitives import outline, page, paint_text
from mha_gui.export.text import draw_plain_wrapped, elide, ensure_app, qcolor, text_width

MARGIN = 24.0
COMPACT_MARGIN = 8.0  # in a dock
CLICK_HINT = "click a map to open that layer with that head inspected"


def _joined(*parts: str) -> str:
    """The note's parts that say something, " · " between them."""
    return " · ".join(p for p in parts if p)


TITLE_PX, NOTE_PX, LABEL_PX, TOKEN_PX, TICK_PX = 22.0, 14.0, 14.0, 10.0, 12.0
ROLE_PX = 13.0
GAP = 8.0
BAND = ROLE_PX * 1.7  # above each map: its role chip
VEIL = 0.72  # how much of the background covers a head the chosen role leaves out
# One colour per role, white text on it: readable on the light and the dark theme alike.
ROLE_COLOURS = {
    "previous": "#1f66a8",
    "induction": "#7b3fa0",
    "agreement": "#2e7d32",
    "antecedent": "#b34700",
}
OTHER_ROLE = "#5c6b73"  # first, self, duplicate: patterns more than roles
SHORTER = {"induction": "ind", "agreement": "agr", "antecedent": "ante"}
GRID_WIDTH = 1300.0  # the maps share about this much width
MIN_CELL, MAX_CELL = 48.0, 150.0
LAYER_W = 72.0
BAR_W, BAR_GAP = 16.0, 26.0
TOKEN_W = 90.0  # the widest token label on the left axis
BLOCK_GAP = 22.0  # between side-by-side columns of layer blocks
VECTOR_CELLS = 200_000  # SVG/PDF draw every weight as a rectangle up to this many


class ModelGridDrawing:
    """The grid of `maps` (an engine ModelAttention). `layer`/`head`: what the window has
    open (outlined; None for none); `hint`: say that a click opens a layer. `roles`: the
    heads' GridRoles (engine/teaching/model_roles.py), or None with `roles_note` saying why (still
    measuring, failed); `show`: a role whose heads are highlighted, the others veiled."""

    def __init__(
        self, maps, layer=None, head=None, hint=False, fit=None, roles=None, show=None,
        roles_note="",
    ):  # fmt: skip
        """`fit` = (width, height): size the maps so the grid fills that box (a dock);
        None: the figure's own size (about 1600 units wide)."""
        ensure_app()
        self.maps, self.layer, self.head = maps, layer, head
        # in a dock (`fit`): no title (the dock's own title bar says it), a narrow margin
        # and a one-line note (the dock's status line says where the roles were
        # measured): the room goes to the maps, drawn at full size so their labels read
        self.compact = fit is not None
        self.margin = COMPACT_MARGIN if self.compact else MARGIN
        if show is not None and (roles is None or show not in roles.measured):
            show = None  # a role this grid has no scores for shows every head
        self.roles, self.show = roles, show
        info = maps.info
        L, H = len(maps.layers), info.n_heads
        self.n = n = len(maps.tokens)
        self.title = f"{info.name}: attention weights of every layer × head"
        click = CLICK_HINT if hint else ""
        where = roles.note() if roles is not None else roles_note
        highlighted = (
            f"highlighted: the heads scoring ≥ {roles.roles.threshold:.2f} as {show}"
            if show
            else ""
        )
        self.note = _joined(
            f"{n} tokens: {elide(' '.join(maps.tokens), NOTE_PX, 900)}",
            "each map: rows = queries, columns = keys, one colour scale 0–1",
            "the model's own weights", click, where, highlighted,
        )  # fmt: skip
        # in a dock: what a click does, why roles are missing, what is highlighted (the
        # legend of short chip names joins it once the cell is known)
        self.header_note = _joined(click, roles_note if roles is None else "", highlighted)
        widest = max(text_width(t, TOKEN_PX) for t in maps.tokens)
        self.token_full, self.bottom_full = min(TOKEN_W, widest + 6), min(TOKEN_W, widest + 8)
        if fit is None:
            choices = [(1, True), (1, False)]
        else:  # a wide, short dock: layers flow into side-by-side columns of blocks
            choices = [(k, labels) for labels in (True, False) for k in range(1, L + 1)]
        best = None
        for k, labels in choices:
            cell = self._cell(k, labels, fit)
            readable = not labels or cell / n >= TOKEN_PX * 0.9  # a label fits a map row
            if readable and (best is None or cell > best[0] + 0.5):
                best = (cell, k, labels)
            if fit is None and readable:
                break
        self.cell, self.columns, self.labels = best
        self.note += self._legend()  # after the cell size: it says which chips are short
        if self.compact:
            legend = _joined(self.header_note, self._legend().removeprefix(" · "))
            self.header_note = elide(legend, NOTE_PX, fit[0] - 2 * self.margin)
        self.pitch = BAND + self.cell + GAP  # one layer's row: chips, maps, gap
        self.per = math.ceil(L / self.columns)  # layers per column of blocks
        self.token_w = self.token_full if self.labels else 0.0
        bottom = self.bottom_full if self.labels else 0.0
        self.block_w = LAYER_W + self.token_w + H * (self.cell + GAP) + BLOCK_GAP
        self.width = 2 * self.margin + self.columns * self.block_w + BAR_GAP + BAR_W + 40
        if fit is not None:  # the title and the note take the dock's whole width
            self.width = max(self.width, fit[0])
        if not self.compact:
            self.width = max(self.width, text_width(self.title, TITLE_PX, True) + 2 * self.margin)
        self.note_h = self._note_height(self.width)
        self.y0 = self._top(self.note_h)
        self.height = self.y0 + self.per * self.pitch - GAP + bottom + self.margin
        # the colour bar beside the maps: as tall as their rows (one short row: a bit more)
        self.bar_h = min(260.0, max(60.0, self.per * self.pitch - GAP - BAND))
        self.height = max(self.height, self.y0 + BAND + self.bar_h + self.margin)
        self.description = (
            f"{info.summary()}; {n} tokens; layers {maps.layers[0]}–{maps.layers[-1]}"
        )
        self._images: dict[str, list] = {}

    def _note_height(self, width: float) -> float:
        if self.compact:
            return NOTE_PX * 1.45 if self.header_note else 0.0
        return draw_plain_wrapped(None, 0, 0, width - 2 * self.margin, self.note, NOTE_PX, "")

    def _top(self, note_h: float) -> float:
        title = 0.0 if self.compact else TITLE_PX * 1.6
        gap = 6 if self.compact else 10
        return self.margin + title + note_h + gap + LABEL_PX * 1.8

    def _cell(self, k: int, labels: bool, fit) -> float:
        """The map size with `k` columns of layer blocks (with or without token labels)."""
        L, H = len(self.maps.layers), self.maps.info.n_heads
        fixed = LAYER_W + (self.token_full if labels else 0.0) + BLOCK_GAP
        side = 2 * self.margin + BAR_GAP + BAR_W + 40
        if fit is None:
            cell = GRID_WIDTH / H - GAP
            return max(MIN_CELL, min(MAX_CELL, cell))
        note_h = self._note_height(fit[0])
        bottom = self.bottom_full if labels else 0.0
        per = math.ceil(L / k)
        across = (fit[0] - side - k * fixed) / (k * H)
        down = (fit[1] - self._top(note_h) - bottom - self.margin + GAP) / per - BAND
        return max(20.0, min(MAX_CELL, min(across, down) - GAP))

    # ----------------------------------------------------------------- geometry ---
    def map_rect(self, row: int, head: int) -> tuple[float, float, float, float]:
        """Where layer number `row` (of maps.layers) and `head` are drawn."""
        column, r = divmod(row, self.per)
        left = self.margin + column * self.block_w + LAYER_W + self.token_w
        return (left + head * (self.cell + GAP), self.y0 + r * self.pitch + BAND,
                self.cell, self.cell)  # fmt: skip

    def hit(self, x: float, y: float):
        """("map", layer, head) under (x, y), or None."""
        for row, layer in enumerate(self.maps.layers):
            for head in range(self.maps.info.n_heads):
                left, top, w, h = self.map_rect(row, head)
                if left <= x < left + w and top <= y < top + h:
                    return ("map", layer, head)
        return None

    def tooltip(self, item) -> str:
        _kind, layer, head = item
        weights = self.maps.of(layer)[head]
        q, k = np.unravel_index(int(np.argmax(weights)), weights.shape)
        tokens = self.maps.tokens
        roles = ""
        if self.roles is not None:
            row = self.maps.layers.index(layer)
            named = self.roles.label(row, head)
            roles = (f" Role: {named}." if named else " No role reaches "
                     f"{self.roles.roles.threshold:.2f}.") + (
                f" Best scores: {self.roles.summary(row, head)}.")  # fmt: skip
        return (
            f"layer {layer} · head {head}: strongest weight {weights[q, k]:.2f}, "
            f"query “{tokens[q]}” → key “{tokens[k]}”.{roles} Click to open layer {layer} "
            f"with head {head} inspected."
        )

    def chip(self, row: int, head: int) -> tuple[str, str] | None:
        """(text, role) of the chip above a map, or None: the strongest role, or with
        `show` the shown role's score for the heads that play it."""
        if self.roles is None:
            return None
        if self.show is not None:
            if not self.roles.plays(self.show, row, head):
                return None
            return self.roles.label(row, head, self.show), self.show
        best = self.roles.roles.strongest(row, head)
        return None if best is None else (self.roles.label(row, head), best[0])

    def fitted(self, text: str, role: str) -> str:
        """A chip's text for this map width: "induction 0.71", else "ind 0.71", else "ind"."""
        room = self.cell + GAP - 2
        name, score = text.rsplit(" ", 1)
        short = SHORTER.get(role, name)
        for candidate in (text, f"{short} {score}", short):  # the first that fits
            if text_width(candidate, ROLE_PX, True) + 10 <= room:
                return candidate
        return elide(short, ROLE_PX, room - 10, True)

    def _legend(self) -> str:
        """ " · ind = induction, …" for the short names the chips use, else ""."""
        if self.roles is None:
            return ""
        rows, heads = self.roles.roles.shape
        short = set()
        for row in range(rows):
            for head in range(heads):
                chip = self.chip(row, head)
                if chip is not None and self.fitted(*chip) != chip[0]:
                    short.add(chip[1])
        named = [f"{SHORTER[r]} = {r}" for r in SHORTER if r in short]
        return f" · {', '.join(named)}" if named else ""

    def veiled(self, row: int, head: int) -> bool:
        return self.show is not None and not self.roles.plays(self.show, row, head)

    # ----------------------------------------------------------------- painting ---
    def _map_images(self, colormap: str) -> list:
        if colormap not in self._images:
            from PySide6.QtGui import QImage

            lut = theme.colormap_for("weights", colormap)
            images = []
            for layer_maps in self.maps.weights:
                row = []
                for w in layer_maps:
                    rgb = np.ascontiguousarray(theme.colors_for(w, (0.0, 1.0), lut), np.uint8)
                    img = QImage(rgb.data, self.n, self.n, 3 * self.n, QImage.Format.Format_RGB888)
                    row.append(img.copy())
                images.append(row)
            self._images[colormap] = images
        return self._images[colormap]

    def paint(self, painter, theme_name: str, colormap: str) -> None:
        from PySide6.QtCore import QRectF, Qt

        pal = theme.palette(theme_name)
        with page(painter, self, pal):
            if self.compact:
                paint_text(painter, self.margin, self.margin, self.width - 2 * self.margin,
                           NOTE_PX * 1.45, self.header_note, NOTE_PX, pal.muted)  # fmt: skip
            else:
                paint_text(painter, self.margin, self.margin, self.width, TITLE_PX * 1.4,
                           self.title, TITLE_PX, pal.text, bold=True)  # fmt: skip
                draw_plain_wrapped(painter, self.margin, self.margin + TITLE_PX * 1.6,
                                   self.width - 2 * self.margin, self.note, NOTE_PX,
                                   pal.muted)  # fmt: skip
            vector = self._is_vector(painter)
            painter.setRenderHint(painter.RenderHint.SmoothPixmapTransform, False)
            images = None if vector else self._map_images(colormap)
            lut = theme.colormap_for("weights", colormap)
            short = self.cell < text_width("head 00", LABEL_PX, True) + 4
            for column in range(self.columns):
                for head in range(self.maps.info.n_heads):
                    left, top, w, _h = self.map_rect(column * self.per, head)
                    top -= BAND
                    color = theme.head_text_color(head, theme_name)
                    paint_text(painter, left - GAP / 2, top - LABEL_PX * 1.7, w + GAP,
                               LABEL_PX * 1.5, f"{'' if short else 'head '}{head}", LABEL_PX,
                               color, Qt.AlignCenter, head == self.head)  # fmt: skip
            for row, layer in enumerate(self.maps.layers):
                left, top, w, h = self.map_rect(row, 0)
                mine = layer == self.layer
                paint_text(painter, left - self.token_w - LAYER_W, top, LAYER_W, h,
                           f"layer {layer}", LABEL_PX, pal.text if mine else pal.muted, None,
                           mine)  # fmt: skip
                if self.labels:
                    self._token_axis(painter, pal, left - self.token_w - 4, top, vertical=False)
                for head in range(self.maps.info.n_heads):
                    rect = QRectF(*self.map_rect(row, head))
                    if vector:
                        self._vector_map(painter, rect, self.maps.weights[row, head], lut)
                    else:
                        painter.drawImage(rect, images[row][head])
                    if self.veiled(row, head):
                        veil = qcolor(pal.background)
                        veil.setAlphaF(VEIL)
                        painter.fillRect(rect, veil)
                    outline(painter, rect, pal.grid, 0.8)
                    self._chip(painter, row, head, rect)
                    if mine and head == self.head:
                        outline(painter, rect.adjusted(-2.5, -2.5, 2.5, 2.5), pal.highlight, 3.0)
            if self.labels:
                L = len(self.maps.layers)
                for column in range(self.columns):
                    last = min(L, (column + 1) * self.per) - 1
                    for head in range(self.maps.info.n_heads):
                        left, _top, _w, _h = self.map_rect(last, head)
                        bottom = self.y0 + self.per * self.pitch - GAP
                        self._token_axis(painter, pal, left, bottom + 4, vertical=True)
            self._bar(painter, pal, lut)

    def _chip(self, painter, row: int, head: int, rect) -> None:
        """The role's name and score on the role's colour, centred above the map; the
        short name when the full one is wider than the map."""
        from PySide6.QtCore import QRectF, Qt

        chip = self.chip(row, head)
        if chip is None:
            return
        text, role = chip
        text = self.fitted(text, role)
        room = rect.width() + GAP - 2
        w = min(room, text_width(text, ROLE_PX, True) + 10)
        box = QRectF(rect.center().x() - w / 2, rect.top() - BAND + 1, w, BAND - 4)
        with saved(painter):
            painter.setPen(Qt.NoPen)
            painter.setBrush(qcolor(ROLE_COLOURS.get(role, OTHER_ROLE)))
            painter.drawRoundedRect(box, 4, 4)
        paint_text(painter, box.left(), box.top(), box.width(), box.height(), text, ROLE_PX,
                   "#ffffff", Qt.AlignCenter, True)  # fmt: skip

    @staticmethod
    def _is_vector(painter) -> bool:
        """SVG and PDF files get one rectangle per weight (sharp at any zoom); the screen
        and PNG get one image per map (fast)."""
        from PySide6.QtGui import QPdfWriter
        from PySide6.QtSvg import QSvgGenerator

        return isinstance(painter.device(), (QSvgGenerator, QPdfWriter))

    def _vector_map(self, painter, rect, weights, lut) -> None:
        from PySide6.QtCore import QRectF

        if weights.size * len(self.maps.layers) * self.maps.info.n_heads > VECTOR_CELLS:
            rgb = np.ascontiguousarray(theme.colors_for(weights, (0.0, 1.0), lut), np.uint8)
            from PySide6.QtGui import QImage

            img = QImage(rgb.data, self.n, self.n, 3 * self.n, QImage.Format.Format_RGB888)
            painter.drawImage(rect, img.copy())
            return
        colours = theme.colors_for(weights, (0.0, 1.0), lut)
        step = rect.width() / self.n
        for r in range(self.n):
            for c in range(self.n):
                painter.fillRect(
                    QRectF(rect.left() + c * step, rect.top() + r * step, step + 0.05, step + 0.05),
                    qcolor(colours[r, c]),
                )

    def _token_axis(self, painter, pal, x: float, y: float, vertical: bool) -> None:
        """Query labels left of a row's first map, or key labels under a map (turned)."""
        from PySide6.QtCore import Qt

        step = self.cell / self.n
        for i, token in enumerate(self.maps.tokens):
            label = elide(token, TOKEN_PX, TOKEN_W - 6)
            if not vertical:
                paint_text(painter, x, y + i * step, self.token_w, step, label, TOKEN_PX,
                           pal.muted, Qt.AlignRight | Qt.AlignVCenter)  # fmt: skip
                continue
            with saved(painter):
                painter.translate(x + (i + 0.5) * step, y)
                painter.rotate(90)
                paint_text(painter, 0, -step / 2, TOKEN_W, step, label, TOKEN_PX, pal.muted)

    def _bar(self, painter, pal, lut) -> None:
        from PySide6.QtCore import QRectF, Qt

        x = self.margin + self.columns * self.block_w - BLOCK_GAP + BAR_GAP - GAP
        y = self.y0 + BAND
        h = self.bar_h
        steps = 64
        for k in range(steps):
            rgb = theme.colors_for(np.array([1 - (k + 0.5) / steps]), (0.0, 1.0), lut)[0]
            painter.fillRect(QRectF(x, y + h * k / steps, BAR_W, h / steps + 0.5), qcolor(rgb))
        outline(painter, QRectF(x, y, BAR_W, h), pal.grid)
        for v in (0.0, 0.5, 1.0):
            paint_text(painter, x + BAR_W + 5, y + h * (1 - v) - TICK_PX, 40, TICK_PX * 2,
                       f"{v:g}", TICK_PX, pal.text, Qt.AlignLeft | Qt.AlignVCenter)  # fmt: skip
        paint_text(painter, x - 4, y - LABEL_PX * 1.7, 80, LABEL_PX * 1.5, "weight",
                   TICK_PX, pal.muted)  # fmt: skip


def model_drawing(_data, options: FigureOptions) -> ModelGridDrawing:
    """`export --model DIR --text ... --view model`: the grid of every layer × head,
    labelled with the heads' roles as in the window."""
    extra = options.extra or {}
    if not extra.get("model"):
        raise ValueError("--view model needs --model DIR and --text (or --token-ids)")
    ids = extra.get("token_ids")
    maps = attention_maps(extra["model"], text=extra.get("text"), token_ids=ids)
    roles = grid_roles(maps, extra["model"])
    layer = extra.get("layer")
    if layer is not None and layer < 0:  # --layer -1: the last
        layer += maps.info.n_layers
    return ModelGridDrawing(maps, layer=layer, head=extra.get("head"), roles=roles)
