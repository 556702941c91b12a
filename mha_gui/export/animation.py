"""Animated GIF walkthrough: one frame per stage (all seven), written by Pillow.

Frames are PNG-quality QImage renders of `figure.render_image`, padded to the tallest
stage so every frame has the same size (the figure's top-left stays put, like slides).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from mha_gui import theme
from mha_gui.engine.session import Session
from mha_gui.engine.stages import STAGES
from mha_gui.export.figure import render_image

DEFAULT_GIF_WIDTH = 1200  # a 7-frame GIF at 1600 px is several MB; 1200 is still sharp


def qimage_to_pil(img) -> Image.Image:
    from PySide6.QtGui import QImage

    rgb = img.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = rgb.width(), rgb.height(), rgb.bytesPerLine()
    arr = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=bpl * h).reshape(h, bpl)
    arr = arr[:, : w * 3].reshape(h, w, 3).copy()
    return Image.fromarray(arr, "RGB")


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
    trace = session.run()
    w = int(width or DEFAULT_GIF_WIDTH)
    frames = [
        qimage_to_pil(
            render_image(
                session,
                s,
                head=head,
                query=query,
                width=w,
                theme_name=theme_name,
                trace=trace,
                colormap=colormap,
                weights_range=weights_range,
            )
        )
        for s in STAGES
    ]
    height = max(f.height for f in frames)
    bg = theme.palette(theme_name).background
    out = []
    for f in frames:
        canvas = Image.new("RGB", (w, height), bg)
        canvas.paste(f, (0, 0))
        out.append(canvas)
    return out


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
