"""`export --view/--key/--range/--against`: the views' figures and their refusals."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PIL import Image

from tests.cli.cli_helpers import run


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
    from mha_gui.export.figures import registry

    class Blank:
        width, height, title, description = 100.0, 50.0, "blank", ""

        def paint(self, painter, theme_name, colormap):
            pass

    monkeypatch.setitem(
        registry.FIGURES, "blank", registry.FigureSpec("blank", lambda d, o: Blank())
    )
    out = tmp_path / f"out{suffix}"
    code, _, err = run(capsys, "export", "--preset", "toy", "--view", "blank", "--out", str(out))
    assert code == 2 and "--view blank writes a figure" in err and not out.exists()
    ok = tmp_path / "blank.svg"
    code, _, err = run(capsys, "export", "--preset", "toy", "--view", "blank", "--out", str(ok))
    assert code == 0 and ok.read_text().startswith("<?xml"), err


def svg_title_and_text(path) -> tuple[str, str]:
    """The SVG's <title> and <desc>: a figure's title and its printed sentences."""
    import re

    svg = path.read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", svg, re.S)
    desc = re.search(r"<desc>(.*?)</desc>", svg, re.S)
    return (title.group(1) if title else ""), (desc.group(1) if desc else "")


@pytest.mark.parametrize("name", ["packed", "split", "permute", "scale", "shift"])
def test_every_identity_window_has_its_figure_on_the_command_line(capsys, tmp_path, name):
    """`--view identity-NAME` draws what Tools ▸ Identities ▸ NAME shows when it opens."""
    from mha_gui.engine.layer.presets import load_preset
    from mha_gui.export.figures.identities import identity_figure, identity_on

    out = tmp_path / f"{name}.svg"
    code, _, err = run(
        capsys, "export", "--preset", "gqa", "--view", f"identity-{name}", "--out", str(out)
    )
    assert code == 0, err
    session = load_preset("gqa")
    expected = identity_figure(identity_on(name, session), session.tokens)
    title, text = svg_title_and_text(out)
    assert title == expected.title and text.startswith(expected.description.split("\n")[0])
    assert "max|left − right|" in text  # the verdict, printed on the figure
    png = tmp_path / f"{name}.png"
    code, _, err = run(
        capsys, "export", "--preset", "gqa", "--view", f"identity-{name}", "--out", str(png)
    )
    assert code == 0 and Image.open(png).size[0] > 400, err


def test_the_shift_identity_follows_head_and_query(capsys, tmp_path):
    out = tmp_path / "shift.svg"
    code, _, err = run(
        capsys, "export", "--preset", "gqa", "--view", "identity-shift",
        "--head", "3", "--query", "2", "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    _title, text = svg_title_and_text(out)
    assert "s = row 2" in text and "of S_3" in text


def test_unknown_view_names_the_identity_figures_too(capsys, tmp_path):
    refused(capsys, tmp_path, "--view", "identity", match="identity-packed, identity-permute")


@pytest.mark.parametrize("name", ["packed", "split", "permute", "scale", "shift"])
def test_every_identity_figure_of_a_one_token_layer(capsys, tmp_path, name):
    """n = 1: a 1 × d_k row of Q is not a row of keys (before: a traceback, IndexError)."""
    out = tmp_path / f"{name}.png"
    code, _, err = run(
        capsys, "export", "--preset", "random", "--tokens", "1", "--view", f"identity-{name}",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0 and Image.open(out).size[0] > 400, err


# Every name `--view` accepts, with what it needs besides the session.
VIEW_ARGS = {
    "contributions": ["--ablate", "1"],
    "diff": [],  # --against, added below
    "kv-cache": [],
    "lines": ["--head", "1"],
    "neuron": ["--key", "0"],
    **{f"identity-{n}": [] for n in ("packed", "split", "permute", "scale", "shift")},
}


def test_export_view_loads_no_view_module(tmp_path):
    """`mha-gui export --view NAME` draws from export/ alone: after every figure is
    written (one process, the real entry point), no module of mha_gui.views is loaded —
    before, export/files.py imported the dock registry and with it every dock."""
    import subprocess
    import sys

    from mha_gui.export.figures.registry import FIGURES
    from tests.engine.models.builders import SENTENCE, build_model

    assert set(VIEW_ARGS) | {"model"} == set(FIGURES)
    build_model(tmp_path / "gpt2", "gpt2")
    model = ["--model", str(tmp_path / "gpt2"), "--text", SENTENCE, "--view", "model"]
    other = tmp_path / "other.json"
    jobs = [
        ["--preset", "toy", "--out", str(other)],
        [*model, "--out", str(tmp_path / "model.svg")],
    ]
    for name, extra in VIEW_ARGS.items():
        if name == "diff":
            extra = ["--against", str(other)]
        jobs.append(
            ["--preset", "toy", "--view", name, *extra, "--out", str(tmp_path / f"{name}.svg")]
        )
    code = (
        "import sys\n"
        "from mha_gui.cli import main\n"
        f"for args in {jobs!r}:\n"
        "    assert main(['export', *args]) == 0, args\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mha_gui.views'))\n"
        "print('VIEWS', loaded)\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "VIEWS []" in done.stdout, done.stdout
    for name in FIGURES:
        assert (tmp_path / f"{name}.svg").read_text().startswith("<?xml"), name
