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

from mha_gui import theme
from mha_gui.engine.attention.forward import Trace
from mha_gui.engine.layer.numbers import NumberFormat, number_format, pretty
from mha_gui.engine.layer.session import Session
from mha_gui.export.drawing import (
    DEFAULT_PNG_WIDTH,
    pdf_writer,
    render_drawing,
    write_drawing_pdf,
    write_drawing_png,
    write_drawing_svg,
)
from mha_gui.export.layout import (
    CAPTION_PX,
    INFO_PX,
    MARGIN,
    MAX_WIDTH,
    TITLE_PX,
    Layout,
    _bar_extent,
    _tick_values,
    layout_scene,
)
from mha_gui.export.painting import paint_scene
from mha_gui.export.scene import Panel, PanelRow, Scene, build_scene
from mha_gui.export.text import (
    draw_rich,
    draw_rich_wrapped,
    ensure_app,
    make_font,
    qcolor,
    rich_width,
    text_width,
)

__all__ = [  # what the handout, the GIF, the window and the tests use from here
    "DEFAULT_PNG_WIDTH",
    "pdf_writer",
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
    "qcolor",
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


class StageFigure:
    """A laid-out stage figure as a Drawing (see drawing.py): width, height, paint()."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.width, self.height = layout.width, layout.height
        self.title = f"{layout.scene.title}: {layout.scene.formula}"
        self.description = f"{layout.scene.shapes}\n{layout.scene.info}"

    def paint(self, painter, theme_name: str, colormap: str) -> None:
        paint_scene(painter, self.layout, theme_name, colormap)


def figure_layout(
    session: Session,
    stage,
    *,
    head: int | None = None,
    query: int | None = None,
    vector: bool = False,
    trace: Trace | None = None,
    weights_range: str = "fixed",
    max_width: float = MAX_WIDTH,
) -> Layout:
    ensure_app()
    scene = build_scene(
        session, stage, head=head, query=query, trace=trace, weights_range=weights_range
    )
    return layout_scene(scene, vector=vector, max_width=max_width)


def stage_figure(session: Session, stage, *, vector: bool, **kw) -> StageFigure:
    return StageFigure(figure_layout(session, stage, vector=vector, **kw))


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
    weights_range: str = "fixed",
):
    """The figure as a QImage `width` px wide (default 1600), DPI metadata set."""
    fig = stage_figure(
        session,
        stage,
        head=head,
        query=query,
        vector=False,
        trace=trace,
        weights_range=weights_range,
    )
    return render_drawing(fig, width, theme_name, colormap)


def _writer(vector: bool, write):
    def write_stage(
        path, session, stage, *, head=None, query=None, trace=None, weights_range="fixed", **kw
    ) -> None:
        fig = stage_figure(
            session,
            stage,
            head=head,
            query=query,
            vector=vector,
            trace=trace,
            weights_range=weights_range,
        )
        write(path, fig, **kw)

    return write_stage


write_png = _writer(False, write_drawing_png)
write_svg = _writer(True, write_drawing_svg)
write_pdf = _writer(True, write_drawing_pdf)  # one page exactly the figure's size, vector
