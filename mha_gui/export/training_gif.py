"""Pictures of a "train a head" run (issue 10): the target, the head's weights now and the
loss curve so far — painted with QPainter, for the train panel's small grids and for the
training GIF (one frame per recorded snapshot, written by animation.save_gif).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontInfo, QImage, QPainter, QPainterPath, QPen

from mha_gui import theme
from mha_gui.engine.layer.numbers import num
from mha_gui.engine.layer.session import atomic_write
from mha_gui.engine.panels.stage_panels import stage_format
from mha_gui.export.animation import qimage_to_pil, save_gif
from mha_gui.export.painter import painter_on, saved

FRAME_SIZE = (960, 400)
MAX_TURNED_SHARE = 0.3  # turned column labels take at most this share of a grid's height


@dataclass(frozen=True)
class Snapshot:
    """One recorded moment of a run: after `step` steps, the head's weights and the
    loss curve up to then."""

    step: int
    weights: np.ndarray
    losses: tuple[float, ...]


def paint_grid(
    p: QPainter,
    rect: QRectF,
    matrix: np.ndarray,
    *,
    palette: theme.Palette,
    lut: np.ndarray,
    blocked: np.ndarray | None = None,
    labels: list[str] | None = None,
    values: bool = True,
) -> QRectF:
    """An n×n weights matrix on a 0–1 scale in `rect` (square cells, token labels on the
    left and bottom when given; blocked cells grey). Returns the cells' rectangle."""
    n = matrix.shape[0]
    margin, below_h, rotated = 0.0, 0.0, False
    font = QFont(p.font())
    if labels:
        # up to the painter's own font size (the window's zoom), 13 px at least
        largest = max(13, QFontInfo(p.font()).pixelSize())
        font.setPixelSize(max(9, min(largest, int(rect.height() / (n + 2) / 2))))
        p.setFont(font)
        fm = p.fontMetrics()
        margin = max(fm.horizontalAdvance(str(t)) for t in labels) + 6
        widest = max(fm.horizontalAdvance(str(t)) for t in labels[:n])
        below_h = fm.height() + 4
        upright = min(rect.width() - margin, rect.height() - below_h)
        # a column label wider than its column is turned to read upwards ("three" under
        # a 30 px column was "th…"), up to MAX_TURNED_SHARE of the grid's height
        if widest > upright / n - 3:
            rotated = True
            below_h = min(widest, MAX_TURNED_SHARE * rect.height()) + 6
    side = min(rect.width() - margin, rect.height() - below_h)
    cell = side / n
    grid = QRectF(rect.left() + margin, rect.top(), cell * n, cell * n)
    colours = theme.colors_for(np.clip(matrix, 0, 1), (0.0, 1.0), lut)
    if blocked is not None:
        colours = np.where(blocked[..., None], _rgb(palette.blocked), colours)
    rgb = np.ascontiguousarray(colours, dtype=np.uint8)
    image = QImage(rgb.data, n, n, 3 * n, QImage.Format.Format_RGB888)
    with saved(p):
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        p.drawImage(grid, image)  # one image, however large n is
    if values and cell >= 22:
        fmt = stage_format("weights", (0.0, 1.0))  # as the weights panels print them
        value_font = QFont(font)
        value_font.setPixelSize(max(7, min(16, int(cell / 3.2))))
        p.setFont(value_font)
        for r in range(n):
            for c in range(n):
                if blocked is not None and blocked[r, c]:
                    continue
                box = QRectF(grid.left() + c * cell, grid.top() + r * cell, cell, cell)
                p.setPen(QColor(theme.text_color_on(rgb[r, c])))
                p.drawText(box, Qt.AlignmentFlag.AlignCenter, fmt.cell(float(matrix[r, c])))
    p.setPen(QPen(QColor(palette.muted), 1))
    p.drawRect(grid)
    if labels:
        p.setFont(font)
        p.setPen(QColor(palette.text))
        fm = p.fontMetrics()
        for i, t in enumerate(labels[:n]):
            left = QRectF(rect.left(), grid.top() + i * cell, margin - 4, cell)
            p.drawText(left, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(t))
            if rotated:  # read bottom to top, its end at the grid
                with saved(p):
                    p.translate(grid.left() + (i + 0.5) * cell, grid.bottom() + 3)
                    p.rotate(-90)
                    room = below_h - 6
                    text = fm.elidedText(str(t), Qt.TextElideMode.ElideRight, int(room))
                    box = QRectF(-room, -cell / 2, room, cell)
                    p.drawText(
                        box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text
                    )
                continue
            below = QRectF(grid.left() + i * cell, grid.bottom() + 1, cell, below_h)
            text = _column_label(fm, str(t), max(0, int(cell) - 3))
            p.drawText(below, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, text)
    return grid


def _column_label(fm, text: str, width: int) -> str:
    """A column's label inside its column, so neighbours never touch: elided, or its
    first letters where even "x…" would not fit."""
    elided = fm.elidedText(text, Qt.TextElideMode.ElideRight, width)
    if elided not in ("", "…"):
        return elided
    while text and fm.horizontalAdvance(text) > width:
        text = text[:-1]
    return text


