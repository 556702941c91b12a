"""`export --view/--key/--range/--against`: the views' figures and their refusals."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PIL import Image

from tests.cli_helpers import run


def refused(capsys, tmp_path, *argv, match: str):
    out = tmp_path / "out.png"
    code, _, err = run(capsys, "export", "--preset", "toy", *argv, "--out", str(out))
    assert code == 2, err
    assert err.startswith("mha-gui: error:") and err.count("\n") == 1 and match in err, err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_range_changes_the_weights_colours(capsys, tmp_path):
    images = {}
    for mode in ("fixed", "head", "row"):
        out = tmp_path / f"{mode}.png"
        code, _, err = run(
            capsys, "export", "--preset", "bert-base", "--stage", "weights", "--range", mode,
            "--width", "600", "--out", str(out),
        )  # fmt: skip
        assert code == 0, err
        images[mode] = Image.open(out).convert("RGB")

    # BERT-base's random weights are ~1/128: fixed 0–1 is nearly blank, a row range is not
    def spread(img):
        lo, hi = img.convert("L").getextrema()
        return hi - lo

    assert images["fixed"].tobytes() != images["row"].tobytes()
    assert spread(images["row"]) >= spread(images["fixed"])


def test_unknown_view_names_the_choices(capsys, tmp_path):
    refused(capsys, tmp_path, "--view", "nope", match="unknown view 'nope'; choose one of: stage")


def test_key_out_of_range(capsys, tmp_path):
    refused(capsys, tmp_path, "--view", "stage", "--key", "9", match="--key 9 is out of range")


def test_unknown_range(capsys, tmp_path):
    refused(capsys, tmp_path, "--range", "log", match="invalid choice: 'log'")


def test_against_a_missing_file(capsys, tmp_path):
    refused(capsys, tmp_path, "--against", str(tmp_path / "missing.json"), match="missing.json")


@pytest.mark.parametrize("suffix", [".gif", ".tex", ".npz"])
def test_a_view_figure_is_png_svg_or_pdf(capsys, tmp_path, suffix, monkeypatch):
    from mha_gui.views import registry

    class Blank:
        width, height, title, description = 100.0, 50.0, "blank", ""

        def paint(self, painter, theme_name, colormap):
            pass

    spec = registry.ViewSpec("blank", "Blank", "blankView", lambda *a: None, lambda d, o: Blank())
    monkeypatch.setitem(registry._VIEWS, "blank", spec)
    out = tmp_path / f"out{suffix}"
    code, _, err = run(capsys, "export", "--preset", "toy", "--view", "blank", "--out", str(out))
    assert code == 2 and "--view blank writes a figure" in err and not out.exists()
    ok = tmp_path / "blank.svg"
    code, _, err = run(capsys, "export", "--preset", "toy", "--view", "blank", "--out", str(ok))
    assert code == 0 and ok.read_text().startswith("<?xml"), err
