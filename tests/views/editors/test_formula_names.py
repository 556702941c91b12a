"""Dock tabs and View ▸ Panels entries named by a formula (W^Q, W_O) are drawn typeset,
never with a caret, and a screen reader hears "W Q"."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMenu, QTabBar

from mha_gui.app import create_main_window
from mha_gui.views.editors.formula_names import FormulaStyle, spoken

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def weight_tabs(w) -> QTabBar:
    return next(b for b in w.findChildren(QTabBar) if b.isVisible() and "W^Q" in tab_texts(b))


def tab_texts(bar) -> list[str]:
    return [bar.tabText(i) for i in range(bar.count())]


def ink_rows(image: QImage, rect: QRect) -> list[int]:
    """The rows of rect holding any pixel far from the rect's corner colour."""
    back = image.pixelColor(rect.left() + 1, rect.top() + 1)
    rows = []
    for y in range(rect.top() + 2, rect.bottom() - 1):
        for x in range(rect.left() + 4, rect.right() - 4):
            c = image.pixelColor(x, y)
            if abs(c.lightness() - back.lightness()) > 80:
                rows.append(y)
                break
    return rows


def test_weight_tabs_and_panels_menu_are_typeset(qtbot):
    w = create_main_window("toy")
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    bar = weight_tabs(w)
    assert isinstance(bar.style(), FormulaStyle)
    q, o = tab_texts(bar).index("W^Q"), tab_texts(bar).index("W_O")
    assert bar.accessibleTabName(q) == "W Q" and bar.accessibleTabName(o) == "W O"
    image = bar.grab().toImage()

    # typeset: a raised Q or a lowered O makes the label's ink taller than a capital's
    # (plain "W^Q" or "W_O" is one line of capitals: the caret and the underscore stay
    # within it); measured on the drawn tabs
    def span(index):
        rows = ink_rows(image, bar.tabRect(index))
        return rows[-1] - rows[0]

    capital = span(tab_texts(bar).index("X"))
    assert span(q) > capital + 2, (span(q), capital)
    # and neither tab is the plain text the application's own style draws
    style = bar.style()
    bar.setStyle(QApplication.style())
    plain = bar.grab().toImage()
    bar.setStyle(style)
    for index in (q, o):
        rect = bar.tabRect(index)
        assert image.copy(rect) != plain.copy(rect), bar.tabText(index)
    # the same style draws View ▸ Panels
    panels = w.findChild(QMenu, "menu.panels")
    assert isinstance(panels.style(), FormulaStyle)
    assert "W^Q" in [a.text() for a in panels.actions()]
    w.document.undo_stack.setClean()


def test_spoken_names():
    assert spoken("W^Q") == "W Q" and spoken("W_O") == "W O" and spoken("&W_0^K") == "W 0 K"


def test_a_new_tab_bar_is_typeset_too(qtbot):
    w = create_main_window("toy")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    # drag-free: tabify two more docks, which makes QMainWindow build another tab bar
    w.tabifyDockWidget(w.docks["stats"], w.docks["lines"])
    w.docks["stats"].show()
    w.docks["lines"].show()
    QApplication.processEvents()
    bars = [b for b in w.findChildren(QTabBar) if b.count()]
    assert bars and all(isinstance(b.style(), FormulaStyle) for b in bars if b.parent() is w)
    w.document.undo_stack.setClean()


def test_the_configuration_panel_typesets_its_names(qtbot):
    from PySide6.QtWidgets import QFormLayout, QLabel

    from mha_gui.views.editors.config_panel import ConfigPanel

    w = create_main_window("toy")
    qtbot.addWidget(w)
    panel = w.findChild(ConfigPanel)
    form = panel.findChild(QFormLayout)
    label = form.labelForField(panel.spins["d_model"])
    assert isinstance(label, QLabel) and label.text() == "d<sub>model</sub>"
    assert panel.spins["d_model"].accessibleName() == "d model"
    assert label.buddy() is panel.spins["d_model"]
    assert "b<sup>Q</sup>" in panel.bias.toolTip() and "b<sub>O</sub>" in panel.bias.toolTip()
    assert panel.default_scale.text() == "1/√dₖ"
    w.document.undo_stack.setClean()
