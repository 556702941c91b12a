"""A figure that cannot be painted never takes the window down with it (issue 21).

Before: after n changed to 1, an identity window's DrawingWidget raised IndexError from
paintEvent (export/painting.py, `p.col_labels[j]`); the exception left the QPainter
active and Qt then warned "QBackingStore::endPaint() called with active painter" on
every later paint. Now the identity figures draw at n = 1, a drawing whose paint raises
shows a plain "cannot draw this: …" placeholder and is reported once, and the painter
is always ended and its saves restored.
"""

from __future__ import annotations

import logging

import pytest

from mha_gui import theme
from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.export.painter import saved
from mha_gui.export.primitives import page
from mha_gui.views.widgets.drawing_widget import DrawingWidget

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

IDENTITIES = ("packed", "split", "permute", "scale", "shift")


def painter_warnings(qtlog) -> list[str]:
    return [r.message for r in qtlog.records if "painter" in r.message.lower()]


@pytest.mark.parametrize("name", IDENTITIES)
def test_an_open_identity_window_follows_n_down_to_1(qtbot, qtlog, window, name):
    from mha_gui.views.dialogs.identity_demos import open_identity

    dialog = open_identity(window, name)
    qtbot.waitExposed(dialog)
    dialog.figure.grab()
    with qtbot.captureExceptions() as exceptions:
        for change in ({"n": 1}, {"d_k": 1}, {"h": 1, "h_kv": 1}, {"n": 3}):
            window.document.set_config(**change)
            qtbot.wait(5)
            dialog.figure.grab()
    assert [str(e[1]) for e in exceptions] == []
    assert painter_warnings(qtlog) == []
    assert dialog.figure.failure is None
    dialog.close()


class Broken:
    """A drawing whose paint fails half-way, inside the painter states it saved (as every
    figure saves them: through export/painter.py's context managers)."""

    width, height, title, description = 400.0, 200.0, "broken", ""
    painted = 0

    def paint(self, painter, theme_name, colormap):
        Broken.painted += 1
        with page(painter, self, theme.palette(theme_name)), saved(painter):
            painter.translate(10, 10)
            raise IndexError("list index out of range")


class BrokenView(DrawingWidget):
    def make_drawing(self):
        return Broken()


class Fine:
    width, height, title, description = 400.0, 200.0, "fine", ""

    def paint(self, painter, theme_name, colormap):
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QColor

        painter.fillRect(QRectF(0, 0, self.width, self.height), QColor("#123456"))


def test_a_drawing_that_raises_paints_a_placeholder_and_is_reported_once(
    qtbot, qtlog, show_widget, caplog
):
    view = show_widget(BrokenView(Document(load_preset("toy"))), 500, 300)
    caplog.set_level(logging.ERROR, logger="mha_gui")
    with qtbot.captureExceptions() as exceptions:
        for _ in range(3):
            view.update()
            image = view.grab().toImage()
            qtbot.wait(5)
    assert exceptions == []
    assert painter_warnings(qtlog) == []
    assert view.failure is not None and "list index out of range" in view.failure
    assert view.placeholder_text() == "cannot draw this: IndexError: list index out of range"
    reports = [r for r in caplog.records if "cannot draw" in r.getMessage()]
    assert len(reports) == 1 and "IndexError" in reports[0].getMessage()
    assert Broken.painted >= 3
    # the placeholder is painted: text on the background, not a half-drawn figure
    colours = {image.pixelColor(x, y).name() for x in range(0, 500, 7) for y in range(0, 300, 7)}
    assert len(colours) > 1


def test_a_drawing_that_paints_again_clears_the_failure(qtbot, show_widget):
    view = show_widget(BrokenView(Document(load_preset("toy"))), 500, 300)
    view.grab()
    assert view.failure is not None
    view.make_drawing = lambda: Fine()
    view.refresh()
    image = view.grab().toImage()
    assert view.failure is None
    assert image.pixelColor(250, 150).name() == "#123456"


def test_exporting_a_drawing_that_raises_says_so_and_writes_nothing(
    qtbot, show_widget, dialogs, tmp_path
):
    view = show_widget(BrokenView(Document(load_preset("toy"))), 500, 300)
    dialogs.save_path = str(tmp_path / "broken.svg")
    with qtbot.captureExceptions() as exceptions:
        assert view.export_figure() is None
        view.copy_figure()
    assert exceptions == []
    said = [text for kind, text in dialogs.calls if kind == "critical"]
    assert len(said) == 2 and all("cannot draw this: IndexError" in t for t in said)
    assert not list(tmp_path.glob("*broken*"))  # no file, no partial one
