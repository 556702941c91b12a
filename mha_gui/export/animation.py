"""Animated GIF walkthrough: one frame per stage (all seven), written by Pillow.

Frames are slides: 16:9, every stage's figure (PNG-quality, `drawing.render_drawing`)
scaled to fill the frame and centred, so a projector shows each stage whole and large.
A figure laid out for a page is often tall (the projections stage stacks Q, K and V; the
output stage puts Y over the heads' contributions): its rows of panels are then set
side by side under the title block, in as many columns as make them largest.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageChops

from mha_gui import theme
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.export.drawing import render_drawing
from mha_gui.export.figure import StageFigure, figure_layout
from mha_gui.export.layout import INFO_PX, MARGIN, ROW_GAP, SHAPES_PX, TITLE_PX

DEFAULT_GIF_WIDTH = 1200  # a 7-frame GIF at 1600 px is several MB; 1200 is still sharp
FRAME_MARGIN = 0.03  # of the frame's width, round the content
TITLE_SHARE = 1 / 32  # the title's size on a slide, of the frame's width (37 px at 1200)
VALUE_MIN_FRAME_PX = 8  # numbers in a slide's cells at least this large, or none
# Token and axis labels on a 1200 px slide at least this large where a narrower layout
# allows it (causal-6x16's twelve projections printed theirs at ~7 px): the figure is
# then laid out at one of these widths (logical units; smaller cells, text the same
# size, so the slide scales it up more), the one whose labels print largest.
LABEL_MIN_FRAME_PX = 10
NARROWER_WIDTHS = (1200.0, 960.0, 760.0)


def qimage_to_pil(img) -> Image.Image:
    from PySide6.QtGui import QImage

    rgb = img.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = rgb.width(), rgb.height(), rgb.bytesPerLine()
    arr = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=bpl * h).reshape(h, bpl)
    arr = arr[:, : w * 3].reshape(h, w, 3).copy()
    return Image.fromarray(arr, "RGB")


def frame_size(width: int) -> tuple[int, int]:
    """A slide's frame: `width` px wide, 16:9."""
    return width, max(1, round(width * 9 / 16))


def stage_frames(
    session: Session,
    *,
    head=None,
    query=None,
    width: int | None = None,
    theme_name: str = "light",
    colormap: str = theme.DEFAULT_COLORMAP,
    weights_range: str = "fixed",
) -> list[Image.Image]:
    """One 16:9 frame per stage (a slide): the title block at one size on every frame,
    below it the stage's figure cropped to what it draws, its rows of panels in the
    columns that fill the room best, as large as the frame allows and centred under the
    title, which stays in one place, on the theme's background."""
    trace = session.run()
    w, h = frame_size(int(width or DEFAULT_GIF_WIDTH))
    bg = theme.palette(theme_name).background
    parts, layouts = [], []

    def render(lay):
        """(figure px per unit, title block, bands, padding) of `lay` drawn."""
        fig = StageFigure(lay)
        # drawn at twice the frame's resolution, then arranged and scaled down to fit
        density = 2 * max(1.0, w / fig.width)  # then scaled down: sharp, never blurred up
        size = max(1, round(fig.width * density))
        img = qimage_to_pil(render_drawing(fig, size, theme_name, colormap))
        return density, *_split(img, bg, round(_header_height() * density))

    for s in STAGES:
        lay = figure_layout(
            session, s, head=head, query=query, trace=trace, weights_range=weights_range
        )
        layouts.append(lay)
        parts.append(render(lay))
    margin = round(FRAME_MARGIN * w)
    # one size of title for every frame (frame px per figure unit): its target, or what
    # lets the widest title block fit
    unit = min(
        TITLE_SHARE * w / TITLE_PX,
        *(
            (w - 2 * margin) / (header.width / density)
            for density, header, _bands, _pad in parts
            if header is not None
        ),
    )
    frames = []
    least_label = LABEL_MIN_FRAME_PX * w / DEFAULT_GIF_WIDTH
    for s, lay, (density, header, bands, pad) in zip(STAGES, layouts, parts, strict=True):
        header = _resized(header, unit / density)
        per_unit = density * _frame_body(w, h, margin, bg, header, bands, pad)[1]
        if _label_px(lay) * per_unit < least_label:  # try narrower layouts of the stage
            for width_units in NARROWER_WIDTHS:
                narrow = figure_layout(
                    session, s, head=head, query=query, trace=trace,
                    weights_range=weights_range, max_width=width_units,
                )  # fmt: skip
                n_density, _header, n_bands, n_pad = render(narrow)
                n_per_unit = n_density * _frame_body(w, h, margin, bg, header, n_bands, n_pad)[1]
                if _label_px(narrow) * n_per_unit > _label_px(lay) * per_unit:
                    lay, density, bands, pad, per_unit = (
                        narrow, n_density, n_bands, n_pad, n_per_unit
                    )  # fmt: skip
        # numbers a slide would print below VALUE_MIN_FRAME_PX are left out (the
        # projections of causal-6x16 printed its at ~5 px): that stage drawn again
        small = [g for g in lay.panels if 0 < g.value_px * per_unit < VALUE_MIN_FRAME_PX]
        if small:
            for g in small:
                g.value_px = 0.0
            density, _header, bands, pad = render(lay)
        frames.append(_frame(w, h, margin, bg, header, bands, pad))
    return frames


