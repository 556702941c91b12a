"""A figure exported from the window uses the window's weights colour range, so the file
looks like the panels on screen."""

from __future__ import annotations

import pytest
from PIL import Image, ImageChops

from mha_gui.export import export_to
from mha_gui.views.window import export_actions

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_the_window_exports_with_its_weights_range(window, tmp_path, monkeypatch):
    monkeypatch.setattr(
        export_actions,
        "ask_figure_options",
        lambda parent, defaults, *a: dict(
            width=600, theme=defaults["theme"], head=None, query=defaults["query"]
        ),
    )
    actions = export_actions.install_export_actions(window, window.document)
    window.document.open_preset("causal-6x16")  # near-uniform weights: the range shows
    window.document.set_stage(3)
    window.set_weights_range("row")
    target = tmp_path / "w.png"
    monkeypatch.setattr(actions, "_ask_path", lambda *a: target)
    assert actions.export_figure() == target
    session = window.document.snapshot()
    row, fixed = tmp_path / "row.png", tmp_path / "fixed.png"
    export_to(session, row, stage="weights", width=600, query=0, weights_range="row")
    export_to(session, fixed, stage="weights", width=600, query=0, weights_range="fixed")
    got = Image.open(target).convert("RGB")
    assert ImageChops.difference(got, Image.open(row).convert("RGB")).getbbox() is None
    assert (
        got.size != Image.open(fixed).size
        or ImageChops.difference(got, Image.open(fixed).convert("RGB")).getbbox()
    )
