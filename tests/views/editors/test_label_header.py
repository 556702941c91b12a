"""The editors' headers size themselves as Qt's own header would, from fewer calls."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QTableView

from mha_gui.views.editors.label_header import LabelHeader


def _labels(rng: random.Random, count: int) -> list[str]:
    alphabet = "aiwmW0_␣.é"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def _pair(qtbot, model, orientation):
    """A Qt header and a LabelHeader on `model`, each in a table of its own."""
    headers, tables = [], []
    for cls in (QHeaderView, LabelHeader):
        table = QTableView()
        qtbot.addWidget(table)
        header = cls(orientation, table)
        if orientation == Qt.Orientation.Vertical:
            table.setVerticalHeader(header)
        else:
            table.setHorizontalHeader(header)
        table.setModel(model)
        if isinstance(header, LabelHeader):
            header.follow(model)
        headers.append(header)
        tables.append(table)
    return headers, tables


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("orientation", [Qt.Orientation.Vertical, Qt.Orientation.Horizontal])
def test_size_hint_is_qts(qtbot, seed, orientation):
    rng = random.Random(seed)
    count = rng.choice([1, 3, 40, 150, 450])
    model = QStandardItemModel(count, count)
    labels = _labels(rng, count)
    bold = QFont()
    bold.setBold(True)
    for i, text in enumerate(labels):
        model.setHeaderData(i, orientation, text)
        if rng.random() < 0.2:  # bold labels are wider: the W_O rows of the inspected head
            model.setHeaderData(i, orientation, bold, Qt.ItemDataRole.FontRole)
    (qt_header, ours), _tables = _pair(qtbot, model, orientation)
    assert ours.sizeHint() == qt_header.sizeHint()

    # a label changes: the hint follows (it is remembered only until then)
    model.setHeaderData(0, orientation, "a much, much longer label than any before")
    assert ours.sizeHint() == qt_header.sizeHint()
    assert ours.sizeHint() != QHeaderView(orientation).sizeHint()  # it measured something


def test_editor_headers_are_label_headers_and_clickable(qtbot):
    from mha_gui.app import create_main_window

    window = create_main_window("toy")
    qtbot.addWidget(window)
    table = window.findChild(QTableView, "editor.X")
    for header in (table.verticalHeader(), table.horizontalHeader()):
        assert isinstance(header, LabelHeader)
        assert header.sectionsClickable() and header.highlightSections()
    # the token names fit: the header is as wide as Qt would make it for them
    plain = QTableView()
    qtbot.addWidget(plain)
    plain.setModel(table.model())
    assert table.verticalHeader().sizeHint() == plain.verticalHeader().sizeHint()