def _label_px(lay) -> float:
    """The smallest token or axis label of a layout, in figure units."""
    return min((g.label_px for g in lay.panels), default=float("inf"))


def _resized(img: Image.Image | None, scale: float) -> Image.Image | None:
    if img is None:
        return None
    size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
    return img.resize(size, Image.Resampling.LANCZOS)


def _room(w: int, h: int, margin: int, header) -> tuple[int, int, int]:
    """(top, width, height) of a slide's room below its title block `header`."""
    gap = round(margin * 0.6) if header is not None else 0
    header_h = header.height if header is not None else 0
    return margin + header_h + gap, w - 2 * margin, max(1, h - 2 * margin - header_h - gap)


def _frame_body(w: int, h: int, margin: int, bg: str, header, bands, pad: int):
    """(the bands set in the columns that fill the room below `header` best, unscaled;
    the scale that fits them to it): None, 1 without bands."""
    _top, room_w, room_h = _room(w, h, margin, header)
    if not bands:
        return None, 1.0
    body, best_fill = None, -1.0
    for cols in range(1, len(bands) + 1):
        sheet = _columns(bands, cols, bg, pad)
        # how much of the room the sheet covers when scaled to fit it
        scale = min(room_w / sheet.width, room_h / sheet.height)
        fill = sheet.width * sheet.height * scale**2 / (room_w * room_h)
        if fill > best_fill + 0.02:
            body, best_fill = sheet, fill
    return body, min(room_w / body.width, room_h / body.height)


