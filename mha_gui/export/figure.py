"""Slide-ready figures of one stage, painted with QPainter into PNG, SVG or PDF.

Three steps, so every format shows the same picture:

1. `build_scene()` turns a session and a stage into *what* to draw: rows of labelled
   matrix panels (one per head), their colour levels, the title, formula and shapes.
2. `layout_scene()` computes *where* everything goes, in logical units (the figure is at
   most `MAX_WIDTH` units wide; fonts are sized in the same units).
3. `paint_scene()` draws the laid-out scene on any QPainter; `render_image()`,
   `write_png()`, `write_svg()` and `write_pdf()` set up the paint device and scale.

Heatmap cells are vector rectangles (`fillRect`) and every label is text, so SVG and PDF
scale without blur. Large matrices are the exception, by design:

- PNG: a panel with more than `RASTER_PANEL_CELLS` cells is drawn as one QImage with a
  pixel per cell, scaled without smoothing (smoothing only when a cell is smaller than
  a device pixel). Same picture, a hundred times faster than 16k `fillRect` calls.
- SVG/PDF: cells stay vector shapes while the whole figure has at most
  `VECTOR_CELL_LIMIT` cells (every teaching preset is far below); beyond that (e.g.
  BERT-base: 196k score cells) each panel is embedded as a nearest-neighbour upscaled
  image, so the file stays a few MB instead of 100 MB. Labels and titles stay text.
"""

from __future__ import annotations

import math

from mha_gui import theme
from mha_gui.engine.forward import Trace
from mha_gui.engine.numbers import NumberFormat, number_format, pretty
from mha_gui.engine.session import Session
from mha_gui.export.layout import (
    CAPTION_PX,
    INFO_PX,
    MARGIN,
    TITLE_PX,
    Layout,
    _bar_extent,
    _tick_values,
    layout_scene,
)
from mha_gui.export.painting import paint_scene
from mha_gui.export.scene import Panel, PanelRow, Scene, build_scene
from mha_gui.export.text import (
    _qcolor,
    draw_rich,
    draw_rich_wrapped,
    ensure_app,
    make_font,
    rich_width,
    text_width,
)

__all__ = [  # what the handout, the GIF, the window and the tests use from here
    "CAPTION_PX",
    "INFO_PX",
    "MARGIN",
    "TITLE_PX",
    "Layout",
    "NumberFormat",
    "Panel",
    "PanelRow",
    "Scene",
    "_bar_extent",
    "_qcolor",
    "_tick_values",
    "build_scene",
    "draw_rich",
    "draw_rich_wrapped",
    "ensure_app",
    "layout_scene",
    "make_font",
    "number_format",
    "paint_scene",
    "pretty",
    "rich_width",
    "text_width",
]

DEFAULT_PNG_WIDTH = 1600
PNG_DPI = 192  # "2×" of a 96-dpi screen: a 1600 px figure is about 8.3 in wide
PDF_POINTS_PER_UNIT = 0.5  # a 1600-unit figure is an 800 pt (28 cm) wide PDF page


# ---------------------------------------------------------------- back ends -------
def figure_layout(
    session: Session,
    stage,
    *,
    head: int | None = None,
    query: int | None = None,
    vector: bool = False,
    trace: Trace | None = None,
) -> Layout:
    ensure_app()
    return layout_scene(
        build_scene(session, stage, head=head, query=query, trace=trace), vector=vector
    )


def render_image(
    session: Session,
    stage,
    *,
    head: int | None = None,
    query: int | None = None,
    width: int | None = None,
    theme_name: str = "light",
    trace: Trace | None = None,
    colormap: str = theme.DEFAULT_COLORMAP,
):
    """The figure as a QImage `width` px wide (default 1600), DPI metadata set."""
    from PySide6.QtGui import QImage, QPainter

    lay = figure_layout(session, stage, head=head, query=query, vector=False, trace=trace)
    w = int(width or DEFAULT_PNG_WIDTH)
    scale = w / lay.width
    h = max(1, int(math.ceil(lay.height * scale)))
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(_qcolor(theme.palette(theme_name).background))
    dpm = int(round(PNG_DPI / 0.0254))
    img.setDotsPerMeterX(dpm)
    img.setDotsPerMeterY(dpm)
    painter = QPainter(img)
    try:
        painter.scale(scale, scale)
        paint_scene(painter, lay, theme_name, colormap)
    finally:
        painter.end()
    return img


def write_png(path, session, stage, **kw) -> None:
    img = render_image(session, stage, **kw)
    if not img.save(str(path), "PNG"):
        raise OSError(f"could not write PNG to {path}")


def write_svg(
    path,
    session: Session,
    stage,
    *,
    head=None,
    query=None,
    width=None,
    theme_name="light",
    trace=None,
    colormap=theme.DEFAULT_COLORMAP,
) -> None:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtSvg import QSvgGenerator

    lay = figure_layout(session, stage, head=head, query=query, vector=True, trace=trace)
    w = float(width or lay.width)
    h = lay.height * w / lay.width
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(QSize(int(round(w)), int(round(h))))
    gen.setViewBox(QRectF(0, 0, lay.width, lay.height))
    gen.setResolution(96)
    gen.setTitle(f"{lay.scene.title}: {lay.scene.formula}")
    gen.setDescription(f"{lay.scene.shapes}\n{lay.scene.info}\nmha-gui")
    _paint_on(gen, "SVG", path, lay, theme_name, colormap)


def _paint_on(device, kind: str, path, lay, theme_name, colormap, scale: float = 1.0) -> None:
    """Paint a laid-out figure on a vector device (SVG generator, PDF writer)."""
    from PySide6.QtGui import QPainter

    painter = QPainter()
    if not painter.begin(device):
        raise OSError(f"could not write {kind} to {path}")
    try:
        painter.scale(scale, scale)
        paint_scene(painter, lay, theme_name, colormap)
    finally:
        painter.end()


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


def write_pdf(
    path,
    session: Session,
    stage,
    *,
    head=None,
    query=None,
    width=None,
    theme_name="light",
    trace=None,
    colormap=theme.DEFAULT_COLORMAP,
) -> None:
    """One page exactly the figure's size (1 unit = 0.5 pt), all vector."""
    lay = figure_layout(session, stage, head=head, query=query, vector=True, trace=trace)
    wpt, hpt = lay.width * PDF_POINTS_PER_UNIT, lay.height * PDF_POINTS_PER_UNIT
    writer = pdf_writer(path, wpt, hpt, f"{lay.scene.title}: {lay.scene.formula}")
    scale = writer.resolution() / 72.0 * PDF_POINTS_PER_UNIT
    _paint_on(writer, "PDF", path, lay, theme_name, colormap, scale)
