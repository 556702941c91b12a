"""Every dock follows every change of the document, shown or hidden (issue 21).

A dock hidden while the dimensions change must be right when it is shown again: no
paint from a stale layout (an IndexError escaping paintEvent leaves the QPainter active,
and Qt then warns "endPaint() called with active painter"), and no control for something
that no longer exists (a head switch `ablate.k` for a head the layer lost raised
ValueError from Document.set_ablated when clicked). These run the real main window's
docks, built from the registry, as a user reaches them.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QComboBox

from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.window import registry

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

# Each step is one set_config; together they take every dimension to 1 and back.
DOWN = ({"n": 1}, {"h": 1, "h_kv": 1}, {"d_k": 1})


def _back(config) -> tuple[dict, ...]:
    return (
        {"d_k": config.d_k},
        {"h": config.h, "h_kv": config.h_kv},
        {"n": config.n},
    )


def settle(qtbot, window) -> None:
    """Let this turn's events run (the coalesced rebuilds, the paints), as a script that
    drives the window with processEvents does: a deleteLater'd widget is still there."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.processEvents()


def head_switches(widget) -> list[QCheckBox]:
    return [
        b
        for b in widget.findChildren(QCheckBox)
        if b.objectName().startswith("ablate.") and b.isVisible()
    ]


def assert_offers_only_what_exists(window, widget) -> None:
    """No visible control names a head or a token the layer does not have."""
    c = window.document.config
    names = sorted(b.objectName() for b in head_switches(widget))
    assert names == sorted(f"ablate.{i}" for i in range(c.h)) or not names, names
    for box in widget.findChildren(QComboBox):
        if box.objectName() == "train.head":
            assert box.count() == c.h


def painter_warnings(qtlog) -> list[str]:
    return [r.message for r in qtlog.records if "painter" in r.message.lower()]


def failures(widget) -> list[str]:
    """What the dock's figures could not draw (a figure that fails says so in the dock
    and in the log instead of raising)."""
    canvases = [widget] if isinstance(widget, DrawingWidget) else []
    canvases += widget.findChildren(DrawingWidget)
    return [c.failure for c in canvases if c.failure is not None]


@pytest.mark.parametrize("spec", registry.views(), ids=lambda s: s.name)
@pytest.mark.parametrize("hidden", [True, False], ids=["hidden", "shown"])
def test_every_dock_survives_every_dimension_going_to_1_and_back(
    qtbot, qtlog, window, spec, hidden
):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    if spec.name == "diff":  # a pinned snapshot: the figure the dock really draws
        from mha_gui.views.docks.diff.diff_view import pin_snapshot

        pin_snapshot(window.document)
    dock = window.docks[spec.name]
    widget = window.views[spec.name]
    doc = window.document
    original = doc.config
    dock.show()
    settle(qtbot, window)
    widget.grab()

    with qtbot.captureExceptions() as exceptions:
        for step in (*DOWN, *_back(original)):
            if hidden:
                dock.hide()
            doc.set_config(**step)
            settle(qtbot, window)
            if hidden:
                dock.show()
                settle(qtbot, window)
            widget.grab()
            assert_offers_only_what_exists(window, widget)
            assert failures(widget) == [], step
        for _ in DOWN:  # and back down again through Undo, then up through Redo
            doc.undo_stack.undo()
        settle(qtbot, window)
        widget.grab()
        assert_offers_only_what_exists(window, widget)
        for _ in DOWN:
            doc.undo_stack.redo()
        settle(qtbot, window)
        widget.grab()
        assert_offers_only_what_exists(window, widget)
    assert [str(e[1]) for e in exceptions] == []
    assert painter_warnings(qtlog) == []
    assert failures(widget) == []
    assert doc.config == original


def test_head_switches_follow_h_while_hidden_then_shown(qtbot, window):
    """h 4 → 2 with the dock hidden: shown again, it offers ablate.0 and ablate.1 only,
    and clicking every switch it offers raises nothing (undo/redo keep it right)."""
    window.document.open_preset("causal-6x16")
    window.resize(1400, 900)
    window.show()
    dock, view = window.docks["contributions"], window.views["contributions"]
    dock.show()
    settle(qtbot, window)
    assert len(head_switches(view)) == 4
    dock.hide()
    window.document.set_config(h=2, h_kv=2)
    settle(qtbot, window)
    dock.show()
    settle(qtbot, window)
    assert [b.objectName() for b in head_switches(view)] == ["ablate.0", "ablate.1"]
    with qtbot.captureExceptions() as exceptions:
        for box in head_switches(view):
            box.click()
        assert window.document.config.ablate == (0, 1)
        window.document.undo_stack.undo()
        window.document.undo_stack.undo()
        window.document.undo_stack.undo()  # back to h = 4
        settle(qtbot, window)
        assert [b.objectName() for b in head_switches(view)] == [f"ablate.{i}" for i in range(4)]
        window.document.undo_stack.redo()  # h = 2 again
        settle(qtbot, window)
        for box in head_switches(view):
            box.click()
    assert [str(e[1]) for e in exceptions] == []
    assert [b.objectName() for b in head_switches(view)] == ["ablate.0", "ablate.1"]


def test_a_removed_switch_is_gone_at_once_not_one_turn_later(qtbot, window):
    """Between the change of h and the next event-loop turn (when a deleteLater'd box
    would die), the removed boxes are already hidden, disabled and unnamed."""
    window.document.open_preset("causal-6x16")
    view = window.views["contributions"]
    window.document.set_config(h=2, h_kv=2)  # no event loop turn in between
    live = [
        b
        for b in view.findChildren(QAbstractButton)
        if b.objectName().startswith("ablate.") and b.isEnabled() and not b.isHidden()
    ]
    assert sorted(b.objectName() for b in live) == ["ablate.0", "ablate.1"]
