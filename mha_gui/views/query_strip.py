"""One query token followed through the selected head."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


class QueryStrip(QWidget):
    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("queryStrip")
