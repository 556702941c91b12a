"""Stage navigation and inspect controls."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


class StageBar(QWidget):
    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("stageBar")
