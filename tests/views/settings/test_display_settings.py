"""DisplaySettings: a model views follow; QSettings is written only when the user changes
a value."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction

from mha_gui.app import create_main_window
from mha_gui.views.settings.display_options import bind_display
from mha_gui.views.settings.display_settings import FIELDS, ZOOM_STEPS, DisplaySettings, next_zoom

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _store() -> QSettings:
    return QSettings("mha-gui", "mha-gui")


def _view_keys() -> list[str]:
    return [k for k in _store().allKeys() if k.startswith("view/")]


def test_building_and_closing_a_window_writes_no_display_setting(qtbot, _temporary_settings):
    w = create_main_window("toy")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    assert w.close()
    assert _view_keys() == []
    assert str(_temporary_settings) in _store().fileName()  # never the real home


def test_defaults_changes_and_storage(qtbot):
    s = DisplaySettings()
    assert (s.theme, s.colormap, s.zoom, s.show_values) == ("light", "diverging", 1.0, True)
    seen = []
    s.changed.connect(lambda name, value: seen.append((name, value)))
    zooms = []
    s.zoomChanged.connect(zooms.append)
    assert s.set("zoom", 1.5, save=False) is True
    assert s.set("zoom", 1.5) is False  # no change: no signal, nothing written
    assert seen == [("zoom", 1.5)] and zooms == [1.5] and _view_keys() == []
    assert s.set("show_values", False) is True
    assert _store().value("view/showValues") in (False, "false")
    assert _view_keys() == ["view/showValues"]
    # a new model reads what was saved (and only that)
    again = DisplaySettings()
    assert again.show_values is False and again.zoom == 1.0


@pytest.mark.parametrize(
    ("name", "value"),
    [("theme", "sepia"), ("colormap", "rainbow"), ("zoom", "big"), ("zoom", float("nan"))],
)
def test_bad_values_are_refused_and_change_nothing(qtbot, name, value):
    s = DisplaySettings()
    before = s.value(name)
    with pytest.raises(ValueError):
        s.set(name, value)
    assert s.value(name) == before and _view_keys() == []
    with pytest.raises(ValueError, match="unknown display setting"):
        s.set("fontSize", 3)


def test_zoom_is_clamped_and_steps(qtbot):
    s = DisplaySettings()
    s.set("zoom", 99, save=False)
    assert s.zoom == ZOOM_STEPS[-1]
    assert next_zoom(1.0, +1) == 1.15 and next_zoom(1.0, -1) == 0.9
    assert next_zoom(ZOOM_STEPS[-1], +1) == ZOOM_STEPS[-1]
    assert next_zoom(ZOOM_STEPS[0], -1) == ZOOM_STEPS[0]


def test_bad_stored_values_fall_back_to_the_defaults_without_writing(qtbot):
    store = _store()
    store.setValue("view/theme", "sepia")
    store.setValue("view/zoom", "huge")
    store.setValue("view/showValues", "maybe")
    store.setValue("view/colormap", "prgn")
    store.sync()
    s = DisplaySettings()
    assert (s.theme, s.zoom, s.show_values, s.colormap) == ("light", 1.0, True, "prgn")
    assert _store().value("view/theme") == "sepia"  # left as it was


class _Recorder:
    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        if not name.startswith("set_"):
            raise AttributeError(name)
        return lambda value: self.calls.append((name[4:], value))


def test_a_bound_view_gets_every_setting_now_and_on_change(qtbot):
    s = DisplaySettings()
    view = _Recorder()
    bind_display(view, s)
    assert sorted(view.calls) == sorted(
        [("theme", "light"), ("colormap", "diverging"), ("zoom", 1.0), ("show_values", True)]
    )
    view.calls.clear()
    s.set("colormap", "grey", save=False)
    s.set("theme", "dark", save=False)
    assert view.calls == [("colormap", "grey"), ("theme", "dark")]


def test_a_view_missing_a_setter_fails_when_bound_not_silently(qtbot):
    class NoZoom:
        def set_theme(self, name):
            pass

    with pytest.raises(AttributeError, match="set_colormap"):
        bind_display(NoZoom(), DisplaySettings())


def test_every_field_has_its_signal():
    for field in FIELDS.values():
        assert hasattr(DisplaySettings, field.signal)


def test_system_theme_resolves_for_views_and_stays_checked_in_the_menu(window):
    themes = []
    window.display.themeChanged.connect(themes.append)
    window.findChild(QAction, "action.theme.system").trigger()
    assert window.display.theme == "system"
    assert themes == [window.theme_name()] and themes[0] in ("light", "dark")
    assert window.findChild(QAction, "action.theme.system").isChecked()
    assert _store().value("view/theme") == "system"


def test_show_values_menu_follows_the_setting_and_saves_only_clicks(window):
    action = window.findChild(QAction, "action.showValues")
    assert action.isChecked()
    window.display.set("show_values", False, save=False)
    assert not action.isChecked() and not window.show_values()
    assert _view_keys() == []
    action.trigger()  # the user's click
    assert window.show_values() is True and action.isChecked()
    assert _view_keys() == ["view/showValues"]


def test_weights_colour_range_menu_recolours_the_strip(window, qtbot):
    from PySide6.QtWidgets import QApplication

    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    strip = window.query_strip

    def grab():
        for _ in range(3):
            QApplication.processEvents()
        return strip.grab().toImage()

    before = grab()
    numbers = strip.panels["heads"].matrix.copy()
    window.findChild(QAction, "action.weightsRange.row").trigger()
    assert window.weights_range() == "row" and _store().value("view/weightsRange") == "row"
    assert window.findChild(QAction, "action.weightsRange.row").isChecked()
    assert grab() != before
    assert (strip.panels["heads"].matrix == numbers).all()  # the numbers stay the weights
    window.set_weights_range("fixed", save=False)
    assert grab() == before
    with pytest.raises(ValueError, match="unknown weights range"):
        window.set_weights_range("log")
