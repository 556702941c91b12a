"""A view that follows the configuration hears each edit once: configChanged comes after
every shapeChanged, so a view connected to both would redo its work twice per edit. Each
slot is counted while the real document makes real edits (a shape change, a switch)."""

from __future__ import annotations

import pytest

from mha_gui.document import Document
from mha_gui.engine import load_preset
from mha_gui.views.docks.contributions.contribution_view import ContributionCanvas, ContributionView
from mha_gui.views.docks.kv_cache.kv_cache_view import KvCacheView
from mha_gui.views.docks.stats.stats_panel import StatsPanel
from mha_gui.views.docks.train.train_panel import TrainPanel
from tests.views.docks.drawing_views import make_view

# (dock name, class, the slot that follows the configuration)
FOLLOWERS = [
    ("kv-cache", KvCacheView, "refresh"),
    ("stats", StatsPanel, "_changed"),
    ("contributions", ContributionView, "sync"),
    ("contributions", ContributionCanvas, "refresh"),
    ("train", TrainPanel, "_fill"),
]
EDITS = {
    "shape": lambda doc: doc.set_config(d_model=doc.config.d_model + 2),
    "heads": lambda doc: doc.set_config(h=doc.config.h * 2, h_kv=doc.config.h_kv),
    "switch": lambda doc: doc.set_config(causal=not doc.config.causal),
    "undo": lambda doc: (doc.set_config(d_k=doc.config.d_k + 1), doc.undo_stack.undo()),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize(
    ("name", "cls", "slot"), FOLLOWERS, ids=lambda v: getattr(v, "__name__", v)
)
def test_each_configuration_edit_reaches_the_view_once(qtbot, monkeypatch, name, cls, slot, edit):
    calls = []
    real = getattr(cls, slot)

    def counted(self, *args):
        calls.append(type(self).__name__)
        return real(self, *args)

    monkeypatch.setattr(cls, slot, counted)  # before the view connects its slots
    doc = Document(load_preset("toy"))
    view = make_view(name, doc)
    qtbot.addWidget(view)
    before = len(calls)
    shapes = []
    doc.shapeChanged.connect(lambda: shapes.append(1))
    EDITS[edit](doc)
    per_edit = 2 if edit == "undo" else 1  # undo is an edit of its own
    assert calls[before:] == [cls.__name__] * per_edit
    if edit in ("shape", "heads", "undo"):
        assert shapes  # the edit did change shapes: both signals came
