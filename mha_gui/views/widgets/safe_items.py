"""pyqtgraph items whose paint never raises.

Qt calls a graphics item's `paint` from C++ (QGraphicsView::paintEvent). An exception
raised out of a Python override there is not merely printed: with shiboken 6.11 the
binding's error handler itself can crash the process while it stores the exception
(seen in the soak: a subnormal colour range made a heatmap image raise inside its
paint, and the window segfaulted in `storePythonOverrideErrorOrPrint`). So every
pyqtgraph item the views create comes from this module: its paint runs with the
painter's state saved and restored, and an exception draws the plain "cannot draw this:
<reason>" placeholder in the item's bounds instead, reported once per item (logging).
"""

from __future__ import annotations

import logging

import pyqtgraph as pg
from PySide6.QtCore import Qt

from mha_gui.export.painter import saved
from mha_gui.views.widgets.drawing_widget import failure_text

log = logging.getLogger(__name__)


class PaintNeverRaises:
    """Mixin before a pyqtgraph item class: its `paint` cannot raise out to Qt."""

    paint_failure: str | None = None  # the last failure's text; None after a good paint

    def paint(self, painter, *args) -> None:
        try:
            with saved(painter):
                super().paint(painter, *args)
        except Exception as exc:  # never out to C++: see the module's docstring
            self._report(painter, exc)
        else:
            self.paint_failure = None

    def _report(self, painter, exc: Exception) -> None:
        text = f"cannot draw this: {failure_text(exc)}"
        if text != self.paint_failure:
            self.paint_failure = text
            log.error("%s: %s", type(self).__name__, text, exc_info=exc)
        try:
            with saved(painter):
                painter.setPen(pg.mkColor("#888888"))
                flags = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
                painter.drawText(self.boundingRect(), int(flags), text)
        except Exception:
            pass


def never_raising(base: type) -> type:
    """`base` (a pyqtgraph item class) with PaintNeverRaises in front of it."""
    return type(base.__name__, (PaintNeverRaises, base), {"__module__": __name__})


ImageItem = never_raising(pg.ImageItem)
AxisItem = never_raising(pg.AxisItem)
ViewBox = never_raising(pg.ViewBox)
TextItem = never_raising(pg.TextItem)
InfiniteLine = never_raising(pg.InfiniteLine)
PlotCurveItem = never_raising(pg.PlotCurveItem)
