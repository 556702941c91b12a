"""Show me on an answer task whose cell names a token the layer no longer has (the
student renamed the tokens after the step opened) says why, instead of raising from the
button's slot (the soak's causal-6x16 seed 1: "no token 'cat' among the tokens")."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from mha_gui.engine.lessons import load_lesson
from mha_gui.views.docks.lesson.lesson_panel import lesson_panel

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_show_me_after_the_tokens_were_renamed_says_why(qtbot, window):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    panel = lesson_panel(window)
    panel.start(load_lesson("walkthrough"), step=2)  # S_0[cat, cat]: a typed answer
    doc = window.document
    doc.set_tokens([f"t{i}" for i in range(doc.config.n)])  # no "cat" any more
    panel.answer.setText("")
    qtbot.mouseClick(panel.show_me_button, Qt.MouseButton.LeftButton)
    assert panel.result.property("verdict") == "False"
    assert "cannot be shown" in panel.result.text() and "cat" in panel.result.text()
    assert panel.answer.text() == ""  # nothing was written in the box
    assert 3 not in panel.passed
