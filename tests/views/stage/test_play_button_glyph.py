"""The Play/Pause button's symbol is drawn by the button's font (seen live: ⏸ was a box)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QPushButton

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_play_and_pause_symbols_exist_in_the_font(qtbot, window):
    button = window.findChild(QPushButton, "stagePlay")
    fm = QFontMetrics(button.font())
    for playing in (False, True):
        window.findChild(QPushButton, "stagePlay").setChecked(playing)
        text = button.text()
        missing = [c for c in text if ord(c) > 127 and not fm.inFontUcs4(ord(c))]
        assert not missing, f"{text!r}: no glyph for {missing}"
    button.setChecked(False)
