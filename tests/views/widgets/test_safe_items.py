"""No exception escapes a pyqtgraph item's paint (issue 21).

Qt calls an item's paint from C++; an exception raised out of a Python override there
made shiboken 6.11 crash the whole window while it stored the error (the soak's
segfaults in GraphicsView.paintEvent, after a typed 1e-320). Every item the views make
comes from `safe_items`: a paint that raises draws a "cannot draw this" placeholder in
the item's bounds, is reported once, and the canvas goes on painting its other items.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PySide6.QtCore import QRectF

from mha_gui.views.widgets import safe_items
from mha_gui.views.widgets.canvas import new_canvas

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


class RaisesInRender(safe_items.ImageItem):
    def render(self):
        raise IndexError("index -9223372036854775808 is out of bounds")


def reports(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "cannot draw this" in r.getMessage()]


def test_an_item_whose_paint_raises_is_reported_once_and_the_canvas_keeps_painting(
    qtbot, caplog, show_widget
):
    canvas = show_widget(new_canvas(), 300, 300)
    caplog.set_level(logging.ERROR, logger="mha_gui")
    vb = safe_items.ViewBox(enableMenu=False, enableMouse=False)
    canvas.ci.addItem(vb)
    broken = RaisesInRender(np.ones((4, 4)))
    line = safe_items.InfiniteLine(pos=2.0, angle=0, pen="g")
    vb.addItem(broken)
    vb.addItem(line)
    vb.setRange(QRectF(0, 0, 4, 4), padding=0)
    with qtbot.captureExceptions() as exceptions:
        images = [canvas.grab().toImage() for _ in range(3)]
    assert exceptions == []
    assert reports(caplog) == [
        "RaisesInRender: cannot draw this: IndexError: index -9223372036854775808 is out of bounds"
    ]
    assert broken.paint_failure is not None and line.paint_failure is None
    greens = [
        (x, y)
        for x in range(0, images[-1].width(), 2)
        for y in range(images[-1].height())
        if images[-1].pixelColor(x, y).name() == "#00ff00"
    ]
    assert greens  # the line after the broken image was still drawn


def test_every_item_class_the_views_create_never_raises_out_of_paint():
    for name in ("ImageItem", "AxisItem", "ViewBox", "TextItem", "InfiniteLine", "PlotCurveItem"):
        cls = getattr(safe_items, name)
        assert issubclass(cls, safe_items.PaintNeverRaises), name
    from mha_gui.views.stage.cell_image import CellImage
    from mha_gui.views.stage.plot_items import TokenAxis

    assert issubclass(CellImage, safe_items.PaintNeverRaises)
    assert issubclass(TokenAxis, safe_items.PaintNeverRaises)


SUBNORMAL_SESSION = textwrap.dedent(
    """
    import faulthandler, logging, sys
    faulthandler.enable()
    from PySide6.QtWidgets import QApplication
    app = QApplication(["subnormal"])
    failures = []
    class Count(logging.Handler):
        def emit(self, record):
            failures.append(record.getMessage())
    logging.getLogger("mha_gui").addHandler(Count(logging.ERROR))
    def hook(*info):
        failures.append(repr(info[1]))
        sys.__excepthook__(*info)
    sys.excepthook = hook
    from PySide6.QtCore import qInstallMessageHandler
    def qt_message(_mode, _context, text):  # a NaN pen width, a painter left active
        if "QPen" in text or "QPainter" in text or "painter" in text:
            failures.append(text)
    qInstallMessageHandler(qt_message)
    from mha_gui.app import create_main_window
    window = create_main_window("toy")
    window.resize(1280, 720)
    window.show()
    for dock in window.docks.values():
        dock.show()
    doc = window.document
    def settle():
        for _ in range(8):
            app.processEvents()
    for value in (1e-320, 5e-324, -1e-310, 1e308, -1.7e308, 1e200):
        doc.set_config(scale=abs(value))
        for name in ("W_Q", "W_K", "W_V", "W_O", "X"):
            doc.set_value(name, (0, 0, 0) if name.startswith("W_") and name != "W_O" else (0, 0),
                          value)
        for stage in range(7):
            doc.set_stage(stage)
            settle()
            window.grab()
    doc.set_config(d_model=1, d_k=1, d_v=1, h=1, h_kv=1)
    import numpy as np
    for name in ("X", "W_Q", "W_K", "W_V", "W_O"):
        doc.set_matrix(name, np.full(doc.matrix(name).shape, 5e-324))
    for stage in range(7):
        doc.set_stage(stage)
        settle()
        window.grab()
    print("failures:", len(failures))
    for text in failures[:5]:
        print(text)
    """
)


def test_a_window_fed_subnormal_or_huge_numbers_does_not_crash(tmp_path):
    """In a child process: a segmentation fault fails this test instead of the run. The
    soak's 1e-320 crashed the window; a fuzz's 1e308 raised OverflowError in the stage's
    slot (a scale of ±inf) and gave the token lines a NaN pen width."""
    env = {
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [sys.executable, "-c", SUBNORMAL_SESSION],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "failures: 0" in done.stdout, done.stdout + done.stderr[-2000:]
