"""The token lines figure (export/figures/lines.py): many tokens thin the weak lines,
a colour range and a hovered token choose the lines, the CLI's --head draws one head."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.cli import main
from mha_gui.engine import load_preset
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.engine.teaching.token_lines import READABLE_TOKENS, THIN_BELOW, token_lines
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.figures.lines import LinesDrawing
from mha_gui.export.figures.registry import draw_figure


def test_many_tokens_thin_the_weak_lines_and_say_so():
    session = load_preset("bert-base")
    d = LinesDrawing(SessionData(session))
    trace = session.run()
    assert session.config.n > READABLE_TOKENS and d.model.threshold == THIN_BELOW
    assert all(ln.weight >= THIN_BELOW for ln in d.model.lines)
    assert len(d.model.lines) == int((trace.weights >= THIN_BELOW).sum())
    assert any("lines weaker than 0.1 are left out" in note for note in d.notes)
    # the row range makes every row's strongest key a line
    row = LinesDrawing(SessionData(session), weights_range="row")
    assert len(row.model.lines) >= 12 * 128


def test_token_lines_with_a_range_and_a_focus():
    w = np.array([[[0.5, 0.5], [0.2, 0.8]]])
    mask = np.array([[False, True], [False, False]])
    model = token_lines(w, mask, focus=("key", 1), weights_range="row")
    assert [(ln.query, ln.key, ln.weight, ln.strength) for ln in model.lines] == [(1, 1, 0.8, 1.0)]
    with pytest.raises(ValueError, match="focus"):
        token_lines(w, mask, focus=("value", 0))


def test_one_head_from_the_cli_options():
    data = SessionData(load_preset("causal-6x16"))
    one = draw_figure("lines", data, FigureOptions(extra={"head": 2}))
    assert one.heads == (2,) and {ln.head for ln in one.model.lines} == {2}
    every = draw_figure("lines", data, FigureOptions())
    assert every.heads == (0, 1, 2, 3)
    with pytest.raises(ValueError, match="head 7 is out of range"):
        draw_figure("lines", data, FigureOptions(extra={"head": 7}))


def test_cli_exports_the_lines(tmp_path, capsys):
    out = tmp_path / "lines.svg"
    code = main(["export", "--preset", "toy", "--view", "lines", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    svg = out.read_text()
    assert "Token lines" in svg and "head 1" in svg and "<image" not in svg
    png = tmp_path / "lines.png"
    code = main(
        ["export", "--preset", "toy", "--view", "lines", "--theme", "dark", "--out", str(png)]
    )
    assert code == 0 and png.stat().st_size > 10_000
