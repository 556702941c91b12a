"""QPainter's begin/end and save/restore as context managers, used by every figure.

A figure that raises half-way must leave the painter as it found it: an exception that
escapes with a painter still active (or with saved states left on its stack) makes Qt
warn "endPaint() called with active painter" / "Painter ended with 1 saved states" on
every later paint of that widget and can crash the backing store. `with painter_on(device)
as p:` always ends the painter, and first restores every state saved on it that was not
restored (a `p.save()` whose `p.restore()` an exception skipped); `with saved(p):` always
restores what it saved, whichever way the block is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache


@cache
def _counting_painter():
    """QPainter that counts the states saved on it and not yet restored (Qt keeps that
    count to itself). Made on first use: this module imports without Qt loaded."""
    from PySide6.QtGui import QPainter

    class CountingPainter(QPainter):
        def __init__(self):
            super().__init__()
            self.depth = 0

        def save(self) -> None:
            super().save()
            self.depth += 1

        def restore(self) -> None:
            self.depth = max(0, self.depth - 1)
            super().restore()  # one too many: Qt says so ("Unbalanced save/restore")

        def end(self) -> bool:
            while self.depth > 0:
                self.restore()
            return super().end()

    return CountingPainter


@contextmanager
def painter_on(device, what: str = "figure", path=None) -> Iterator:
    """A QPainter begun on `device` (an image, a widget, an SVG generator, a PDF writer,
    a QPicture) and ended when the block is left, its saved states restored first. OSError
    when it cannot begin: "could not write {what} to {path}" (a vector file that cannot
    be created)."""
    painter = _counting_painter()()
    if not painter.begin(device):
        where = f" to {path}" if path is not None else ""
        raise OSError(f"could not write {what}{where}")
    try:
        yield painter
    finally:
        painter.end()


@contextmanager
def saved(painter) -> Iterator:
    """The painter's pen, brush, font, transform, clip and hints as they were, after the
    block (painter.save() … painter.restore(), balanced even when the block raises; on a
    painter of `painter_on`, also what the block saved and an exception left unrestored)."""
    outer = getattr(painter, "depth", None)
    painter.save()
    try:
        yield painter
    finally:
        if outer is None:
            painter.restore()
        else:
            while painter.depth > outer:
                painter.restore()
