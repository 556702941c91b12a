"""Exports are checked by reading the files back, not by their existence."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from mha_gui.engine import STAGE_NAMES, load_preset
from mha_gui.export import export_to
from mha_gui.export.latex import matrix_bmatrix

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def toy():
    return load_preset("toy")


@pytest.fixture(scope="module")
def causal():
    return load_preset("causal-6x16")


def _pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


# ------------------------------------------------------------------ PNG ----------
def test_png_default_width_dpi_and_not_blank(tmp_path, toy):
    out = export_to(toy, tmp_path / "scores.png", stage="scores")
    im = Image.open(out)
    assert im.format == "PNG" and im.width >= 1600
    dpi = im.info.get("dpi")
    assert dpi and round(dpi[0]) >= 150
    px = _pixels(out)
    assert px.std() > 20
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 50


def test_png_width_is_honoured(tmp_path, toy):
    out = export_to(toy, tmp_path / "x.png", stage="weights", width=900)
    assert Image.open(out).width == 900


def test_png_dark_theme_is_dark(tmp_path, toy):
    light = _pixels(export_to(toy, tmp_path / "l.png", stage="mixing"))
    dark = _pixels(export_to(toy, tmp_path / "d.png", stage="mixing", theme="dark"))
    assert dark.mean() < light.mean() - 60


def test_query_and_head_change_the_figure(tmp_path, toy):
    base = _pixels(export_to(toy, tmp_path / "a.png", stage="weights"))
    q = _pixels(export_to(toy, tmp_path / "b.png", stage="weights", query=2))
    assert base.shape == q.shape and not np.array_equal(base, q)
    one = Image.open(export_to(toy, tmp_path / "c.png", stage="weights", head=1))
    assert one.width >= 1600  # one head only still makes a full-width figure


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_stage_renders_png(tmp_path, causal, stage):
    px = _pixels(export_to(causal, tmp_path / f"{stage}.png", stage=stage, width=800))
    assert px.shape[1] == 800 and px.std() > 10


# ------------------------------------------------------------------ SVG ----------
def _svg(path):
    root = ET.parse(path).getroot()
    shapes = [e for e in root.iter() if e.tag in (SVG + "rect", SVG + "path", SVG + "polygon")]
    texts = ["".join(e.itertext()).strip() for e in root.iter(SVG + "text")]
    return root, shapes, texts


@pytest.mark.parametrize(
    "preset, stage, cells",
    [
        ("toy", "scores", 2 * 16),
        ("toy", "projections", 2 * 3 * 8),
        ("causal-6x16", "weights", 4 * 36),
        ("causal-6x16", "concat", 6 * 16),
        ("causal-6x16", "output", 6 * 16 * 5),
    ],
)
def test_svg_cells_are_vector_shapes_and_labels_are_text(tmp_path, preset, stage, cells):
    session = load_preset(preset)
    out = export_to(session, tmp_path / "f.svg", stage=stage)
    root, shapes, texts = _svg(out)
    assert not list(root.iter(SVG + "image")), "heatmaps must not be embedded rasters"
    assert len(shapes) >= cells
    for token in session.tokens:
        assert token in texts
    joined = " ".join(texts)
    assert "Stage" in joined and "×" in joined  # title and shapes are text


def test_svg_masked_cells_are_marked_not_coloured(tmp_path, causal):
    out = export_to(causal, tmp_path / "s.svg", stage="scores")
    _, _, texts = _svg(out)
    blocked = int(causal.run().mask.sum())
    assert texts.count("×") >= 4 * blocked
    assert not any("inf" in t.lower() for t in texts)


def test_big_model_svg_stays_small(tmp_path):
    bert = load_preset("bert-base")
    out = export_to(bert, tmp_path / "b.svg", stage="weights", head=3)
    assert out.stat().st_size < 8_000_000
    _, _, texts = _svg(out)
    assert "t0" in texts  # token labels stay text even when cells are an image


# ------------------------------------------------------------------ PDF ----------
def _pages(path) -> int:
    data = path.read_bytes()
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))


def test_pdf_figure_is_one_vector_page(tmp_path, toy):
    out = export_to(toy, tmp_path / "f.pdf", stage="weights")
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and _pages(out) == 1
    assert b"/Subtype /Image" not in data  # cells are vector paths


def test_handout_has_one_page_per_stage(tmp_path, toy):
    out = export_to(toy, tmp_path / "h.pdf", handout=True)  # a large layer adds pages
    assert out.read_bytes().startswith(b"%PDF")
    assert _pages(out) == 7


# ------------------------------------------------------------------ GIF ----------
def test_gif_has_seven_equal_frames(tmp_path, toy):
    out = export_to(toy, tmp_path / "w.gif", frame_ms=700, width=600)
    im = Image.open(out)
    assert im.n_frames == 7 and im.width == 600
    sizes, frames = set(), []
    for k in range(7):
        im.seek(k)
        sizes.add(im.size)
        frames.append(np.asarray(im.convert("RGB")))
        assert im.info.get("duration") == 700
    assert len(sizes) == 1
    assert not np.array_equal(frames[2], frames[3])
    # slides: 16:9, the title at the top left, the figure centred side to side below
    assert sizes == {(600, 338)}
    for f in frames:
        ink = np.argwhere(np.abs(f.astype(int) - f[0, 0].astype(int)).sum(axis=2) > 30)
        (top, left), (bottom, right) = ink.min(axis=0), ink.max(axis=0)
        assert left <= 40 and top <= 40  # (test_gif_frames: the body centred below)
        assert (right - left) > 0.6 * 600 or (bottom - top) > 0.6 * 338  # it fills the frame


# ---------------------------------------------------------------- LaTeX ----------
def test_latex_document_has_formula_matrices_and_decimals(tmp_path, toy):
    out = export_to(toy, tmp_path / "s.tex", stage="scores", decimals=3)
    text = out.read_text()
    assert text.startswith("%") and r"\documentclass{article}" in text
    assert r"\usepackage{amsmath}" in text and text.rstrip().endswith(r"\end{document}")
    assert r"\frac{Q_i K_i^\top}{\sqrt{d_k}}" in text
    assert text.count(r"\begin{bmatrix}") == 2 == text.count(r"\end{bmatrix}")
    s = toy.run().scores
    assert f"{s[0, 1, 1]:.3f}" in text  # 4.243
    numbers = re.findall(r"-?\d+\.\d+", text.split(r"\begin{bmatrix}", 1)[1])
    assert numbers and all(len(n.split(".")[1]) == 3 for n in numbers)
    assert "% cat" in text and "columns: the, cat, sat, down" in text
    assert text.count("{") == text.count("}")


def test_latex_masked_scores_and_causal_formula(tmp_path, causal):
    text = export_to(causal, tmp_path / "c.tex", stage="scores", head=0).read_text()
    assert r"-\infty" in text and r"\operatorname{mask}" in text
    assert text.count(r"\begin{bmatrix}") == 1


def test_latex_elides_big_matrices():
    m = np.arange(40 * 30, dtype=float).reshape(40, 30)
    tex = matrix_bmatrix(m, 1)
    assert r"\vdots" in tex and r"\cdots" in tex and r"\ddots" in tex
    rows = [ln for ln in tex.splitlines() if "&" in ln]
    assert len(rows) <= 12 and all(ln.count("&") <= 11 for ln in rows)
    assert "1199.0" in tex  # the last element is kept


# ------------------------------------------------------------ bad input ----------
BAD = [
    ({"path": "f.bmp"}, "suffix"),
    ({"path": "noext"}, "suffix"),
    ({"stage": "nope"}, "unknown stage"),
    ({"head": 2}, "head"),
    ({"head": -1}, "head"),
    ({"query": 4}, "query"),
    ({"query": True}, "query"),
    ({"width": 10}, "width"),
    ({"width": 1.5}, "width"),
    ({"decimals": -1}, "decimals"),
    ({"decimals": 99}, "decimals"),
    ({"frame_ms": 0, "path": "f.gif"}, "frame_ms"),
    ({"width": 5000, "path": "f.gif"}, "width"),  # 7 frames at 10000 px need ~8 GB
    ({"theme": "neon"}, "theme"),
    ({"handout": True, "path": "f.png"}, "handout"),
    ({"path": "missing/f.png"}, "does not exist"),
]


@pytest.mark.parametrize("kwargs, words", BAD)
def test_bad_input_is_one_line_and_leaves_nothing(tmp_path, toy, kwargs, words):
    kwargs = dict(kwargs)
    name = kwargs.pop("path", "f.png")
    (tmp_path / "keep.png").write_bytes(b"old")
    with pytest.raises(ValueError) as info:
        export_to(toy, tmp_path / name, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and words.split()[0] in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.png"]


def test_failed_export_keeps_existing_file(tmp_path, toy, monkeypatch):
    target = tmp_path / "fig.svg"
    target.write_text("precious")
    from mha_gui.export import figure

    def boom(path, *a, **k):
        with open(path, "w") as fh:
            fh.write("<svg partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(figure, "write_svg", boom)
    with pytest.raises(RuntimeError):
        export_to(toy, target, stage="scores")
    assert target.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["fig.svg"]


def test_existing_file_is_replaced_by_a_good_export(tmp_path, toy):
    target = tmp_path / "f.png"
    target.write_bytes(b"old")
    export_to(toy, target, stage="input")
    assert Image.open(target).width >= 1600
    assert [p.name for p in tmp_path.iterdir()] == ["f.png"]


def test_npz_and_json_dispatch(tmp_path, toy):
    npz = np.load(export_to(toy, tmp_path / "a.npz"))
    assert npz["weights"].shape == (2, 4, 4)
    assert '"mha-gui-session"' in export_to(toy, tmp_path / "s.json").read_text()


def test_latex_small_custom_scale_is_written_as_a_power_of_ten(toy):
    from mha_gui.export.latex import latex_formula

    cfg = toy.config.with_changes(scale=1e-05)
    assert r"1 \times 10^{-5}\, Q_i K_i^\top" in latex_formula("scores", cfg)
    assert r"0.5\, Q_i" in latex_formula("weights", cfg.with_changes(scale=0.5))


def test_latex_accented_tokens_keep_their_letters(toy):
    from mha_gui.export.latex import stage_document

    toy.tokens = ["naïve", "café", "猫", "a_b"]
    text = stage_document(toy, "input")
    assert r"\texttt{naive, cafe, ?, a\_b}" in text
    assert "% naïve" in text  # comments keep the real label


def test_latex_pulls_out_a_power_of_ten_for_tiny_matrices(tmp_path):
    import re

    from mha_gui.engine import load_preset

    s = load_preset("causal-6x16")  # scores are a few hundredths
    text = export_to(s, tmp_path / "s.tex", stage="scores", decimals=2).read_text()
    block = text.split("S_{0} = ", 1)[1].split(r"\end{bmatrix}", 1)[0]
    assert block.startswith(r"10^{-2} \cdot \begin{bmatrix}")
    cells = [float(c) for c in re.findall(r"-?\d+\.\d{2}\b", block.split("bmatrix}", 1)[1])]
    assert max(abs(c) for c in cells) >= 1.0  # two significant digits, not 0.01
    exact = load_preset("causal-6x16").run().scores[0, 1, 1]
    assert f"{exact * 100:.2f}" in block
