"""What a view draws when it has no figure to show: a title and a few paragraphs.

One look for every such message — no snapshot pinned (the difference view), no model
open or the maps still computing (the model view), an identity that does not apply
(the identity windows) — so a dock that cannot show its figure says why, in the same
place and type as the figure would be. A Drawing (export/drawing.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from mha_gui import theme
from mha_gui.export.primitives import page
from mha_gui.export.text import (
    draw_plain_wrapped,
    draw_rich_wrapped,
    ensure_app,
    wrapped_height,
)

MARGIN = 28.0
TITLE_PX, TEXT_PX = 22.0, 16.0
TITLE_GAP, PARAGRAPH_GAP = 14.0, 12.0
# A failure reads as one: red on either theme, as the window's error messages.
ERROR = {"light": theme.ERROR_RED, "dark": "#ef9a9a"}


class MessageDrawing:
    """`title` above `paragraphs` (one string or several), wrapped to `width`.

    `error`: the paragraphs are a failure (red). `rich`: formula text (`d_model`, `W^Q`)
    gets its sub/superscripts; a message quoting tokens or file names (which may hold
    `_` or `^`) passes rich=False and is printed as it is."""

    def __init__(
        self,
        title: str,
        paragraphs: str | Sequence[str],
        *,
        error: bool = False,
        rich: bool = True,
        width: float = 760.0,
    ):
        ensure_app()
        self.title = title
        self.paragraphs = [paragraphs] if isinstance(paragraphs, str) else list(paragraphs)
        self.error, self.rich = error, rich
        self.description = "\n".join(self.paragraphs)
        self.width = width
        inner = width - 2 * MARGIN
        self.title_h = self._measure(title, TITLE_PX, inner, True)
        self.paragraph_h = [self._measure(p, TEXT_PX, inner) for p in self.paragraphs]
        self.height = (
            MARGIN
            + self.title_h
            + TITLE_GAP
            + sum(h + PARAGRAPH_GAP for h in self.paragraph_h)
            + MARGIN
        )

    def _measure(self, text: str, px: float, width: float, bold: bool = False) -> float:
        if self.rich:
            return wrapped_height(text, px, width, bold)
        return draw_plain_wrapped(None, 0, 0, width, text, px, "", bold)

    def paint(self, painter, theme_name: str, colormap: str) -> None:
        pal = theme.palette(theme_name)
        draw = draw_rich_wrapped if self.rich else draw_plain_wrapped
        inner = self.width - 2 * MARGIN
        colour = ERROR.get(theme_name, ERROR["light"]) if self.error else pal.muted
        with page(painter, self, pal):
            y = MARGIN
            draw(painter, MARGIN, y, inner, self.title, TITLE_PX, pal.text, True)
            y += self.title_h + TITLE_GAP
            for text, height in zip(self.paragraphs, self.paragraph_h, strict=True):
                draw(painter, MARGIN, y, inner, text, TEXT_PX, colour)
                y += height + PARAGRAPH_GAP


__all__ = ["MessageDrawing"]
