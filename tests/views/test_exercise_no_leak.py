"""During an exercise the panel menu cannot copy or export the numbers the student must
find; blocking a pair still works, and leaving the exercise brings the entries back."""

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget

from tests.views.test_exercise_mode import enter

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
