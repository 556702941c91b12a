"""What a reader sees in a figure: numbers that are never a false 0, one kind of minus,
aligned colour bars, singular nouns, one header per handout page, the chosen colours."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re
import subprocess
import xml.etree.ElementTree as ET
from shutil import which

import numpy as np
import pytest
from PIL import Image

from mha_gui.engine import load_preset
from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.layer.session import Session
from mha_gui.export import export_to, figure

SVG = "{http://www.w3.org/2000/svg}"


def _texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    return ["".join(e.itertext()).strip() for e in root.iter(SVG + "text")]


@pytest.fixture
def tiny():
    toy = load_preset("toy")
    return Session(toy.config.with_changes(scale=1e-05), toy.tokens, toy.params)


# ------------------------------------------------------------ tiny values --------
def test_number_format_uses_a_common_power_of_ten_for_tiny_values():
    fmt = figure.number_format("values", (-8.1e-5, 8.1e-5))
    assert fmt.exponent == -5
    assert fmt.cell(8.1e-5) == "8.1"
    assert fmt.cell(-2.74e-5) == "−2.74"
    assert fmt.cell(0.0) == "0"
    assert fmt.cell(1e-12) == "≈0"  # coloured a hair off white, but not zero
    big = figure.number_format("values", (-3.2e7, 3.2e7))
    assert big.exponent == 7 and big.cell(-1.5e7) == "−1.5"
    plain = figure.number_format("values", (-2.5, 2.5))
    assert plain.exponent == 0 and plain.cell(-2.74) == "−2.74" and plain.cell(1e-4) == "≈0"
    assert figure.number_format("weights", (0.0, 1.0)).cell(0.001) == "≈0"


def test_tiny_scores_are_never_labelled_zero(tmp_path, tiny):
    out = export_to(tiny, tmp_path / "s.svg", stage="scores")
    texts = _texts(out)
    scores = tiny.run().scores
    exact_zeros = int((scores == 0).sum())
    # a "0" is an exact zero in a cell, or the colour bar's middle tick
    assert texts.count("0") <= exact_zeros + 1
    joined = " ".join(texts)
    assert "×10" in joined and "−5" in joined  # the common factor is printed
    assert "e-05" not in joined and "1e" not in joined


def test_colour_bar_ticks_of_tiny_values_are_distinct(tiny):
    scene = figure.build_scene(tiny, "scores")
    row = scene.rows[0]
    fmt = figure.number_format(row.kind, row.levels)
    ticks = [fmt.tick(v) for v in figure._tick_values(row.kind, row.levels)]
    assert len(set(ticks)) == 5 and all(len(t) <= 6 for t in ticks)


# ---------------------------------------------------------------- minus ----------
@pytest.mark.parametrize("stage", ["projections", "scores", "output"])
def test_figures_use_the_typographic_minus(tmp_path, stage):
    session = load_preset("gqa")
    texts = _texts(export_to(session, tmp_path / "f.svg", stage=stage))
    assert any("−" in t for t in texts)
    assert not [t for t in texts if re.search(r"-\d", t)]


@pytest.mark.skipif(not which("pdftotext"), reason="needs pdftotext")
def test_pdf_and_handout_use_the_typographic_minus(tmp_path):
    session = load_preset("gqa")
    for out in (
        export_to(session, tmp_path / "f.pdf", stage="projections"),
        export_to(session, tmp_path / "h.pdf", handout=True),
    ):
        text = subprocess.run(
            ["pdftotext", str(out), "-"], capture_output=True, text=True, check=True
        ).stdout
        assert "−" in text and not re.search(r"(?<![\w])-\d", text)


def test_latex_keeps_the_ascii_minus(tmp_path):
    text = export_to(load_preset("gqa"), tmp_path / "p.tex", stage="projections").read_text()
    assert "−" not in text and re.search(r"-\d", text)


# ----------------------------------------------------------- colour bars ---------
@pytest.mark.parametrize(
    "session, stage, head",
    [
        (lambda: load_preset("gqa"), "projections", 1),
        (lambda: load_preset("toy"), "projections", None),
        (lambda: random_session(tokens=1, heads=2, d_model=4), "output", None),
        (lambda: load_preset("causal-6x16"), "output", None),
    ],
)
def test_colour_bars_share_one_column(session, stage, head):
    lay = figure.figure_layout(session(), stage, head=head)
    xs = {round(b.x, 3) for b in lay.bars}
    assert len(lay.bars) >= 2 and len(xs) == 1
    right = max(g.x + g.w for g in lay.panels)
    assert all(b.x > right for b in lay.bars)


# -------------------------------------------------------------- plurals ----------
def test_one_token_one_head_are_singular():
    info = figure.build_scene(random_session(tokens=1, heads=1, d_model=4), "input").info
    assert "n=1 token ·" in info and "h=1 head ·" in info
    info = figure.build_scene(load_preset("toy"), "input").info
    assert "n=4 tokens" in info and "h=2 heads" in info


# -------------------------------------------------------------- handout ----------
def test_handout_has_one_header_per_page(tmp_path, rich_texts):
    drawn = rich_texts
    session = load_preset("toy")
    export_to(session, tmp_path / "h.pdf", handout=True)
    from mha_gui.engine.panels.stages import STAGES, formula_for

    for s in STAGES:
        titles = [t for t in drawn if s.title in t]
        assert len(titles) == 1, (s.title, titles)
        formula = figure.pretty(formula_for(s, session.config))
        assert sum(formula in t for t in drawn) == 1, formula


# ------------------------------------------------------- colormap / theme --------
def _grey_share(img: Image.Image) -> float:
    px = np.asarray(img.convert("RGB")).astype(int)
    spread = px.max(axis=2) - px.min(axis=2)
    return float((spread < 6).mean())


def test_gif_takes_the_colormap(tmp_path):
    session = load_preset("toy")
    a = Image.open(export_to(session, tmp_path / "a.gif", width=400))
    b = Image.open(export_to(session, tmp_path / "b.gif", width=400, colormap="grey"))
    a.seek(2)
    b.seek(2)
    assert _grey_share(b) > _grey_share(a) + 0.05


def test_handout_takes_the_colormap(tmp_path, monkeypatch):
    seen = []
    real = figure.paint_scene

    def spy(painter, layout, theme_name="light", colormap="diverging", **kw):
        seen.append(colormap)
        return real(painter, layout, theme_name, colormap, **kw)

    monkeypatch.setattr(figure, "paint_scene", spy)
    export_to(load_preset("toy"), tmp_path / "h.pdf", handout=True, colormap="prgn")
    assert seen == ["prgn"] * 7


def test_dark_handout_is_refused_with_a_reason(tmp_path):
    with pytest.raises(ValueError, match="handout.*light") as info:
        export_to(load_preset("toy"), tmp_path / "h.pdf", handout=True, theme="dark")
    assert "\n" not in str(info.value)
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------ nothing clipped -----
def _session(name: str) -> Session:
    if name == "tiny":
        toy = load_preset("toy")
        return Session(toy.config.with_changes(scale=1e-05), toy.tokens, toy.params)
    if name == "n=1":
        return random_session(tokens=1, heads=1, d_model=4)
    return load_preset(name)


@pytest.mark.parametrize("name", ["toy", "tiny", "gqa", "causal-6x16", "n=1"])
def test_every_element_fits_inside_the_figure(name):
    session = _session(name)
    from mha_gui.engine import STAGE_NAMES

    for stage in STAGE_NAMES:
        lay = figure.figure_layout(session, stage)
        sc, right = lay.scene, lay.width - figure.MARGIN + 1
        title = (
            figure.rich_width(sc.title, figure.TITLE_PX, True)
            + 28
            + figure.rich_width(sc.formula, figure.TITLE_PX)
        )
        assert figure.MARGIN + title <= right, (stage, "title")
        assert figure.MARGIN + figure.rich_width(sc.info, figure.INFO_PX) <= right
        for g in lay.panels:
            fx, _fy, fw, _fh = g.frame
            assert fx >= 0 and fx + fw <= lay.width, (stage, g.panel.title)
            assert g.x + g.w <= right
        for b in lay.bars:
            assert b.x + figure._bar_extent(b.row) <= right, (stage, "bar")
        for cx, _cy, text in lay.captions:
            assert cx + figure.rich_width(text, figure.CAPTION_PX) <= right, (stage, text)


@pytest.mark.parametrize("stage", ["scores", "weights", "mixing", "output"])
@pytest.mark.parametrize("shape", [(40, 64, 12), (24, 96, 12), (20, 64, 4)])
def test_up_to_40_tokens_every_token_is_named_in_a_figure(stage, shape):
    """Twelve 40 × 40 maps at the default 1600 units wide named every other token in
    cells of 8.5 units; with fewer maps per line every row (and every key, up to 40
    columns) is named, labels at least 9 units, a line apart."""
    from mha_gui.export.layout import layout_scene

    session = random_session(1, *shape)
    lay = layout_scene(figure.build_scene(session, stage))
    for g in lay.panels:
        rows, cols = g.panel.matrix.shape
        assert rows == shape[0] and g.row_step == 1 and g.label_px >= 9, (stage, g.cell)
        assert g.cell >= g.label_px * 1.15 - 1e-9  # a line apart
        if cols <= 40:
            assert g.col_step == 1, (stage, cols, g.cell)


def test_a_figure_too_wide_to_name_its_tokens_keeps_its_panels_per_line():
    """Twenty 768-wide rows cannot be named at any number of panels per line: the
    figure keeps its lines of panels rather than growing three times taller for
    nothing."""
    from mha_gui.export.layout import layout_scene

    lay = layout_scene(figure.build_scene(random_session(1, 20, 768, 12), "output"))
    contributions = [g for g in lay.panels if g.panel.matrix.shape == (20, 768)][1:]
    assert len({round(g.y) for g in contributions}) < len(contributions)  # several a line
