"""The neuron and token-lines figures lay themselves out for a narrow side dock: at every
width from their narrowest to their own, no text runs past the figure's edges (the
title and notes wrap, the row labels are shortened, the two key charts stack), and the
cells still print their numbers where the wide figure does."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from mha_gui.engine import load_preset
from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.export.drawing import render_drawing
from mha_gui.export.figures import lines, neuron
from mha_gui.export.figures.lines import LinesDrawing
from mha_gui.export.figures.neuron import NeuronDrawing
from mha_gui.export.figures.neuron_layout import MIN_WIDTH, WIDTH
from mha_gui.export.text import ensure_app, rich_width, text_width


def _layers():
    causal = load_preset("causal-6x16")
    return {
        "toy": load_preset("toy"),
        "gqa": load_preset("gqa"),
        "causal-rope": causal.__class__(
            causal.config.with_changes(rope=True), causal.tokens, causal.params
        ),
        "40 tokens": random_session(3, tokens=40, d_model=64, heads=4),
    }


class TextBoxes:
    """Records the horizontal extent of every text a figure module paints."""

    def __init__(self, monkeypatch, module):
        self.boxes: list[tuple[float, float, float, str]] = []  # left, right, y, text
        real = {
            name: getattr(module, name)
            for name in ("paint_text", "draw_rich", "draw_rich_wrapped", "draw_plain_wrapped")
            if hasattr(module, name)
        }

        def paint_text(painter, x, y, w, h, s, px, color, align=None, bold=False):
            tw = text_width(s, px, bold)
            if align is not None and align & Qt.AlignRight:
                left = x + w - tw
            elif align is not None and align & Qt.AlignHCenter:
                left = x + (w - tw) / 2
            else:
                left = x
            self.boxes.append((left, left + tw, y, s))
            return real["paint_text"](painter, x, y, w, h, s, px, color, align, bold)

        def draw_rich(painter, x, y, text, px, color, bold=False):
            self.boxes.append((x, x + rich_width(text, px, bold), y, text))
            return real["draw_rich"](painter, x, y, text, px, color, bold)

        def wrapped(name):
            def draw(painter, x, y, width, text, px, color, bold=False):
                if painter is not None:
                    self.boxes.append((x, x + width, y, text))
                return real[name](painter, x, y, width, text, px, color, bold)

            return draw

        replacements = {"paint_text": paint_text, "draw_rich": draw_rich}
        for name in ("draw_rich_wrapped", "draw_plain_wrapped"):
            replacements[name] = wrapped(name)
        for name in real:
            monkeypatch.setattr(module, name, replacements[name])

    def outside(self, drawing) -> list[str]:
        return [
            f"{text!r}: {left:.0f}–{right:.0f} of {drawing.width:.0f}"
            for left, right, y, text in self.boxes
            if left < -0.5 or right > drawing.width + 0.5 or not 0 <= y <= drawing.height
        ]


@pytest.mark.parametrize("width", [MIN_WIDTH, 530.0, 700.0, 900.0, WIDTH])
@pytest.mark.parametrize("name", ["toy", "gqa", "causal-rope", "40 tokens"])
def test_no_neuron_text_runs_past_the_figure(monkeypatch, name, width):
    ensure_app()
    session = _layers()[name]
    head = session.config.h - 1
    boxes = TextBoxes(monkeypatch, neuron)
    drawing = NeuronDrawing(SessionData(session), head, 2, None, "row", True, width=width)
    assert drawing.width == width
    render_drawing(drawing, None, "light", "diverging")
    assert boxes.boxes and not boxes.outside(drawing)
    # the stacked charts below a side-by-side pair's width, both charts full length
    assert drawing.stacked == (width < 800)
    assert all(chart.w >= 200 for chart in drawing.charts)


@pytest.mark.parametrize("name", ["toy", "gqa", "causal-rope"])
def test_a_dock_wide_neuron_figure_prints_the_cells_numbers(name):
    ensure_app()
    session = _layers()[name]
    wide = NeuronDrawing(SessionData(session), 0, 1, None)
    narrow = NeuronDrawing(SessionData(session), 0, 1, None, width=530.0)
    assert wide.show_numbers
    assert narrow.show_numbers and narrow.value_px >= 11


@pytest.mark.parametrize("width", [lines.MIN_WIDTH, 530.0, lines.WIDTH])
@pytest.mark.parametrize("name", ["toy", "gqa", "causal-rope", "40 tokens"])
def test_no_token_lines_text_runs_past_the_figure(monkeypatch, name, width):
    ensure_app()
    boxes = TextBoxes(monkeypatch, lines)
    drawing = LinesDrawing(SessionData(_layers()[name]), interactive=True, width=width)
    assert drawing.width == width
    render_drawing(drawing, None, "light", "diverging")
    assert boxes.boxes and not boxes.outside(drawing)
    assert drawing.x_to - drawing.x_from > 80  # the lines keep room to slope
