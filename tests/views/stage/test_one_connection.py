"""Each stage view listens to configChanged once, and not to shapeChanged: the document
emits configChanged after every shapeChanged in the same call, so listening to both
would rebuild (or refresh) twice per new shape."""

from __future__ import annotations

import pytest
from PySide6.QtCore import SIGNAL

from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.views.stage.attention_view import AttentionView
from mha_gui.views.stage.query_strip import QueryStrip
from mha_gui.views.stage.stage_bar import StageBar


@pytest.mark.parametrize("view_class", [AttentionView, StageBar, QueryStrip])
def test_connected_once_to_config_and_never_to_shape(qtbot, view_class):
    doc = Document(load_preset("toy"))
    before = {s: doc.receivers(SIGNAL(s)) for s in ("shapeChanged()", "configChanged()")}
    view = view_class(doc)
    qtbot.addWidget(view)
    assert doc.receivers(SIGNAL("shapeChanged()")) == before["shapeChanged()"]
    assert doc.receivers(SIGNAL("configChanged()")) == before["configChanged()"] + 1
