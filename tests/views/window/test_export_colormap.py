"""The window's walkthrough GIF and handout use the window's colour map (View ▸ Colormap)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PIL import Image, ImageSequence

from mha_gui.export import export_to
from mha_gui.views.window import export_actions

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def frames(path) -> list[np.ndarray]:
    with Image.open(path) as gif:
        return [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]


def test_gif_from_the_menu_follows_the_window_colormap(window, dialogs, tmp_path):
    doc = window.document
    doc.set_query(2)
    gifs = {}
    for name in ("diverging", "grey"):
        window.set_colormap(name, save=False)
        dialogs.save_path = str(tmp_path / f"{name}.gif")
        window.export_actions.actions["exportGif"].trigger()
        assert dialogs.kinds()[-1] == "save"  # no error box
        gifs[name] = frames(tmp_path / f"{name}.gif")
    assert len(gifs["grey"]) == len(gifs["diverging"]) == 7
    assert any(
        a.shape != b.shape or not np.array_equal(a, b)
        for a, b in zip(gifs["grey"], gifs["diverging"], strict=True)
    )
    # a greyscale walkthrough has (almost) no colour left in its heatmaps; the default has.
    # The heatmaps are where the two frames differ (titles and head colours stay alike;
    # they fill more of a 16:9 frame than of the old portrait one, so they are left out)
    score_frame = {k: v[2].astype(int) for k, v in gifs.items()}
    chroma = {
        k: np.abs(f - f.mean(axis=-1, keepdims=True)).max(axis=-1) for k, f in score_frame.items()
    }
    cells = np.abs(score_frame["grey"] - score_frame["diverging"]).max(axis=-1) > 30
    assert cells.sum() > 10_000
    assert (chroma["diverging"][cells] > 60).mean() > 0.25  # pale cells are nearly white
    assert (chroma["grey"][cells] > 60).mean() < 0.01
    # and it is the CLI's GIF with that colour map
    ref = export_to(
        doc.session, tmp_path / "ref.gif", query=2, theme=window.theme_name(), colormap="grey"
    )
    assert all(np.array_equal(a, b) for a, b in zip(frames(ref), gifs["grey"], strict=True))


def test_handout_from_the_menu_gets_the_window_colormap(window, dialogs, tmp_path, monkeypatch):
    seen = {}

    def fake_export_to(session, path, **options):
        seen.update(options)
        return path

    monkeypatch.setattr(export_actions, "export_to", fake_export_to)
    window.set_colormap("prgn", save=False)
    dialogs.save_path = str(tmp_path / "handout.pdf")
    window.export_actions.actions["exportHandout"].trigger()
    assert seen["handout"] is True and seen["colormap"] == "prgn" and seen["theme"] == "light"
    seen.clear()
    dialogs.save_path = str(tmp_path / "walk.gif")
    window.export_actions.actions["exportGif"].trigger()
    assert seen["colormap"] == "prgn"
