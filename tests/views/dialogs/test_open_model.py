"""File ▸ Open model…: the dialog, the worker, and the layer as an ordinary session."""

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox

from mha_gui.engine.layer.session import load_session
from mha_gui.engine.models import open_layer
from mha_gui.engine.models.builtin import builtin_model_path
from mha_gui.engine.models.origin import ModelOrigin
from mha_gui.engine.teaching.classroom import ready_sentences
from mha_gui.views.dialogs.open_model_dialog import OpenModelDialog, parse_ids
from tests.engine.models.builders import build_model
from tests.views.models_fixtures import SENTENCE


def _dialog(window, qtbot) -> OpenModelDialog:
    window.findChild(QAction, "action.openModel").trigger()
    dialog = window.findChild(OpenModelDialog, "openModelDialog")
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def _open(dialog, qtbot, window, layer: int, text: str = SENTENCE) -> None:
    dialog.layer.setValue(layer)
    dialog.sentence.setText(text)
    assert dialog.update_preview()
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None and not dialog.isVisible(), timeout=10000)


def test_the_cache_list_the_layer_and_the_opened_session(
    window, qtbot, model_hub, dialogs, tmp_path
):
    assert window.findChild(QAction, "action.openModel").shortcut().toString() == "Ctrl+Shift+O"
    dialog = _dialog(window, qtbot)
    items = [dialog.model_list.item(i) for i in range(dialog.model_list.count())]
    assert [i.text().split()[0] for i in items] == [
        "Built-in:",
        "google/t5-small",
        "openai-community/gpt2",
    ]
    _builtin, t5, gpt2 = items
    assert "t5: not supported" in t5.text() and not (t5.flags() & Qt.ItemFlag.ItemIsEnabled)
    gpt2.setSelected(True)
    assert "3 layers × 4 heads" in dialog.summary.text()
    assert dialog.layer.maximum() == 2 and not dialog.token_ids.isVisible()
    assert not dialog.examples.isVisible()  # ready sentences are the built-in model's
    expected = open_layer(model_hub, 1, text=SENTENCE)
    dialog.sentence.setText(SENTENCE)  # the preview follows after a pause in typing
    qtbot.waitUntil(lambda: f"{len(expected.tokens)} tokens" in dialog.preview.text())
    assert f"&nbsp;{expected.tokens[1]}&nbsp;" in dialog.preview.text()  # ␣ for a space

    _open(dialog, qtbot, window, 1)
    doc = window.document
    assert doc.session.source == "gpt2 · layer 1 of 3"
    assert doc.tokens == expected.tokens and doc.config == expected.config
    for name, array in expected.params.as_dict().items():
        np.testing.assert_array_equal(doc.matrix(name), array)
    assert "gpt2 · layer 1 of 3" in window.windowTitle()
    assert "gpt2 · layer 1 of 3" in window.summary_label.text()
    assert doc.model_origin.path == model_hub and doc.model_origin.text == SENTENCE
    assert not doc.is_modified and doc.undo_stack.count() == 0
    assert "Opened gpt2 · layer 1 of 3" in window.statusBar().currentMessage()

    # an ordinary session: edit, undo, redo, save
    doc.set_value("W_Q", (0, 0, 0), 1.5)
    assert doc.is_modified and doc.matrix("W_Q")[0, 0, 0] == 1.5
    doc.undo_stack.undo()
    assert doc.matrix("W_Q")[0, 0, 0] == expected.params.W_Q[0, 0, 0]
    doc.undo_stack.redo()
    dialogs.save_path = str(tmp_path / "layer1.json")
    assert window.files.save()
    saved = load_session(tmp_path / "layer1.json")
    assert saved.source == "gpt2 · layer 1 of 3" and saved.params.W_Q[0, 0, 0] == 1.5


