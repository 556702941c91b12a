"""Heatmaps of the current stage for all heads."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


class AttentionView(QWidget):
    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("attentionView")
