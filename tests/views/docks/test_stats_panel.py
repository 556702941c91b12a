"""The statistics panel prints the numbers of `mha-gui info` and follows the configuration."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re

import pytest

from mha_gui.cli import info_text
from mha_gui.document import Document
from mha_gui.engine import load_preset
from tests.views.docks.drawing_views import make_view

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def info_numbers(text: str) -> list[str]:
    """The numbers `mha-gui info` prints after its shapes table (counts, FLOPs, memory)."""
    tail = text.split("parameters:", 1)[1]
    return re.findall(r"\d[\d,]*(?:\.\d+)?(?: [kMGT]?B)?", tail)


@pytest.fixture
def panel(qtbot):
    doc = Document(load_preset("gqa"))
    p = make_view("stats", doc)
    qtbot.addWidget(p)
    yield p
    doc.deleteLater()


@pytest.mark.parametrize("preset", ["toy", "gqa", "bert-base"])
def test_the_panel_shows_every_number_info_prints(qtbot, preset):
    doc = Document(load_preset(preset))
    panel = make_view("stats", doc)
    qtbot.addWidget(panel)
    text = panel.text()
    assert panel.objectName() == "statsPanel"
    assert len(info_numbers(info_text(doc.snapshot()))) >= 14  # parameters, 8 FLOPs, memory…
    for number in info_numbers(info_text(doc.snapshot())):
        assert number in text, number
    for label in ("parameters", "FLOPs per stage", "h·n²", "K/V cache per token"):
        assert label in text
    doc.deleteLater()


def test_the_panel_follows_a_change_of_n(panel, qtbot):
    doc = panel.doc
    doc.set_config(n=9)
    qtbot.wait(5)
    text = panel.text()
    assert "n = 9 tokens" in text
    h = doc.config.h
    assert f"{h * 81:,}" in text  # h·n² attention entries
    for number in info_numbers(info_text(doc.snapshot())):
        assert number in text, number
    doc.undo_stack.undo()
    qtbot.wait(5)
    assert "n = 4 tokens" in panel.text() and f"{h * 16:,}" in panel.text()


def test_the_panel_follows_the_heads_and_the_theme(panel, qtbot):
    doc = panel.doc
    doc.set_config(h=4, h_kv=1)
    text = panel.text()
    assert text.startswith("MQA") and "h = 4" in text
    panel.set_theme("dark")
    assert "#1e1f22" in panel.styleSheet()
    with pytest.raises(ValueError):
        panel.set_theme("neon")
    assert panel.theme_name == "dark"
