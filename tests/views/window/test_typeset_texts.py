"""Formulas are typeset wherever the window shows them (issue 16): the status bar's
shapes, the train panel's messages and the identity windows' titles read d_model, W^Q
with real scripts, never a caret, an underscore or a lowercased w^q."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextDocument

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def shown_text(label) -> str:
    """What a rich-text label reads as: its HTML laid out, scripts and all."""
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def test_the_status_bar_typesets_d_model(window):
    window.document.set_config(causal=True)
    label = window.summary_label
    assert label.textFormat().name == "RichText"
    assert "d<sub>model</sub>=" in label.text() and "d<sub>k</sub>=" in label.text()
    seen = shown_text(label)
    assert "_" not in seen and "dmodel=" in seen and "causal" in seen


def test_the_train_panels_messages_typeset_w_q(window, qtbot):
    window.docks["train"].show()
    panel = window.views["train"]
    panel.reinitialise()
    message = panel.ui.message
    assert "W<sup>Q</sup>/W<sup>K</sup>" in message.text()
    assert "^" not in shown_text(message)
    assert "^" not in panel.ui.reinit_button.text()


def test_identity_windows_keep_the_formulas_case(window, qtbot):
    from mha_gui.views.dialogs.identity_demos import open_identity

    dialog = open_identity(window, "scale")
    qtbot.waitExposed(dialog)
    assert dialog.windowTitle() == "Fold the scale into W^Q"
    dialog.close()
