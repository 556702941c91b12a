"""Static exports never print what the mouse does ("hover a token…", "click a key
below…"): paper and slides have no mouse. The docks' own drawings still say it."""

from __future__ import annotations

import re

import pytest

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.panels.stage_data import SessionData
from mha_gui.export.drawing import FigureOptions, write_drawing_svg
from mha_gui.export.figures.lines import LinesDrawing
from mha_gui.export.figures.neuron import NeuronDrawing
from mha_gui.export.figures.registry import FIGURES, draw_figure

MOUSE = re.compile(r"\b(hover|click)", re.IGNORECASE)


def svg_text(path) -> str:
    return " ".join(re.findall(r">([^<>]+)<", path.read_text()))


@pytest.mark.parametrize("preset", ["toy", "causal-6x16", "gqa"])
@pytest.mark.parametrize(
    "name", [n for n, spec in FIGURES.items() if not spec.requires and n != "model"]
)
def test_exported_figures_name_no_mouse_action(preset, name, tmp_path):
    s = load_preset(preset)
    drawing = draw_figure(name, SessionData(s), FigureOptions(stage=3, head=0, query=1))
    out = tmp_path / "f.svg"
    write_drawing_svg(out, drawing)
    text = svg_text(out)
    assert text.strip(), name  # the SVG carries the text (so the test can see a hint)
    assert not MOUSE.search(text), (name, MOUSE.search(text))


def test_the_docks_drawings_still_say_what_the_mouse_does():
    data = SessionData(load_preset("toy"))
    assert any(MOUSE.search(n) for n in LinesDrawing(data, interactive=True).notes)
    assert not any(MOUSE.search(n) for n in LinesDrawing(data).notes)
    assert any(MOUSE.search(n) for n in NeuronDrawing(data, 0, 1, None, interactive=True).notes)
    assert not any(MOUSE.search(n) for n in NeuronDrawing(data, 0, 1, None).notes)
