"""Every visible control has an accessible name, at every stage and with every dock shown;
every dock and dialog has one too (WCAG 4.1.2 name, role, value)."""

from __future__ import annotations

from PySide6.QtWidgets import QDockWidget

from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.accessibility.audit import (
    accessible_name,
    focusable_widgets,
    textless_actions,
    unnamed,
)
from mha_gui.views.dialogs.identity_demos import DEMOS, IdentityDialog
from mha_gui.views.dialogs.open_model_dialog import OpenModelDialog
from mha_gui.views.docks.lesson.chooser import LessonChooser
from mha_gui.views.window.export_actions import FigureOptionsDialog
from tests.views.accessibility.helpers import settle, shown


def test_every_visible_focusable_widget_is_named_at_every_stage(window, qtbot):
    shown(qtbot, window)
    for dock in window.findChildren(QDockWidget):
        dock.show()
    for stage in range(len(STAGES)):
        window.document.set_stage(stage)
        settle(qtbot, window)
        widgets = focusable_widgets(window)
        assert len(widgets) > 40  # the walk really walks the window
        assert unnamed(window) == [], STAGES[stage].heading
        assert window.attention_view.canvas in widgets  # the heatmaps are a Tab stop
    assert textless_actions(window) == []


def test_every_dock_and_the_central_panes_are_named(window, qtbot):
    shown(qtbot, window)
    for dock in window.findChildren(QDockWidget):
        assert accessible_name(dock), dock.objectName()
    assert accessible_name(window.attention_view.canvas).startswith("Stage ")
    assert accessible_name(window.query_strip.canvas) == "Query strip: heatmaps"


def test_dialogs_are_named_and_their_controls_too(window, qtbot):
    shown(qtbot, window)
    dialog = window.show_formulas()
    qtbot.waitExposed(dialog)
    assert accessible_name(dialog)
    assert focusable_widgets(dialog)
    assert unnamed(dialog) == []
    dialog.close()
    for name in DEMOS:
        demo = IdentityDialog(name, window.document, window)
        demo.show()
        qtbot.waitExposed(demo)
        assert accessible_name(demo), name
        assert unnamed(demo) == [], name
        demo.close()
    for dialog in (
        OpenModelDialog(window),
        LessonChooser(window),
        FigureOptionsDialog(window, {}, ".png", window.document.config, window.document.tokens),
    ):
        dialog.show()
        qtbot.waitExposed(dialog)
        assert accessible_name(dialog)
        assert unnamed(dialog) == [], type(dialog).__name__
        dialog.close()
