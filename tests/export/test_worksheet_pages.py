"""Worksheet pages are filled: the tables as large as the page allows (never below the
10 pt they are set in), not ~6 pt tables on half-empty pages."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from mha_gui.engine.layer.presets import load_preset
from mha_gui.export.worksheet import write_worksheet

pytestmark = pytest.mark.skipif(
    not (shutil.which("pdftoppm") and shutil.which("pdftotext")), reason="needs poppler-utils"
)
TEN_PT = 11.5  # the height pdftotext gives a word set in 10 pt


def number_heights(pdf, page: int) -> list[float]:
    """The heights (points) of the numbers in a page's tables, as pdftotext boxes them."""
    xml = subprocess.run(
        ["pdftotext", "-bbox", "-f", str(page), "-l", str(page), str(pdf), "-"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    heading = re.search(r'yMin="([\d.]+)"[^>]*>(Given|Fill)<', xml)
    top = float(heading.group(1)) if heading else 0.0  # the tables start below it
    words = re.findall(r'yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">(−?\d+\.\d+)<', xml)
    return [float(b) - float(a) for a, b, _ in words if float(a) > top]


def ink_bottom(pdf, page: int, tmp_path) -> float:
    """How far down the page (0…1) its content reaches, the footer left out."""
    stem = tmp_path / f"p{page}"
    subprocess.run(
        ["pdftoppm", "-r", "40", "-png", "-f", str(page), "-l", str(page), str(pdf), str(stem)],
        check=True,
    )
    (png,) = tmp_path.glob(f"p{page}*.png")
    a = np.asarray(Image.open(png).convert("L"))
    body = a[: int(a.shape[0] * 0.93)]
    rows = np.where((body < 200).any(axis=1))[0]
    png.unlink()
    return rows.max() / a.shape[0]


@pytest.mark.parametrize(
    "preset, stage, pages",
    [
        ("toy", "weights", 1),
        ("toy", "output", 1),
        ("gqa", "mixing", 1),
        ("causal-6x16", "weights", 2),
    ],
)
def test_question_pages_are_filled_at_a_readable_size(preset, stage, pages, tmp_path):
    pdf = write_worksheet(tmp_path / "w.pdf", load_preset(preset), stage, 4, 2)
    for page in range(1, pages + 1):
        assert ink_bottom(pdf, page, tmp_path) > 0.75, (preset, stage, page)
        heights = number_heights(pdf, page)
        assert heights and min(heights) >= TEN_PT - 0.2, (preset, stage, page)
    # the key's page comes next, its working typeset (no "e^" or "_j" left as text)
    key = subprocess.run(
        ["pdftotext", "-f", str(pages + 1), "-l", str(pages + 1), str(pdf), "-"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "Answer key" in key and "_" not in key and "^" not in key


def test_a_small_layer_prints_larger_than_ten_points(tmp_path):
    pdf = write_worksheet(tmp_path / "w.pdf", load_preset("toy"), "weights", 4, 2)
    assert min(number_heights(pdf, 1)) > TEN_PT * 1.3


def test_boxes_are_numbered_as_the_key_lists_them():
    from mha_gui.export.worksheet_plan import plan_worksheets

    for preset, stage in (("toy", "weights"), ("gqa", "projections"), ("causal-6x16", "output")):
        for sheet in plan_worksheets(load_preset(preset), stage, 5, 3, students=3):
            numbered = {}
            for t in sheet.fill:
                for (r, c), k in t.boxes.items():
                    numbered[k] = (t.title, r, c)
            assert sorted(numbered) == list(range(1, len(sheet.key) + 1))
            for k, (title, r, c) in numbered.items():
                cell = sheet.exercise.cells[k - 1]
                assert (cell.symbol, cell.row, cell.col) == (title, r, c)
                assert sheet.key[k - 1][0].startswith(f"{k}.  {cell.name} = ")


def question_pages(pdf) -> int:
    """The pages before the answer key."""
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
    return text.split("Answer key")[0].count("\f")  # a page ends in a form feed


@pytest.mark.parametrize(
    "layer, stage",
    [("causal-6x16", "output"), ("causal-6x16", "concat"), ("16 tokens", "weights")],
)
def test_wide_tables_print_in_blocks_never_below_nine_points(layer, stage, tmp_path):
    from mha_gui.engine.layer.presets import random_session

    session = random_session(0, 16, 16, 4) if layer == "16 tokens" else load_preset(layer)
    pdf = write_worksheet(tmp_path / "w.pdf", session, stage, 4, 2)
    pages = question_pages(pdf)
    for page in range(1, pages + 1):
        heights = number_heights(pdf, page)
        if heights:
            assert min(heights) >= TEN_PT * 0.9 - 0.2, (layer, stage, page, min(heights))
