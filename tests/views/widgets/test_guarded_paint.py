"""No exception escapes a paint, of a figure or of any other widget of the views (issue 21).

`guarded_paint` is how every custom paintEvent paints: whatever its block raises, the
painter ends with its saved states restored (no "QPainter" warning from Qt), the widget
shows a plain "cannot draw this: <reason>" placeholder, and the reason is reported once,
however often the widget is painted again. The stage bar's elided label, the lesson
overlay and the training target grid paint through it.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from mha_gui.views.widgets.drawing_widget import guarded_paint

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

GREEN = "#00c000"


def painter_warnings(qtlog) -> list[str]:
    return [r.message for r in qtlog.records if "painter" in r.message.lower()]


def reports(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "cannot draw this" in r.getMessage()]


class Flaky(QWidget):
    """Paints green; `fail` set, it saves the painter's state twice, then raises."""

    def __init__(self):
        super().__init__()
        self.fail: Exception | None = None
        self.paints = 0

    def paintEvent(self, _event):
        with guarded_paint(self, QColor("white")) as painter:
            self.paints += 1
            painter.fillRect(QRectF(self.rect()), QColor(GREEN))
            painter.save()
            painter.translate(30, 30)
            painter.save()
            if self.fail is not None:
                raise self.fail
            painter.restore()
            painter.restore()


def colours(image) -> set[str]:
    return {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 5)
        for y in range(0, image.height(), 5)
    }


def test_a_paint_that_raises_draws_the_placeholder_and_is_reported_once(
    qtbot, qtlog, caplog, show_widget
):
    widget = show_widget(Flaky(), 420, 160)
    widget.setObjectName("flaky")
    caplog.set_level(logging.ERROR, logger="mha_gui")
    widget.fail = KeyError("head 4")
    with qtbot.captureExceptions() as exceptions:
        images = [widget.grab().toImage() for _ in range(4)]
        widget.repaint()
    assert exceptions == []
    assert widget.paints >= 4
    assert painter_warnings(qtlog) == []
    said = reports(caplog)
    assert said == ["flaky: cannot draw this: KeyError: 'head 4'"]
    # the placeholder: dark text on the background, nothing of the half-done green paint
    seen = colours(images[-1])
    assert GREEN not in seen and "#ffffff" in seen and len(seen) > 1
    assert any(QColor(c).lightness() < 128 for c in seen)


def test_after_a_paint_that_worked_a_failure_is_reported_again(qtbot, qtlog, caplog, show_widget):
    widget = show_widget(Flaky(), 300, 120)
    caplog.set_level(logging.ERROR, logger="mha_gui")
    widget.fail = ValueError("stale")
    widget.grab()
    widget.fail = None
    assert GREEN in colours(widget.grab().toImage())  # the paint is back
    widget.fail = ValueError("stale")
    widget.grab()
    widget.grab()
    assert len(reports(caplog)) == 2
    assert painter_warnings(qtlog) == []


def test_the_stage_bars_label_and_the_training_grid_paint_through_the_guard(
    qtbot, qtlog, caplog, show_widget, monkeypatch
):
    """Two of the views' own paintEvents, made to fail where they draw: a placeholder,
    one report each, no painter warning."""
    from mha_gui.views.docks.train import target_grid
    from mha_gui.views.docks.train.target_grid import TargetGrid
    from mha_gui.views.stage.stage_labels import ElidedLabel

    caplog.set_level(logging.ERROR, logger="mha_gui")
    label = show_widget(ElidedLabel("Softmax normalises each row"), 300, 40)
    monkeypatch.setattr(label, "shown_lines", lambda *_: (_ for _ in ()).throw(RuntimeError("x")))
    grid = show_widget(TargetGrid(), 200, 200)
    grid.set_matrix(np.eye(3))

    def broken(*_args, **_kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(target_grid, "paint_grid", broken)
    with qtbot.captureExceptions() as exceptions:
        for _ in range(3):
            label.grab()
            grid.grab()
    assert exceptions == []
    assert painter_warnings(qtlog) == []
    said = reports(caplog)
    assert len(said) == 2, said
    assert any("RuntimeError: x" in s for s in said)
    assert any("IndexError: list index out of range" in s for s in said)


def test_a_figure_painter_ends_balanced_whatever_its_block_left_saved(qtlog):
    """export/painter.py: `painter_on` restores what a raise left saved before it ends,
    and `saved` restores everything saved inside it (the figure exporters paint so)."""
    from PySide6.QtGui import QImage

    from mha_gui.export.painter import painter_on, saved

    image = QImage(40, 40, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    with pytest.raises(ZeroDivisionError), painter_on(image) as painter:
        painter.save()
        painter.save()
        raise ZeroDivisionError("half-way")
    with painter_on(image) as painter:
        with saved(painter):
            painter.translate(20, 20)
            painter.save()
            painter.translate(5, 5)
        painter.fillRect(QRectF(0, 0, 10, 10), QColor(GREEN))  # untranslated again
    assert image.pixelColor(2, 2).name() == GREEN
    assert image.pixelColor(30, 30).name() == "#ffffff"
    assert painter_warnings(qtlog) == []
