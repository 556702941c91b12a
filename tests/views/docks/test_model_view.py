"""The model view: every layer × head of the opened model; a click opens that layer."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QMessageBox

from mha_gui.cli import main
from mha_gui.engine.models import attention_maps, open_layer
from mha_gui.engine.models.origin import ModelOrigin
from mha_gui.export.figures.message import MessageDrawing
from mha_gui.export.figures.model_grid import ModelGridDrawing
from mha_gui.views.docks.model.model_view import ModelView
from tests.engine.models.builders import SENTENCE, build_model


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / "gpt2"
    build_model(folder, "gpt2")
    return folder


def _shown(window, qtbot) -> ModelView:
    view = window.views["model"]
    assert isinstance(view, ModelView) and view.objectName() == "modelView"
    window.show()
    window.docks["model"].show()
    qtbot.waitExposed(window)
    return view


def _open(window, folder, layer=1):
    origin = ModelOrigin.make(folder, layer, text=SENTENCE)
    window.document.open_session(origin.open(), origin=origin)


def _click(qtbot, view, layer, head):
    left, top, w, h = view.drawing.map_rect(view.drawing.maps.layers.index(layer), head)
    scale, dx, dy = view.transform()
    pos = QPointF(dx + (left + w / 2) * scale, dy + (top + h / 2) * scale).toPoint()
    assert view.hit(QPointF(pos)) == ("map", layer, head)
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=pos)


def test_without_a_model_the_view_says_how_to_open_one(window, qtbot):
    view = _shown(window, qtbot)
    qtbot.waitUntil(lambda: view.drawing is not None)
    assert isinstance(view.drawing, MessageDrawing)
    assert "File ▸ Open model…" in view.drawing.description and not view.computing


def test_the_grid_is_every_layer_and_head_and_a_click_opens_a_layer(window, qtbot, gpt2, dialogs):
    view = _shown(window, qtbot)
    view.resize(1400, 1300)
    _open(window, gpt2, layer=1)
    qtbot.waitUntil(lambda: isinstance(view.drawing, ModelGridDrawing), timeout=10000)
    maps = view.maps
    expected = attention_maps(gpt2, text=SENTENCE)
    assert maps.layers == (0, 1, 2) and maps.weights.shape == (3, 4, 14, 14)
    np.testing.assert_array_equal(maps.weights, expected.weights)
    assert view.drawing.layer == 1 and view.drawing.head == 0
    assert "layer 2 · head 3" in view.drawing.tooltip(("map", 2, 3))

    _click(qtbot, view, 2, 3)
    doc = window.document
    assert doc.session.source == "gpt2 · layer 2 of 3" and doc.view.head == 3
    reference = open_layer(gpt2, 2, text=SENTENCE)
    np.testing.assert_allclose(doc.matrix("X"), reference.params.X, rtol=1e-12)
    assert doc.model_origin.layer == 2 and doc.undo_stack.count() == 0
    qtbot.waitUntil(lambda: view.drawing.layer == 2 and view.drawing.head == 3)
    assert view.maps is maps  # the same sentence: nothing computed again
    assert "gpt2 · layer 2 of 3" in window.windowTitle()

    # unsaved edits: the save prompt first; Cancel keeps everything
    doc.set_value("X", (0, 0), 3.0)
    dialogs.answer = QMessageBox.StandardButton.Cancel
    _click(qtbot, view, 0, 1)
    assert dialogs.kinds() == ["warning"] and doc.session.source == "gpt2 · layer 2 of 3"
    assert doc.matrix("X")[0, 0] == 3.0
    doc.undo_stack.setClean()

    # a saved layer of a model (no folder known here): the view says where it came from
    window.document.open_session(doc.snapshot())
    qtbot.waitUntil(lambda: isinstance(view.drawing, MessageDrawing))
    assert "came from gpt2 · layer 2 of 3" in view.drawing.description
    # another session, not from a model: the view says how to open one
    window.document.open_preset("toy")
    qtbot.waitUntil(lambda: "not a layer of a real model" in view.drawing.description)


def test_a_failure_is_said_in_the_view(window, qtbot, tmp_path):
    view = _shown(window, qtbot)
    folder = tmp_path / "gpt2"
    build_model(folder, "gpt2")
    origin = ModelOrigin.make(folder, 0, text=SENTENCE)
    session = origin.open()
    (folder / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    window.document.open_session(session, origin=origin)
    qtbot.waitUntil(lambda: getattr(view.drawing, "error", False), timeout=10000)
    assert view.drawing.title == "Cannot compute the attention maps"


def test_cli_writes_the_grid_and_refuses_without_a_model(capsys, gpt2, tmp_path):
    out = tmp_path / "grid.png"
    code = main(["export", "--model", str(gpt2), "--text", SENTENCE, "--view", "model",
                 "--out", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert out.stat().st_size > 10_000
    svg = tmp_path / "grid.svg"
    assert main(["export", "--model", str(gpt2), "--token-ids", "5,6,7", "--layer", "-1",
                 "--view", "model", "--out", str(svg)]) == 0  # fmt: skip
    assert "<rect" in svg.read_text() or "<path" in svg.read_text()
    capsys.readouterr()
    bad = tmp_path / "bad.png"
    assert main(["export", "--preset", "toy", "--view", "model", "--out", str(bad)]) == 2
    assert "--view model needs --model DIR" in capsys.readouterr().err
    assert not bad.exists()


def test_the_window_of_mha_gui_model_knows_the_model(capsys, gpt2, monkeypatch):
    import mha_gui.app

    opened = {}
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(mha_gui.app, "run_app", lambda **kw: opened.update(kw) or 0)
    assert main(["--model", str(gpt2), "--layer", "-1", "--text", SENTENCE]) == 0
    origin = opened["origin"]
    assert (origin.path, origin.layer, origin.text) == (gpt2, 2, SENTENCE)