def _frame(w: int, h: int, margin: int, bg: str, header, bands, pad: int) -> Image.Image:
    """A w×h slide: `header` (at its size) at the top left, over `bands` set in the
    columns that fill the room left below it best, scaled to it and centred there (a
    title centred with its body jumped 77 px up and down and 190 px sideways from
    stage to stage as the walkthrough played)."""
    below, _room_w, room_h = _room(w, h, margin, header)
    body, scale = _frame_body(w, h, margin, bg, header, bands, pad)
    canvas = Image.new("RGB", (w, h), bg)
    if header is not None:  # in one place on every slide: the title never jumps
        canvas.paste(header, (margin, margin))
    if body is not None:  # centred in the room below it
        body = _resized(body, scale)
        canvas.paste(body, ((w - body.width) // 2, below + (room_h - body.height) // 2))
    return canvas


def _header_height() -> float:
    """The title block's height in figure units (title, shapes, settings: layout.py)."""
    return MARGIN + (TITLE_PX + SHAPES_PX + INFO_PX) * 1.5 + 18


def _ink_box(img: Image.Image, bg: str) -> tuple[int, int, int, int] | None:
    return ImageChops.difference(img, Image.new("RGB", img.size, bg)).getbbox()


def _bands(img: Image.Image, bg: str, gap: int) -> list[tuple[int, int]]:
    """The horizontal bands of ink separated by at least `gap` blank rows."""
    diff = np.asarray(ImageChops.difference(img, Image.new("RGB", img.size, bg)))
    inked = np.flatnonzero(diff.max(axis=(1, 2)) > 24)
    if not len(inked):
        return []
    bands, start, last = [], inked[0], inked[0]
    for y in inked[1:]:
        if y - last > gap:
            bands.append((int(start), int(last) + 1))
            start = y
        last = y
    bands.append((int(start), int(last) + 1))
    return bands


def _split(img: Image.Image, bg: str, header_h: int):
    """The figure's title block (cropped to its ink; None if blank), its bands of panels
    below (each cropped, wide blank gaps squeezed) and the padding between bands."""
    box = _ink_box(img, bg)
    pad = round(MARGIN * 0.75)
    if box is None:
        return None, [], pad
    header = img.crop((box[0], box[1], box[2], min(box[3], max(box[1] + 1, header_h))))
    inked = _ink_box(header, bg)
    header = header.crop(inked) if inked is not None else None
    body = img.crop((box[0], min(box[3], header_h), box[2], box[3]))
    gap = max(8, round(ROW_GAP * 0.6 * img.width / 1600))
    bands = [body.crop((0, top, body.width, bottom)) for top, bottom in _bands(body, bg, gap)]
    bands = [
        _squeezed(band.crop(_ink_box(band, bg) or (0, 0, *band.size)), bg, 2 * pad)
        for band in bands
    ]
    return header, bands, pad


def _columns(bands, cols: int, bg: str, pad: int) -> Image.Image:
    """The bands in `cols` columns (filled in order, heights balanced)."""
    per = -(-len(bands) // cols)
    groups = [bands[k : k + per] for k in range(0, len(bands), per)]
    col_w = [max(b.width for b in g) for g in groups]
    col_h = [sum(b.height for b in g) + pad * (len(g) - 1) for g in groups]
    sheet = Image.new("RGB", (sum(col_w) + 2 * pad * (len(groups) - 1), max(col_h)), bg)
    x = 0
    for group, cw in zip(groups, col_w, strict=True):
        y = 0
        for band in group:
            sheet.paste(band, (x + (cw - band.width) // 2, y))
            y += band.height + pad
        x += cw + 2 * pad
    return sheet


def _squeezed(band: Image.Image, bg: str, most: int) -> Image.Image:
    """band with every blank run of columns wider than `most` narrowed to it (a page
    sets every colour bar right of the widest line of panels: on a slide, it comes
    beside its own panels)."""
    diff = np.asarray(ImageChops.difference(band, Image.new("RGB", band.size, bg)))
    blank = diff.max(axis=(0, 2)) <= 24
    keep = np.ones(band.width, dtype=bool)
    run = 0
    for x in range(band.width):
        run = run + 1 if blank[x] else 0
        if run > most:
            keep[x] = False
    if keep.all():
        return band
    pixels = np.asarray(band)[:, keep]
    return Image.fromarray(np.ascontiguousarray(pixels), "RGB")


def write_gif(
    path,
    session: Session,
    *,
    head=None,
    query=None,
    width: int | None = None,
    theme_name: str = "light",
    frame_ms: int = 1200,
    colormap: str = theme.DEFAULT_COLORMAP,
    weights_range: str = "fixed",
) -> None:
    frames = stage_frames(
        session,
        head=head,
        query=query,
        width=width,
        theme_name=theme_name,
        colormap=colormap,
        weights_range=weights_range,
    )
    save_gif(path, frames, frame_ms)


def save_gif(path, frames: list[Image.Image], frame_ms: int = 1200) -> None:
    """Write same-size RGB `frames` as a looping GIF. One shared adaptive palette (made
    from a montage of every frame) keeps colours steady from frame to frame."""
    thumbs = [f.resize((f.width // 3, f.height // 3), Image.Resampling.NEAREST) for f in frames]
    montage = Image.new("RGB", (thumbs[0].width, sum(t.height for t in thumbs)))
    y = 0
    for t in thumbs:
        montage.paste(t, (0, y))
        y += t.height
    pal_src = montage.quantize(colors=255, method=Image.Quantize.MEDIANCUT)
    quant = [f.quantize(palette=pal_src, dither=Image.Dither.NONE) for f in frames]
    with open(path, "wb") as fh:
        quant[0].save(
            fh,
            format="GIF",
            save_all=True,
            append_images=quant[1:],
            duration=int(frame_ms),
            loop=0,
            disposal=1,
            optimize=False,
        )