def test_unsaved_edits_are_asked_about_first(window, qtbot, model_hub, dialogs):
    window.document.set_value("X", (0, 0), 7.0)
    dialogs.answer = QMessageBox.StandardButton.Cancel
    dialog = _dialog(window, qtbot)
    assert dialog.set_folder(model_hub)
    dialog.sentence.setText(SENTENCE)
    assert not dialog.start()
    assert dialogs.kinds() == ["warning"] and window.document.matrix("X")[0, 0] == 7.0
    dialogs.answer = QMessageBox.StandardButton.Discard
    _open(dialog, qtbot, window, 2)
    assert window.document.session.source == "gpt2 · layer 2 of 3"


def test_a_folder_the_text_and_the_errors(window, qtbot, model_hub, dialogs, tmp_path, monkeypatch):
    dialog = _dialog(window, qtbot)
    monkeypatch.setattr(
        QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(tmp_path))
    )
    qtbot.mouseClick(dialog.folder_button, Qt.MouseButton.LeftButton)
    assert "no config.json" in dialog.summary.text() and not dialog.open_button.isEnabled()
    assert dialog.set_folder(model_hub)
    dialog.sentence.setText("the cat " * 30)  # the tiny GPT-2 takes 40 positions
    assert not dialog.update_preview()
    assert "takes at most 40" in dialog.preview.text() and not dialog.open_button.isEnabled()
    dialog.sentence.setText("   ")
    assert not dialog.update_preview() and "empty" in dialog.preview.text()

    # an engine error while reading the weights: a message box, nothing changes
    before = window.document.snapshot()
    (model_hub / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    dialog.sentence.setText(SENTENCE)
    assert dialog.update_preview()
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=10000)
    assert dialogs.kinds()[-1] == "critical" and "Cannot open the model" in dialogs.calls[-1][1]
    assert dialog.isVisible() and dialog.open_button.isEnabled()
    assert window.document.session.source == before.source == ""
    np.testing.assert_array_equal(window.document.matrix("X"), before.params.X)
    dialog.reject()


def test_token_ids_without_a_tokenizer(window, qtbot, model_hub, tmp_path, dialogs):
    folder = tmp_path / "mistral"
    build_model(folder, "mistral", tokenizer=False)
    dialog = _dialog(window, qtbot)
    assert dialog.set_folder(folder)
    assert dialog.token_ids.isVisibleTo(dialog) and not dialog.sentence.isEnabled()
    dialog.token_ids.setText("5, 17 3")
    assert dialog.update_preview() and "3 tokens" in dialog.preview.text()
    dialog.token_ids.setText("5, x")
    assert not dialog.update_preview() and "'x' is not a token id" in dialog.preview.text()
    dialog.token_ids.setText("5, 17, 3, 3")
    qtbot.waitUntil(dialog.open_button.isEnabled)  # after a pause in typing
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=10000)
    assert not dialog.isVisible(), dialogs.calls
    assert window.document.session.source.startswith("mistral"), window.document.session.source
    assert window.document.tokens == ["#5", "#17", "#3", "#3"]
    assert window.document.config.rope  # Mistral rotates Q and K


def test_progress_and_cancel_at_the_next_block(window, qtbot, model_hub, monkeypatch):
    blocks = []

    def slow_open(origin, progress=None):  # a big model: many blocks
        for i in range(1, 2001):
            time.sleep(0.005)
            progress(i, 2000)
            blocks.append(i)
        raise AssertionError("not cancelled")

    monkeypatch.setattr(ModelOrigin, "open", slow_open)
    dialog = _dialog(window, qtbot)
    assert dialog.set_folder(model_hub)
    assert dialog.start()
    assert not dialog.open_button.isEnabled() and not dialog.sentence.isEnabled()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 2, timeout=10000)
    assert dialog.progress.isVisible() and dialog.progress.maximum() == 2000
    dialog.cancel()  # the job stops when the next block reports
    qtbot.waitUntil(lambda: dialog.job is None, timeout=10000)
    assert len(blocks) < 2000
    assert window.document.session.source == "" and dialog.isVisible()
    assert not dialog.progress.isVisible()
    dialog.cancel()  # no job: Cancel closes the dialog
    assert not dialog.isVisible()


