"""Help ▸ Formulas and shapes: the stages numbered as everywhere else (Stage 1 … 7) and
their formulas typeset from the one stage description."""

from __future__ import annotations

import pytest

from mha_gui.document import Document
from mha_gui.engine.panels.notation import rich_text
from mha_gui.engine.panels.stages import STAGES, formula_for
from mha_gui.views.dialogs.formulas_dialog import FormulasDialog

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def dialog(qtbot):
    doc = Document()
    dialog = FormulasDialog(doc)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    yield dialog
    dialog.close()
    doc.configChanged.disconnect(dialog.refresh)


def test_numbered_like_the_window_and_typeset(dialog):
    doc = dialog.document
    text = dialog.text()
    for s in STAGES:
        assert s.heading in text  # "Stage 4 · Attention weights", never "3. Attention…"
    assert f"{STAGES[0].index}. {STAGES[0].title}" not in text
    html = dialog.browser.toHtml()
    # real subscripts: the plain text reads "A" + "i", not "A_i"
    assert "A_i" not in text and "√dk" in text
    assert "vertical-align:sub" in html and "vertical-align:super" in html
    doc.set_causal(True)  # follows the configuration while open
    assert rich_text(formula_for(STAGES[3], doc.config)).count("mask(") == 1
    assert "mask(" in dialog.text()
