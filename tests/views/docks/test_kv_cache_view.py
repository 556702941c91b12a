"""The MHA / GQA / MQA dock follows the configuration (the figure's own tests:
tests/export/figures/test_kv_cache.py)."""

import pytest

from mha_gui.document import Document
from mha_gui.engine import load_preset
from tests.views.docks.drawing_views import make_view

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_the_widget_follows_the_configuration(qtbot, show_widget):
    doc = Document(load_preset("toy"))
    view = show_widget(make_view("kv-cache", doc), 800, 400)
    assert view.objectName() == "kvCacheView"
    qtbot.waitUntil(lambda: view.drawing is not None)
    assert [v.h_kv for v in view.drawing.variants] == [2, 1]
    doc.set_config(h=4, h_kv=4, d_model=8)
    qtbot.waitUntil(lambda: [v.h_kv for v in view.drawing.variants] == [4, 2, 1])
    doc.set_config(n=10)
    qtbot.waitUntil(lambda: view.drawing.variants[0].kv_cache == 10 * 4 * (2 + 2))
    doc.deleteLater()
