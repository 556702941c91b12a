"""A matrix editor's model answers Qt for any numbers (issue 21).

A fuzz that typed 1e308 into two cells segfaulted the window: the editor's tint span
(2e308) overflowed, `round(nan)` raised inside `data()` while the table painted, and
shiboken 6.11 crashed storing the exception. The tint is now finite for any values,
and `data()` never raises out to Qt (`never_raises`: reported once, None instead)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from mha_gui.document import Document
from mha_gui.views.editors.matrix_model import MatrixModel
from mha_gui.views.widgets.never_raises import never_raises

ROLES = (
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.BackgroundRole,
    Qt.ItemDataRole.ForegroundRole,
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.AccessibleTextRole,
)


@pytest.mark.parametrize("extreme", [1e308, -1.7e308, 1e-320, 5e-324, np.inf, np.nan])
def test_every_cell_answers_for_extreme_values(qapp, caplog, extreme):
    doc = Document()
    caplog.set_level(logging.ERROR, logger="mha_gui")
    x = doc.matrix("X").copy()
    x[0, 0], x[1, 1] = extreme, -1e308
    if extreme == 5e-324:  # the soak's toy seed 9: a matrix of ±5e-324 and zeros
        x[:] = 0.0
        x[0, 0], x[1, 1] = 5e-324, -5e-324
    doc.set_matrix("X", x)
    model = MatrixModel(doc, "X", doc)
    for r in range(model.rowCount()):
        for c in range(model.columnCount()):
            for role in ROLES:
                value = model.data(model.index(r, c), role)
                assert value is not None, (r, c, role)
            assert isinstance(model.data(model.index(r, c), Qt.ItemDataRole.BackgroundRole), QColor)
    assert not caplog.records


def test_an_override_that_raises_returns_its_default_and_is_reported_once(caplog):
    caplog.set_level(logging.ERROR, logger="mha_gui")

    class Model:
        @never_raises(default="?")
        def data(self, value):
            return 1 / value

    model = Model()
    assert model.data(4) == 0.25
    assert [model.data(0) for _ in range(3)] == ["?", "?", "?"]
    said = [r.getMessage() for r in caplog.records]
    assert said == ["a Qt override failed: Model.data: ZeroDivisionError: division by zero"]
