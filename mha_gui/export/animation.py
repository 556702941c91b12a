"""Animated GIF walkthrough: one frame per stage (all seven), written by Pillow.

Frames are slides: 16:9, every stage's figure (PNG-quality, `drawing.render_drawing`)
scaled to fit the frame and centred, so a projector shows each stage whole.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageChops

from mha_gui import theme
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.export.drawing import render_drawing
from mha_gui.export.figure import StageFigure, figure_layout
from mha_gui.export.layout import MARGIN

DEFAULT_GIF_WIDTH = 1200  # a 7-frame GIF at 1600 px is several MB; 1200 is still sharp


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
    """One 16:9 frame per stage (a slide): each stage's figure cropped to what it draws,
    as large as the frame allows and centred on the theme's background. (A figure is at
    least layout.MIN_WIDTH wide, so a small stage would otherwise sit off-centre.)"""
    trace = session.run()
    w, h = frame_size(int(width or DEFAULT_GIF_WIDTH))
    bg = theme.palette(theme_name).background
    out = []
    for s in STAGES:
        fig = StageFigure(
            figure_layout(
                session, s, head=head, query=query, trace=trace, weights_range=weights_range
            )
        )
        left, top, right, bottom = _ink(fig, theme_name, colormap, bg)
        scale = min(w / (right - left), h / (bottom - top))
        img = qimage_to_pil(
            render_drawing(fig, max(1, round(fig.width * scale)), theme_name, colormap)
        )
        box = [round(v * scale) for v in (left, top, right, bottom)]
        part = img.crop((box[0], box[1], min(box[2], box[0] + w), min(box[3], box[1] + h)))
        canvas = Image.new("RGB", (w, h), bg)
        canvas.paste(part, ((w - part.width) // 2, (h - part.height) // 2))
        out.append(canvas)
    return out


def _ink(fig, theme_name: str, colormap: str, bg: str) -> tuple[float, float, float, float]:
    """The box of what a figure draws, in its logical units, with a margin around it."""
    img = qimage_to_pil(render_drawing(fig, max(1, round(fig.width)), theme_name, colormap))
    box = ImageChops.difference(img, Image.new("RGB", img.size, bg)).getbbox()
    left, top, right, bottom = box or (0, 0, img.width, img.height)
    pad = MARGIN * 0.75
    return (
        max(0.0, left - pad),
        max(0.0, top - pad),
        min(fig.width, right + pad),
        min(fig.height, bottom + pad),
    )


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
