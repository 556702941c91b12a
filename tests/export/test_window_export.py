"""The window's export menu writes the same files as `export_to` (the CLI's function)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("mha_gui.views.window.main_window")

from mha_gui.engine.panels.stages import STAGES
from mha_gui.export import export_to
from mha_gui.views.window import export_actions


@pytest.fixture
def actions(window, monkeypatch):
    monkeypatch.setattr(
        export_actions,
        "ask_figure_options",
        lambda parent, defaults, *a: dict(
            width=None, theme=defaults["theme"], head=defaults["head"], query=defaults["query"]
        ),
    )
    return export_actions.install_export_actions(window, window.document)


def test_menu_is_filled_once(window, actions):
    from PySide6.QtWidgets import QMenu

    again = export_actions.install_export_actions(window, window.document)
    assert again is actions
    menu = window.findChild(QMenu, "menu.export")
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    for name in ("exportFigure", "exportGif", "exportHandout", "exportLatex", "exportNpz"):
        assert names.count(f"action.{name}") == 1
    edit = window.findChild(QMenu, "menu.edit")
    assert "action.copyFigure" in [a.objectName() for a in edit.actions()]


def test_window_figure_equals_export_to(window, actions, dialogs, tmp_path):
    doc = window.document
    doc.set_stage(3)
    doc.set_query(2)
    dialogs.save_path = str(tmp_path / "from-window.png")
    window.findChild(type(actions.actions["exportFigure"]), "action.exportFigure").trigger()
    ref = export_to(
        doc.session,
        tmp_path / "from-cli.png",
        stage=STAGES[3].name,
        query=2,
        theme=window.theme_name(),
    )
    a = np.asarray(Image.open(tmp_path / "from-window.png"))
    b = np.asarray(Image.open(ref))
    assert a.shape == b.shape and np.array_equal(a, b)


def test_window_export_error_is_a_message_and_keeps_file(
    window, actions, dialogs, tmp_path, monkeypatch
):
    out = tmp_path / "out"
    out.mkdir()
    bad = out / "keep.bmp"
    bad.write_text("old")
    dialogs.save_path = str(bad)
    actions.export_latex()
    assert dialogs.kinds() == ["save", "critical"]
    assert bad.read_text() == "old"

    from mha_gui.export import figure

    def broken(path, *a, **k):
        with open(path, "wb") as fh:
            fh.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(figure, "write_png", broken)
    png = out / "fig.png"
    png.write_bytes(b"precious")
    dialogs.save_path = str(png)
    actions.export_figure()
    assert dialogs.kinds()[-1] == "critical"
    assert png.read_bytes() == b"precious"
    assert sorted(p.name for p in out.iterdir()) == ["fig.png", "keep.bmp"]


def test_gif_handout_latex_npz_from_menu(window, actions, dialogs, tmp_path):
    for name, suffix in (("exportGif", ".gif"), ("exportHandout", ".pdf"), ("exportNpz", ".npz")):
        dialogs.save_path = str(tmp_path / f"out{suffix}")
        actions.actions[name].trigger()
        assert (tmp_path / f"out{suffix}").stat().st_size > 0
    assert Image.open(tmp_path / "out.gif").n_frames == 7


def test_copy_figure_and_panel_menu(window, actions):
    from PySide6.QtGui import QGuiApplication

    window.document.set_stage(2)
    actions.copy_figure()
    img = QGuiApplication.clipboard().image()
    assert img.width() >= 1600
    menu = actions.panel_menu("scores", 1)
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    assert "action.exportPanel" in names and "action.copyPanel" in names
    if "action.copyLatex" in names:
        tex = actions.copy_matrix("scores", 1, "latex")
        assert r"\begin{bmatrix}" in tex
        tsv = actions.copy_matrix("scores", 1, "tsv")
        assert tsv.count("\n") == window.document.config.n - 1
    menu.deleteLater()
