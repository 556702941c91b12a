"""The high-contrast themes: text ≥ 4.5:1 and lines, frames and marks ≥ 3:1 (WCAG
1.4.3, 1.4.11), measured from the colours the themes draw with; View ▸ Theme offers
them and the choice is kept."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAction, QPalette
from PySide6.QtWidgets import QApplication

from mha_gui import theme
from mha_gui.app import create_main_window
from tests.views.accessibility.helpers import settle, shown

HIGH_CONTRAST = ("high-contrast-light", "high-contrast-dark")


@pytest.mark.parametrize("name", HIGH_CONTRAST)
def test_high_contrast_themes_meet_wcag_aa(name):
    for label, (fg, bg, need) in theme.contrast_pairs(name).items():
        ratio = theme.contrast_figures(name)[label]
        assert ratio >= need, f"{name}: {label} {fg} on {bg} is {ratio}:1, needs {need}:1"
    frame = theme.contrast_figures(name)["inspected-head frame (weakest head)"]
    assert frame >= theme.FRAME_NEED, f"{name}: a head's frame is {frame}:1"
    assert theme.is_dark("high-contrast-dark") and not theme.is_dark("high-contrast-light")


@pytest.mark.parametrize("name", HIGH_CONTRAST)
def test_head_titles_read_on_high_contrast_backgrounds(name):
    background = theme._hex_rgb(theme.palette(name).background)
    for i in range(len(theme.HEAD_COLORS)):
        colour = theme._hex_rgb(theme.head_text_color(i, name))
        assert theme.contrast_ratio(colour, background) >= 4.5


def test_view_theme_offers_five_themes_and_keeps_the_choice(window, qtbot):
    shown(qtbot, window)
    for key in ("system", "light", "dark", *HIGH_CONTRAST):
        assert window.findChild(QAction, f"action.theme.{key}") is not None, key
    window.findChild(QAction, "action.theme.high-contrast-dark").trigger()
    settle(qtbot, window)
    assert window.theme_name() == "high-contrast-dark"
    app_palette = QApplication.instance().palette()
    assert app_palette.color(QPalette.ColorRole.Window).name() == "#000000"
    assert app_palette.color(QPalette.ColorRole.WindowText).name() == "#ffffff"
    # the heatmaps' background follows
    canvas = window.attention_view.canvas
    image = canvas.grab().toImage()
    assert image.pixelColor(image.width() // 2, 3).name() == "#000000"
    again = create_main_window("toy")
    qtbot.addWidget(again)
    assert again.theme_name() == "high-contrast-dark"  # kept in the settings
    again.findChild(QAction, "action.theme.light").trigger()