def paint_loss(
    p: QPainter,
    rect: QRectF,
    losses,
    *,
    palette: theme.Palette,
    steps: int | None = None,
    top: float | None = None,
    floor: float = 0.0,
) -> None:
    """The loss curve so far on fixed axes (x: 0..`steps`, y: `floor`..`top`), so the
    frames of a GIF share one scale and the curve grows from left to right."""
    losses = [float(v) for v in losses]
    steps = max(1, steps if steps is not None else len(losses) - 1)
    top = top if top is not None else max(losses, default=1.0)
    lo = min(floor, min(losses, default=0.0))
    if not math.isfinite(top) or top <= lo:
        top = lo + 1.0
    font = QFont(p.font())
    font.setPixelSize(12)
    p.setFont(font)
    plot = rect.adjusted(44, 8, -8, -22)
    p.setPen(QPen(QColor(palette.muted), 1))
    p.drawLine(plot.bottomLeft(), plot.bottomRight())
    p.drawLine(plot.bottomLeft(), plot.topLeft())
    p.setPen(QColor(palette.text))
    right, vcentre = Qt.AlignmentFlag.AlignRight, Qt.AlignmentFlag.AlignVCenter
    for value, y in ((top, plot.top()), (lo, plot.bottom())):
        p.drawText(QRectF(rect.left(), y - 8, 40, 16), right | vcentre, num(value, 2))
    p.drawText(
        QRectF(plot.left(), plot.bottom() + 3, plot.width(), 16),
        Qt.AlignmentFlag.AlignHCenter,
        f"step (0 … {steps})",
    )
    if floor > lo or floor > 0:
        y = plot.bottom() - (floor - lo) / (top - lo) * plot.height()
        dash = QPen(QColor(palette.muted), 1, Qt.PenStyle.DashLine)
        p.setPen(dash)
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
    if len(losses) < 2:
        return
    path = QPainterPath()
    for i, v in enumerate(losses):
        point = QPointF(
            plot.left() + i / steps * plot.width(),
            plot.bottom() - (min(v, top) - lo) / (top - lo) * plot.height(),
        )
        if i == 0:
            path.moveTo(point)
        else:
            path.lineTo(point)
    p.setPen(QPen(QColor(theme.head_color(0)), 2))
    p.drawPath(path)


def training_frame(
    snap: Snapshot,
    *,
    target: np.ndarray,
    head: int,
    tokens: list[str],
    blocked: np.ndarray | None,
    title: str,
    steps: int,
    top: float,
    floor: float,
    theme_name: str = "light",
    colormap: str = theme.DEFAULT_COLORMAP,
    size: tuple[int, int] = FRAME_SIZE,
) -> QImage:
    """One GIF frame: the target, head `head`'s weights after `snap.step` steps and the
    loss curve up to then."""
    pal = theme.palette(theme_name)
    lut = theme.colormap_for("weights", colormap)
    w, h = size
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(QColor(pal.background))
    with painter_on(img) as p:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont(p.font())
        font.setPixelSize(16)
        font.setBold(True)
        p.setFont(font)
        p.setPen(QColor(pal.text))
        loss = snap.losses[-1] if snap.losses else float("nan")
        p.drawText(
            QRectF(12, 6, w - 24, 24),
            Qt.AlignmentFlag.AlignLeft,
            f"{title} — step {snap.step}, loss {num(loss, 3)}",
        )
        font.setPixelSize(13)
        font.setBold(False)
        p.setFont(font)
        side = min(h - 80, (w - 60) * 0.28)
        top_y = 44
        for x, caption, matrix in (
            (12.0, "target", target),
            (12.0 + side + 60, f"A{_sub(head)} now", snap.weights),
        ):
            p.setPen(QColor(pal.text))
            p.drawText(QRectF(x, top_y - 4, side + 40, 18), Qt.AlignmentFlag.AlignHCenter, caption)
            rect = QRectF(x, top_y + 18, side + 40, side + 18)
            paint_grid(
                p,
                rect,
                _rows_normalised(matrix),
                palette=pal,
                lut=lut,
                blocked=blocked,
                labels=tokens,
            )
        x0 = 12.0 + 2 * (side + 60) + 30
        p.setPen(QColor(pal.text))
        p.setFont(font)
        p.drawText(QRectF(x0, top_y - 4, w - x0 - 12, 18), Qt.AlignmentFlag.AlignHCenter, "loss")
        paint_loss(
            p,
            QRectF(x0, top_y + 18, w - x0 - 12, h - top_y - 30),
            snap.losses,
            palette=pal,
            steps=steps,
            top=top,
            floor=floor,
        )
    return img


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)


def _rows_normalised(t: np.ndarray) -> np.ndarray:
    sums = t.sum(axis=1, keepdims=True)
    return np.divide(t, sums, out=np.zeros_like(t, dtype=float), where=sums > 0)


def _sub(i: int) -> str:
    return "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(i))


def write_training_gif(path, snaps: list[Snapshot], frame_ms: int = 250, **frame) -> Path:
    """One frame per snapshot (see `training_frame` for the keywords), written atomically;
    the last frame stays a little longer. ValueError when there is nothing to write."""
    if not snaps:
        raise ValueError("nothing to export yet: press Step or Play first")
    steps = max(s.step for s in snaps)
    losses = [v for s in snaps for v in s.losses]
    top = max(losses) if losses else 1.0
    images = [qimage_to_pil(training_frame(s, steps=steps, top=top, **frame)) for s in snaps]
    return atomic_write(Path(path), lambda tmp: save_gif(tmp, images, frame_ms))
