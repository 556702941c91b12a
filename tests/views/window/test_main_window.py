"""The main window: contracts, title, save prompt, open/save, settings, soak."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QColor, QKeySequence, QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QCheckBox, QDockWidget, QMenu, QMessageBox, QTableView

from mha_gui.app import create_main_window, run_app
from mha_gui.engine.layer.session import load_session
from mha_gui.engine.panels.notation import rich_text
from mha_gui.engine.panels.stages import STAGES, formula_for, shapes_line

Button = QMessageBox.StandardButton


def test_contract_object_names_exist(window):
    for name in ("X", "W_Q", "W_K", "W_V", "W_O"):
        assert isinstance(window.findChild(QTableView, f"editor.{name}"), QTableView)
    assert isinstance(window.findChild(QCheckBox, "causalToggle"), QCheckBox)
    assert window.findChild(QAction, "action.undo") is not None
    assert window.findChild(QAction, "action.redo") is not None
    assert window.findChild(object, "attentionView") is not None
    for menu in ("menu.file", "menu.edit", "menu.view", "menu.help", "menu.export"):
        assert isinstance(window.findChild(QMenu, menu), QMenu), menu
    docks = {d.objectName() for d in window.findChildren(QDockWidget)}
    assert {"dock.X", "dock.config", "dock.W_Q", "dock.W_K", "dock.W_V", "dock.W_O"} <= docks
    assert window.theme_name() in ("light", "dark")
    assert window.show_values() is True


def test_standard_shortcuts(window):
    def keys(name):
        return [s.toString() for s in window.findChild(QAction, name).shortcuts()]

    assert keys("action.open") == [QKeySequence(QKeySequence.StandardKey.Open).toString()]
    assert "Ctrl+S" in keys("action.save")
    assert "Ctrl+Shift+S" in keys("action.saveAs")
    assert "Ctrl+Q" in keys("action.quit")
    assert "Ctrl+Z" in keys("action.undo")
    assert "Ctrl+Shift+Z" in keys("action.redo") and "Ctrl+Y" in keys("action.redo")
    assert "Ctrl++" in keys("action.zoomIn") and "Ctrl+-" in keys("action.zoomOut")


def test_undo_action_names_the_command_and_title_marks_changes(window):
    doc = window.document
    assert window.windowTitle() == "toy (preset)[*] — mha-gui"
    assert not window.isWindowModified()
    model = window.findChild(QTableView, "editor.W_Q").model()
    assert model.setData(model.index(0, 1), "0.5")
    undo = window.findChild(QAction, "action.undo")
    assert undo.isEnabled() and "Edit W_Q" in undo.text()
    assert window.isWindowModified()
    undo.trigger()
    assert doc.matrix("W_Q")[0, 0, 1] == 0 and not window.isWindowModified()
    window.findChild(QAction, "action.redo").trigger()
    assert doc.matrix("W_Q")[0, 0, 1] == 0.5


def test_a_refused_value_is_explained_in_the_status_bar(window):
    model = window.findChild(QTableView, "editor.X").model()
    assert not model.setData(model.index(0, 0), "abc")
    assert "not a number" in window.statusBar().currentMessage()
    assert not model.setData(model.index(0, 0), "2e6")
    assert "beyond" in window.statusBar().currentMessage()


def _edit(window):
    model = window.findChild(QTableView, "editor.X").model()
    assert model.setData(model.index(0, 0), "9")


def test_close_with_unsaved_edits_asks_cancel_keeps_discard_closes(window, dialogs, qtbot):
    window.show()
    _edit(window)
    dialogs.answer = Button.Cancel
    assert window.close() is False
    assert window.isVisible() and dialogs.kinds() == ["warning"]
    assert "not saved" in dialogs.calls[0][1]
    dialogs.answer = Button.Discard
    assert window.close() is True
    assert not window.isVisible()


def test_close_and_save_writes_the_file(window, dialogs, tmp_path):
    window.show()
    _edit(window)
    dialogs.answer = Button.Save
    dialogs.save_path = str(tmp_path / "lesson")  # suffix added
    assert window.close() is True
    saved = load_session(tmp_path / "lesson.json")
    assert saved.params.X[0, 0] == 9


def test_close_without_edits_does_not_ask(window, dialogs):
    window.show()
    assert window.close() is True
    assert dialogs.calls == []


def test_save_open_round_trip_and_recent_files(window, dialogs, tmp_path):
    doc = window.document
    _edit(window)
    doc.set_token(2, "lay")
    dialogs.save_path = str(tmp_path / "round.json")
    window.findChild(QAction, "action.saveAs").trigger()
    path = tmp_path / "round.json"
    assert json.loads(path.read_text())["format"] == "mha-gui-session"
    assert window.windowTitle() == "round.json[*] — mha-gui" and not window.isWindowModified()
    x = doc.matrix("X").copy()
    assert window.new_from_preset("mqa")  # nothing unsaved: no prompt
    assert doc.config.h_kv == 1 and dialogs.kinds() == ["save"]
    dialogs.open_path = str(path)
    window.findChild(QAction, "action.open").trigger()
    np.testing.assert_array_equal(doc.matrix("X"), x)
    assert doc.tokens[2] == "lay"
    assert window.windowTitle() == "round.json[*] — mha-gui"
    assert window.files.recent_files()[0] == str(path.resolve())
    menu = window.findChild(QMenu, "menu.recent")
    menu.aboutToShow.emit()
    shown = [a.text() for a in menu.actions() if a.isVisible() and not a.isSeparator()]
    assert "round.json" in shown[0] and shown[-1] == "Clear list"
    # Save (Ctrl+S) on a named file writes without asking
    _edit(window)
    window.document.set_value("X", (1, 1), 4.5)
    window.findChild(QAction, "action.save").trigger()
    assert load_session(path).params.X[1, 1] == 4.5
    assert dialogs.kinds().count("save") == 1


def test_opening_a_bad_file_says_why_and_changes_nothing(window, dialogs, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "mha-gui-session", "version": 99}')
    x = window.document.matrix("X").copy()
    title = window.windowTitle()
    assert window.open_path(bad) is False
    assert dialogs.kinds() == ["critical"] and "version" in dialogs.calls[0][1]
    np.testing.assert_array_equal(window.document.matrix("X"), x)
    assert window.windowTitle() == title
    assert window.open_path(tmp_path / "missing.json") is False
    assert dialogs.kinds() == ["critical", "critical"]


def test_open_with_unsaved_edits_cancel_keeps_them(window, dialogs, tmp_path):
    _edit(window)
    dialogs.answer = Button.Cancel
    assert window.files.open_dialog() is False
    assert dialogs.kinds() == ["warning"]  # no file dialog after Cancel
    assert window.document.matrix("X")[0, 0] == 9
    assert window.new_from_preset("gqa") is False and window.document.config.h == 2


def test_paste_and_copy_actions_act_on_the_focused_editor(window, qtbot):
    window.show()
    table = window.findChild(QTableView, "editor.X")
    table.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is table, timeout=1000)
    table.setCurrentIndex(table.model().index(2, 2))
    QApplication.clipboard().setText("5\t6\n7\t8")
    window.findChild(QAction, "action.paste").trigger()
    np.testing.assert_array_equal(window.document.matrix("X")[2:4, 2:4], [[5, 6], [7, 8]])
    assert window.document.undo_stack.count() == 1
    window.findChild(QAction, "action.copy").trigger()
    assert QApplication.clipboard().text() == "5.0\t6.0\n7.0\t8.0"


def test_randomize_and_reset(window, dialogs):
    doc = window.document
    original = doc.matrix("W_Q").copy()
    dialogs.integer = 7
    window.findChild(QAction, "action.randomize").trigger()
    assert not np.array_equal(doc.matrix("W_Q"), original)
    assert np.array_equal(doc.matrix("X"), create_window_x())
    window.findChild(QAction, "action.reset").trigger()
    np.testing.assert_array_equal(doc.matrix("W_Q"), original)


def create_window_x():
    from mha_gui.engine.layer.presets import load_preset

    return load_preset("toy").params.X


def test_formulas_dialog_lists_every_stage_for_the_current_config(window):
    window.document.set_config(causal=True)
    dialog = window.show_formulas()
    text = dialog.text()

    def shown(formula: str) -> str:  # typeset: the words a reader sees, without marks
        return " ".join(QTextDocumentFragment.fromHtml(rich_text(formula)).toPlainText().split())

    text = " ".join(text.split())
    for stage in STAGES:
        assert shown(formula_for(stage, window.document.config)) in text
        assert shown(shapes_line(stage, window.document.config)) in text
    dialog.close()


def test_theme_zoom_and_show_values_are_applied_and_remembered(window, qtbot, _temporary_settings):
    window.resize(1280, 720)
    window.show()
    qtbot.wait(5)
    light = window.grab().toImage()
    themes = []
    window.themeChanged.connect(themes.append)
    window.findChild(QAction, "action.theme.dark").trigger()
    assert window.theme_name() == "dark" and themes == ["dark"]
    qtbot.wait(5)
    dark = window.grab().toImage()
    assert dark != light
    assert dark.pixelColor(5, window.height() - 5).lightness() < 100  # status bar is dark
    size = QApplication.font().pointSizeF()
    window.findChild(QAction, "action.zoomIn").trigger()
    assert QApplication.font().pointSizeF() > size
    window.findChild(QAction, "action.showValues").trigger()
    assert window.show_values() is False
    s = QSettings("mha-gui", "mha-gui")
    assert s.value("view/theme") == "dark"
    assert float(s.value("view/zoom")) > 1.0
    assert str(s.value("view/showValues")).lower() == "false"
    assert str(_temporary_settings) in s.fileName()  # never the real home


def test_window_layout_is_remembered(qtbot, dialogs):
    first = create_main_window("toy")
    qtbot.addWidget(first)
    first.docks["config"].setVisible(False)
    first.close()
    second = create_main_window("toy")
    qtbot.addWidget(second)
    assert second.docks["config"].isHidden()


def test_create_main_window_from_a_file(tmp_path, qtbot):
    from mha_gui.engine.layer.presets import load_preset
    from mha_gui.engine.layer.session import save_session

    path = save_session(load_preset("positional"), tmp_path / "p.json")
    w = create_main_window(session=path)
    qtbot.addWidget(w)
    assert w.windowTitle() == "p.json[*] — mha-gui"
    assert w.document.config.n == 6
    w2 = create_main_window("causal-6x16")
    qtbot.addWidget(w2)
    assert w2.document.config.causal and w2.findChild(QCheckBox, "causalToggle").isChecked()


def test_run_app_refuses_a_bad_file_with_status_2(tmp_path, capsys):
    assert run_app(session_path=tmp_path / "nope.json") == 2
    err = capsys.readouterr().err
    assert err.startswith("mha-gui: error: ") and err.count("\n") == 1
    assert run_app(preset="nonsense") == 2


def test_soak_2000_edits_with_repaints(window, qtbot):
    window.resize(1280, 720)
    window.show()
    doc = window.document
    models = {n: window.findChild(QTableView, f"editor.{n}").model() for n in ("X", "W_Q", "W_O")}
    rng = np.random.default_rng(0)
    for i in range(2000):
        name = ("X", "W_Q", "W_O")[i % 3]
        m = models[name]
        r, c = rng.integers(m.rowCount()), rng.integers(m.columnCount())
        assert m.setData(m.index(int(r), int(c)), f"{rng.normal():.3f}")
        if i % 10 == 0:
            QApplication.processEvents()
        if i % 500 == 0:
            doc.set_head(int(i // 500) % 2)
            doc.set_stage(int(i // 100) % 7)
    QApplication.processEvents()
    assert doc.undo_stack.count() <= 2000
    assert np.isfinite(doc.trace().output).all()
    window.grab()


@pytest.mark.parametrize("zoom", [1.0, 1.5])
@pytest.mark.parametrize("preset", ["causal-6x16", "gqa", "toy", "positional"])
def test_presets_fit_on_a_projector(qtbot, preset, zoom):
    w = create_main_window(preset)
    qtbot.addWidget(w)
    w.set_zoom(zoom, save=False)
    w.resize(1280, 720)
    w.show()
    QApplication.processEvents()
    assert w.width() <= 1280 and w.height() <= 720
    bar = w.stage_bar
    for stage in range(len(STAGES)):
        w.document.set_stage(stage)
        QApplication.processEvents()
        assert w.width() <= 1280 and w.height() <= 720, STAGES[stage].name
        # formula, shapes, title and the controls are whole and inside the bar
        for label in (bar.formula_label, bar.shapes_label, bar.title_label):
            needed = label.heightForWidth(label.width())
            one_line = label.fontMetrics().horizontalAdvance(label.text())
            assert label.width() >= one_line or label.height() >= needed, label.text()
        for child in (bar.formula_label, bar.shapes_label, bar.title_label, bar.query_selector):
            box = child.geometry().translated(child.parentWidget().mapTo(bar, child.pos() * 0))
            assert bar.rect().contains(box), child.objectName()
        assert bar.what_label.toolTip() == STAGES[stage].what  # the sentence may elide
    # the query strip's panels lie within its canvas (nothing cut off on the right)
    canvas = w.query_strip.canvas
    for name, panel in w.query_strip.panels.items():
        right = panel.plot.sceneBoundingRect().right()
        assert right <= canvas.width() + 1, name
    # the weight editors' titles are whole: the dock column is wide enough to wrap them
    w.docks["W_Q"].raise_()
    QApplication.processEvents()
    title = w.editors["W_Q"].title
    assert title.isVisible() and title.height() >= title.heightForWidth(title.width())
    assert w.editors["W_Q"].tabs.geometry().right() <= w.editors["W_Q"].width()


def test_autosave_is_offered_back_after_a_crash(qtbot, dialogs, _temporary_settings):
    crashed = create_main_window("toy")
    qtbot.addWidget(crashed)
    assert crashed.recovery.autosave() is None  # nothing unsaved, nothing written
    _edit(crashed)
    path = crashed.recovery.autosave()
    assert path is not None and _temporary_settings in path.parents
    # a new start (the crashed window never closed)
    fresh = create_main_window("toy")
    qtbot.addWidget(fresh)
    dialogs.answer = Button.Yes
    assert fresh.offer_recovery() is True
    assert dialogs.kinds() == ["question"]
    assert fresh.document.matrix("X")[0, 0] == 9
    assert fresh.isWindowModified() and fresh.windowTitle().startswith("untitled")
    # a clean close (here: discarding) removes the autosave
    dialogs.answer = Button.Discard
    assert fresh.close() and not path.exists()
    assert fresh.offer_recovery() is False


def test_declining_recovery_drops_the_autosave(qtbot, dialogs):
    w = create_main_window("toy")
    qtbot.addWidget(w)
    _edit(w)
    path = w.recovery.autosave()
    dialogs.answer = Button.No
    assert w.offer_recovery() is False and not path.exists()
    assert w.document.matrix("X")[0, 0] == 9  # the current work is untouched


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_recovered_work_keeps_its_file_and_running_copies_keep_theirs(
    qtbot, dialogs, tmp_path, _temporary_settings
):
    import os

    from mha_gui.engine.layer.presets import load_preset
    from mha_gui.engine.layer.session import save_session
    from mha_gui.views.window import autosave

    lesson = save_session(load_preset("toy"), tmp_path / "lesson.json")
    crashed = create_main_window(session=lesson)
    qtbot.addWidget(crashed)
    _edit(crashed)
    mine = crashed.recovery.autosave()
    assert str(os.getpid()) in mine.name  # per-process name
    # pretend it was written by a copy of the app that has since died
    dead = _dead_pid()
    orphan = mine.with_name(f"mha-gui-autosave-{dead}.json")
    mine.rename(orphan)
    mine.with_suffix(".origin").rename(orphan.with_suffix(".origin"))
    # … and another copy that is still running has unsaved work of its own (older)
    alive = os.getppid()
    other = orphan.with_name(f"mha-gui-autosave-{alive}.json")
    save_session(load_preset("gqa"), other)
    autosave.write_origin(other, None)
    os.utime(other, (1, 1))
    crashed.document.undo_stack.setClean()

    fresh = create_main_window("toy")
    qtbot.addWidget(fresh)
    dialogs.answer = Button.Yes
    assert fresh.offer_recovery() is True
    assert "lesson.json" in dialogs.calls[0][1]
    doc = fresh.document
    assert doc.matrix("X")[0, 0] == 9 and doc.path == lesson
    assert fresh.windowTitle() == "lesson.json[*] — mha-gui" and fresh.isWindowModified()
    assert not orphan.exists() and not orphan.with_suffix(".origin").exists()
    assert other.exists()  # the running copy's autosave is never offered nor removed
    assert other not in [a.data for a in autosave.orphaned(other.parent)]
    assert dialogs.kinds() == ["question"]
    # Save writes straight back to the original file
    fresh.findChild(QAction, "action.save").trigger()
    assert "save" not in dialogs.kinds()
    assert load_session(lesson).params.X[0, 0] == 9
    assert not fresh.isWindowModified()


def test_the_newest_orphan_is_offered_first(qtbot, dialogs, _temporary_settings):
    import os

    from mha_gui.engine.layer.presets import load_preset
    from mha_gui.engine.layer.session import save_session
    from mha_gui.views.window import autosave
    from mha_gui.views.window.main_window import autosave_folder

    folder = autosave_folder()
    folder.mkdir(parents=True, exist_ok=True)
    old = save_session(load_preset("gqa"), autosave.data_path(folder, _dead_pid()))
    new = save_session(load_preset("mqa"), autosave.data_path(folder, _dead_pid()))
    os.utime(old, (1000, 1000))
    w = create_main_window("toy")
    qtbot.addWidget(w)
    assert [a.data for a in autosave.orphaned(folder)] == [new, old]
    dialogs.answer = Button.Yes
    assert w.offer_recovery() is True
    assert w.document.config.h_kv == 1 and w.windowTitle().startswith("untitled")
    assert not new.exists() and old.exists()


def _contrast(a: QColor, b: QColor) -> float:
    def lum(c: QColor) -> float:
        def ch(v: float) -> float:
            v /= 255.0
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("name", ["light", "dark"])
def test_editor_numbers_and_head_titles_are_readable(window, name):
    from PySide6.QtCore import Qt

    from mha_gui import theme

    window.set_theme(name, save=False)
    base = QApplication.palette().color(QApplication.palette().ColorRole.Base)
    for editor in ("X", "W_O"):
        model = window.findChild(QTableView, f"editor.{editor}").model()
        for r in range(model.rowCount()):
            for c in range(model.columnCount()):
                tint = model.index(r, c).data(Qt.ItemDataRole.BackgroundRole)
                a = tint.alphaF()  # translucent over a light base, opaque over a dark one
                shown = QColor(
                    *(
                        round((1 - a) * b + a * t)
                        for b, t in zip(
                            (base.red(), base.green(), base.blue()),
                            (tint.red(), tint.green(), tint.blue()),
                            strict=True,
                        )
                    )
                )
                text = model.index(r, c).data(Qt.ItemDataRole.ForegroundRole)
                assert _contrast(QColor(text), shown) >= 4.5, (editor, r, c)
    background = QColor(theme.palette(name).background)
    for head in range(len(theme.HEAD_COLORS)):
        assert _contrast(QColor(theme.head_text_color(head, name)), background) >= 3.0, head


def test_zooming_back_out_gives_the_docks_their_small_titles_back(window, qtbot):
    """150 % → 100 %: dock title bars and the dock tabs are as before zooming in."""
    from PySide6.QtWidgets import QTabBar

    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)

    def titles():
        qtbot.wait(10)
        bars = [t for t in window.findChildren(QTabBar) if t.parent() is window and t.count()]
        return (
            {name: dock.widget().geometry().y() for name, dock in window.docks.items()},
            {name: dock.fontInfo().pointSizeF() for name, dock in window.docks.items()},
            [(bar.fontInfo().pointSizeF(), bar.sizeHint().height()) for bar in bars],
        )

    before = titles()
    window.set_zoom(1.5, save=False)
    zoomed = titles()
    assert all(zoomed[1][n] > before[1][n] for n in before[1])
    window.set_zoom(1.0, save=False)
    assert titles() == before
