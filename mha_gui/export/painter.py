"""QPainter's begin/end and save/restore as context managers, used by every figure.

A figure that raises half-way must leave the painter as it found it: an exception that
escapes with a painter still active (or with saved states left on its stack) makes Qt
warn "endPaint() called with active painter" on every later paint of that widget and
can crash the backing store. `with painter_on(device) as p:` always ends the painter;
`with saved(p):` always restores what it saved, whichever way the block is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def painter_on(device, what: str = "figure", path=None) -> Iterator:
    """A QPainter begun on `device` (an image, a widget, an SVG generator, a PDF writer,
    a QPicture) and ended when the block is left. OSError when it cannot begin: "could
    not write {what} to {path}" (a vector file that cannot be created)."""
    from PySide6.QtGui import QPainter

    painter = QPainter()
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
    block (painter.save() … painter.restore(), balanced even when the block raises)."""
    painter.save()
    try:
        yield painter
    finally:
        painter.restore()