@pytest.mark.parametrize(("text", "ids"), [("1,2, 3", [1, 2, 3]), ("7", [7]), ("  4 5 ", [4, 5])])
def test_parse_ids(text, ids):
    assert parse_ids(text) == ids


def test_the_built_in_model_comes_first_with_its_card_and_ready_sentences(
    window, qtbot, model_hub, dialogs
):
    dialog = _dialog(window, qtbot)
    first = dialog.model_list.item(0)
    title, line = first.text().split("\n")
    assert title == "Built-in: classroom — a tiny GPT-2 whose heads show the textbook's roles"
    assert line.startswith("The model that ships with mha-gui (--model builtin): a GPT-2")
    # chosen when the dialog opens, with a sentence the model has words for: Open works
    assert first.isSelected() and dialog.info.path == builtin_model_path()
    assert "classroom (GPT-2): 3 layers × 4 heads" in dialog.summary.text()
    assert dialog.examples.isVisible()
    assert dialog.sentence.text() == "the cat near the dogs runs ."
    examples = [dialog.examples.itemText(i) for i in range(dialog.examples.count())]
    for role in ("agreement", "antecedent", "induction", "previous"):
        ready = ready_sentences()[role]
        assert [e for e in examples if e.startswith(f"{role}: ")] == [
            f"{role}: {s.text}" for s in ready
        ]
    index = examples.index("antecedent: mary met tom at the park . she is mary .")
    dialog.examples.setCurrentIndex(index)
    dialog.examples.activated.emit(index)  # what a pick in the combo sends
    assert dialog.sentence.text() == "mary met tom at the park . she is mary ."
    assert "12 tokens" in dialog.preview.text()

    # a word outside the classroom language is said; the user's own text is kept
    qtbot.keyClicks(dialog.sentence, " zebra")
    assert dialog.edited and dialog.examples.currentIndex() == 0
    assert dialog.update_preview() and "not have" in dialog.preview.text()
    dialog.model_list.item(2).setSelected(True)  # gpt2: the sentence stays the user's
    assert not dialog.examples.isVisible() and dialog.sentence.text().endswith("zebra")

    dialog.model_list.item(0).setSelected(True)
    dialog.examples.setCurrentIndex(index)
    dialog.examples.activated.emit(index)
    _open(dialog, qtbot, window, 2, text=dialog.sentence.text())
    assert window.document.session.source == "classroom · layer 2 of 3"
    assert window.document.model_origin.path == builtin_model_path()
    assert window.document.tokens[:3] == ["<bos>", "mary", "met"]


def test_the_open_button_answers_after_the_window_opened_other_presets(window, qtbot, dialogs):
    """Open model and close it, every theme, a zoom, F6 across panes, open toy then mqa
    (Python collecting garbage after each step), open the dialog again and press Return
    in the sentence: the layer opens (PySide had invalidated a kept wrapper of the Open
    button on this path — the soak's toy seed 0 — and the Return raised "already
    deleted" in the slot)."""
    import gc

    from PySide6.QtWidgets import QApplication

    themes = [a for a in window.findChildren(QAction) if a.objectName().startswith("action.theme")]
    steps = ["close", "action.theme.dark", "action.zoomIn", *themes, "action.theme.system"]
    steps += ["action.nextPane", "action.previousPane", "action.new.toy", "action.new.mqa"]
    dialog = _dialog(window, qtbot)
    for step in steps:
        if step == "close":
            dialog.close()
        else:
            action = step if isinstance(step, QAction) else window.findChild(QAction, step)
            action.trigger()
        QApplication.processEvents()
        gc.collect()
    assert window.document.config.h_kv == 1  # one K/V head: mqa is open
    dialog = _dialog(window, qtbot)
    dialog.sentence.setText("")
    qtbot.keyClicks(dialog.sentence, "the cat sat")
    qtbot.keyClick(dialog.sentence, Qt.Key.Key_Return)  # Open: the layer is read
    qtbot.waitUntil(lambda: dialog.job is None and not dialog.isVisible(), timeout=20000)
    assert "cat" in window.document.tokens
