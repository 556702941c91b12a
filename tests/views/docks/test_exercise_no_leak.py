"""During an exercise the panel menu cannot copy or export the numbers the student must
find; blocking a pair still works, and leaving the exercise brings the entries back."""

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget

from tests.views.docks.test_exercise_mode import enter

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

REVEALING = ("action.exportPanel", "action.copyPanel", "action.copyLatex", "action.copyTsv")


def entries(window, pair=(0, 1)):
    menu = window.export_actions.panel_menu("weights", 0, pair)
    return {a.objectName(): a for a in menu.actions() if a.objectName()}


def test_the_panel_menu_hides_nothing_away_during_an_exercise(window, qtbot):
    assert all(entries(window)[name].isEnabled() for name in REVEALING)
    action, panel = enter(window, qtbot, stage="weights")
    during = entries(window)
    assert not any(during[name].isEnabled() for name in REVEALING)
    assert during["action.toggleBlocked"].isEnabled()
    action.trigger()  # leave the exercise
    qtbot.wait(20)
    assert window.findChild(QDockWidget, "dock.exercise") is not None
    assert all(entries(window)[name].isEnabled() for name in REVEALING)
    assert isinstance(action, QAction)


def test_no_tooltip_quotes_a_hidden_cell_and_leaving_brings_the_formulas_back(window, qtbot):
    """At the output stage Y[r,c]'s formula lists every C_i[r,c]: while one of them is a
    blank, Y[r,c]'s tooltip does not show it (nor its value); other cells keep theirs."""
    action, panel = enter(window, qtbot, stage="output", blanks=6, seed=2)
    view, exercise = window.attention_view, panel.exercise
    y = view.panels[("Y", -1)]
    cell = next(  # a blank C_i[r,c] whose Y[r,c] shows
        b for b in exercise.cells if b.key[0] == "C" and (b.key[2], b.key[3]) not in y.hidden
    )
    r, c = cell.key[2], cell.key[3]
    text = y.tooltip(r, c)
    assert "exercise hides" in text and " = " not in text  # no formula, no number
    quoting_nothing = [
        (rr, cc)
        for rr in range(y.rows)
        for cc in range(y.cols)
        if (rr, cc) not in y.hidden
        and not any(
            k[0] in ("C", "H") and k[2] == rr and (k[0] == "H" or k[3] == cc)
            for k in (b.key for b in exercise.cells)
        )
    ]
    assert quoting_nothing and "Σ_i C_i" in y.tooltip(*quoting_nothing[0])
    action.trigger()  # leave the exercise
    qtbot.wait(20)
    assert "Σ_i C_i" in view.panels[("Y", -1)].tooltip(r, c)


def test_with_rope_a_score_does_not_quote_a_hidden_rotated_key():
    from mha_gui.engine.layer.config import Config
    from mha_gui.engine.teaching.quoted_cells import quotes_hidden

    config = Config(n=5, d_model=4, h=4, h_kv=2, d_k=2, d_v=2, rope=True)
    blanks = {("KR", 2): {(3, 1)}, ("KR", 3): {(3, 1)}}  # K̃_1 row 3, shown in heads 2, 3

    def hidden(kind, head):
        return blanks.get((kind, head), set())

    assert quotes_hidden("S", 3, 0, 3, config, hidden)  # S_3[0,3] = q̃_0·k̃_3
    assert not quotes_hidden("S", 3, 0, 2, config, hidden)
    assert not quotes_hidden("S", 1, 0, 3, config, hidden)  # another K/V group
    assert quotes_hidden("Y", None, 1, 1, config, lambda k, h: {(1, 1)} if k == "C" else set())
    assert not quotes_hidden("Y", None, 1, 0, config, lambda k, h: {(1, 1)} if k == "C" else set())
