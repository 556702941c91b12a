"""Any figure — a stage's panels, the neuron view, token lines — written as PNG, SVG or PDF.

A *drawing* knows its size in logical units and paints itself on a QPainter already
scaled to those units. The same drawing object paints a view's widget on screen and the
exported file, so what a teacher sees is what they export. This module only sets up the
paint devices (an image with DPI metadata, an SVG generator, a PDF page of the figure's
size) and scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from mha_gui import theme
from mha_gui.export.painter import painter_on
from mha_gui.export.text import ensure_app, qcolor

DEFAULT_PNG_WIDTH = 1600
PNG_DPI = 192  # "2×" of a 96-dpi screen: a 1600 px figure is about 8.3 in wide
PDF_POINTS_PER_UNIT = 0.5  # a 1600-unit figure is an 800 pt (28 cm) wide PDF page
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


@dataclass(frozen=True)
class FigureOptions:
    """What an exported view shows besides the session (the CLI's flags, the window's
    current selection)."""

    stage: int = 0
    head: int = 0
    query: int = 0
    key: int | None = None
    weights_range: str = "fixed"  # "fixed" (0–1), "head" (per-head max), "row" (per-row max)
    against: object | None = None  # another Session (the A/B difference view)
    extra: dict = field(default_factory=dict)


class Drawing(Protocol):
    """A figure in logical units: `paint` draws it inside (0, 0, width, height)."""

    width: float
    height: float
    title: str  # the SVG/PDF document title
    description: str  # the SVG description (shapes, settings)

    def paint(self, painter, theme_name: str, colormap: str) -> None: ...


def render_drawing(
    drawing: Drawing,
    width: int | None = None,
    theme_name: str = "light",
    colormap: str = theme.DEFAULT_COLORMAP,
):
    """The drawing as a QImage `width` px wide (default 1600), DPI metadata set."""
    from PySide6.QtGui import QImage

    ensure_app()
    w = int(width or DEFAULT_PNG_WIDTH)
    scale = w / drawing.width
    h = max(1, int(math.ceil(drawing.height * scale)))
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(qcolor(theme.palette(theme_name).background))
    dpm = int(round(PNG_DPI / 0.0254))
    img.setDotsPerMeterX(dpm)
    img.setDotsPerMeterY(dpm)
    with painter_on(img) as painter:
        painter.scale(scale, scale)
        drawing.paint(painter, theme_name, colormap)
    return img


def write_drawing_png(path, drawing: Drawing, *, width=None, theme_name="light", colormap=None):
    img = render_drawing(drawing, width, theme_name, colormap or theme.DEFAULT_COLORMAP)
    if not img.save(str(path), "PNG"):
        raise OSError(f"could not write PNG to {path}")


def write_drawing_svg(path, drawing: Drawing, *, width=None, theme_name="light", colormap=None):
    """SVG whose cells are <rect>s and labels <text>: a slide scales it without blur."""
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtSvg import QSvgGenerator

    ensure_app()
    w = float(width or drawing.width)
    h = drawing.height * w / drawing.width
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(QSize(int(round(w)), int(round(h))))
    gen.setViewBox(QRectF(0, 0, drawing.width, drawing.height))
    gen.setResolution(96)
    gen.setTitle(drawing.title)
    gen.setDescription(f"{drawing.description}\nmha-gui")
    _paint_on(gen, "SVG", path, drawing, theme_name, colormap or theme.DEFAULT_COLORMAP)


def pdf_writer(path, width_pt: float, height_pt: float, title: str):
    from PySide6.QtCore import QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

    writer = QPdfWriter(str(path))
    writer.setResolution(600)
    writer.setCreator("mha-gui")
    writer.setTitle(title)
    size = QPageSize(
        QSizeF(width_pt, height_pt), QPageSize.Unit.Point, "", QPageSize.SizeMatchPolicy.ExactMatch
    )
    # QPageSize keeps a custom size as given; Portrait means "do not swap".
    portrait = QPageLayout.Orientation.Portrait
    writer.setPageLayout(QPageLayout(size, portrait, QMarginsF(0, 0, 0, 0)))
    return writer


def write_drawing_pdf(path, drawing: Drawing, *, width=None, theme_name="light", colormap=None):
    """One page exactly the drawing's size (1 unit = 0.5 pt), all vector."""
    ensure_app()
    wpt, hpt = drawing.width * PDF_POINTS_PER_UNIT, drawing.height * PDF_POINTS_PER_UNIT
    writer = pdf_writer(path, wpt, hpt, drawing.title)
    scale = writer.resolution() / 72.0 * PDF_POINTS_PER_UNIT
    cmap = colormap or theme.DEFAULT_COLORMAP
    _paint_on(writer, "PDF", path, drawing, theme_name, cmap, scale)


def _paint_on(device, kind: str, path, drawing, theme_name, colormap, scale: float = 1.0) -> None:
    """Paint a drawing on a vector device (SVG generator, PDF writer)."""
    with painter_on(device, kind, path) as painter:
        painter.scale(scale, scale)
        drawing.paint(painter, theme_name, colormap)


WRITERS = {".png": write_drawing_png, ".svg": write_drawing_svg, ".pdf": write_drawing_pdf}
