"""The lesson panel's labels and buttons, each made one way: an objectName, plain text
(a lesson's words are never read as markup), and for a button its tooltip as the
accessible description and its text without the mnemonic and arrows as its name."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton


def label(name: str, text: str, bold=False, size=1.0) -> QLabel:
    widget = QLabel(text, objectName=name, wordWrap=True)
    widget.setTextFormat(Qt.TextFormat.PlainText)
    if bold or size != 1.0:
        f = widget.font()
        f.setBold(bold)
        f.setPointSizeF(f.pointSizeF() * size)
        widget.setFont(f)
    return widget


def button(name: str, text: str, tip: str, slot) -> QPushButton:
    b = QPushButton(text, objectName=name)
    b.setToolTip(tip)
    b.setAccessibleName(text.replace("&", "").strip("←→ "))
    b.setAccessibleDescription(tip)
    b.clicked.connect(lambda _=False: slot())
    return b
