"""File ▸ Open model… ▸ Download, against a local stand-in for the hub: Check shows the
files and the size first (nothing fetched), Download fetches with a progress bar and
chooses the new model, Cancel keeps nothing, and every refusal is one sentence."""

from __future__ import annotations

import json
import socket
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from mha_gui.engine.models import discover_models
from mha_gui.views.dialogs import download_box, model_preview
from mha_gui.views.dialogs.open_model_dialog import OpenModelDialog
from tests.engine.models.fake_hub import COMMIT
from tests.engine.models.test_download import hub  # noqa: F401  (a fixture)

REPO = "org/tiny-gpt2"


@pytest.fixture
def dialog_hub(request, tmp_path, monkeypatch):
    """The download tests' fake hub (a tiny GPT-2, with pickled weights nobody may fetch)
    plus a T5; only its cache is read, never the real home's."""
    fake = request.getfixturevalue("hub")
    for key in ("XDG_CACHE_HOME", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    t5 = tmp_path / "t5-src"
    t5.mkdir()
    (t5 / "config.json").write_text(json.dumps({"model_type": "t5"}))
    (t5 / "tokenizer.json").write_text("{}")
    (t5 / "model.safetensors").write_bytes(b"")
    fake.add_folder("google/t5-small", t5)
    fake.snapshot = fake.cache / "models--org--tiny-gpt2" / "snapshots" / COMMIT
    return fake


def _dialog(window, qtbot) -> OpenModelDialog:
    window.findChild(QAction, "action.openModel").trigger()
    dialog = window.findChild(OpenModelDialog, "openModelDialog")
    qtbot.waitUntil(dialog.isVisible)
    assert not dialog.download_box.isVisible()
    qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    assert dialog.download_box.isVisible() and dialog.download_button.isChecked()
    return dialog


def _check(dialog, qtbot, repo: str) -> None:
    dialog.download_box.repo_id.clear()
    qtbot.keyClicks(dialog.download_box.repo_id, repo)
    qtbot.mouseClick(dialog.download_box.check_button, Qt.MouseButton.LeftButton)
    assert not dialog.download_box.check_button.isEnabled()  # asking, off the UI thread
    qtbot.waitUntil(lambda: dialog.download_box.check_job is None, timeout=20000)


def _fetched(fake) -> list[str]:
    return [r for r in fake.requests if r.startswith("GET") and "/resolve/" in r]


def test_check_shows_the_size_first_then_download_fetches_and_chooses_it(window, qtbot, dialog_hub):
    dialog = _dialog(window, qtbot)
    assert dialog.download_box.repo_id.placeholderText().startswith(
        "gpt2, bert-base-uncased, Qwen/"
    )
    assert not dialog.download_box.fetch_button.isEnabled()  # nothing to download before Check
    _check(dialog, qtbot, REPO)
    sizes = dict(dialog.download_box.plan.files)
    assert list(sizes) == ["config.json", "tokenizer.json", "model.safetensors"]
    text = dialog.download_box.plan_label.text()
    total = download_box.size_text(dialog.download_box.plan.total_bytes)
    assert f"{REPO}</b> (gpt2): 3 files, <b>{total}</b>" in text
    assert "model.safetensors " in text and "Press Download" in text
    # Check read only the small config.json (to know the family): no weights yet
    assert [r.rsplit("/", 1)[1] for r in _fetched(dialog_hub)] == ["config.json"]
    assert not any(m.name == REPO for m in discover_models())
    assert dialog.download_box.fetch_button.isEnabled()

    progress = []
    dialog.download_box.download_progress.valueChanged.connect(progress.append)
    qtbot.mouseClick(dialog.download_box.fetch_button, Qt.MouseButton.LeftButton)
    assert (
        dialog.download_box.download_progress.isVisible()
        and dialog.download_box.stop_button.isVisible()
    )
    assert not dialog.open_button.isEnabled()  # one thing at a time
    qtbot.waitUntil(lambda: dialog.download_box.fetch_job is None, timeout=20000)
    assert progress and progress[-1] == dialog.download_box.download_progress.maximum()
    assert not dialog.download_box.download_progress.isVisible()
    assert not any("pytorch_model.bin" in r for r in _fetched(dialog_hub))
    assert sorted(p.name for p in dialog_hub.snapshot.iterdir()) == sorted(sizes)
    chosen = dialog.model_list.selectedItems()
    assert [i.text().split()[0] for i in chosen] == [REPO]
    assert dialog.info.path == dialog_hub.snapshot and "3 layers × 4 heads" in dialog.summary.text()
    assert "Downloaded org/tiny-gpt2" in dialog.download_box.plan_label.text()
    assert dialog.open_button.isEnabled()


def test_cancel_keeps_nothing_that_looks_like_a_model(window, qtbot, dialog_hub, monkeypatch):
    real = download_box.download

    def held(plan, progress, cancelled):
        def waiting(done, total):  # the first report waits for the user's Cancel
            progress(done, total)
            deadline = time.monotonic() + 20
            while not cancelled() and time.monotonic() < deadline:
                time.sleep(0.01)

        return real(plan, progress=waiting, cancelled=cancelled)

    monkeypatch.setattr(download_box, "download", held)
    dialog = _dialog(window, qtbot)
    _check(dialog, qtbot, REPO)
    qtbot.mouseClick(dialog.download_box.fetch_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.download_box.download_progress.value() > 0, timeout=20000)
    qtbot.mouseClick(dialog.download_box.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.download_box.fetch_job is None, timeout=20000)
    assert "cancelled; nothing was kept" in dialog.download_box.plan_label.text()
    assert not dialog_hub.snapshot.exists()
    assert not any(m.name == REPO for m in discover_models())
    assert (
        dialog.isVisible() and not dialog.download_box.fetch_button.isEnabled()
    )  # Check again first
    assert not any("model.safetensors" in r for r in _fetched(dialog_hub))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("repo", "said"),
    [
        ("org/no-such-model", "the hub has no public model 'org/no-such-model'"),
        ("google/t5-small", "'google/t5-small' is t5 model; mha-gui reads"),
        ("../etc", "'../etc' is not a Hugging Face model id"),
        ("offline", "cannot reach the Hugging Face hub at"),
    ],
)
def test_refusals_are_one_sentence_in_the_dialog(
    window, qtbot, dialog_hub, monkeypatch, repo, said
):
    if repo == "offline":
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
        repo = REPO
    dialog = _dialog(window, qtbot)
    _check(dialog, qtbot, repo)
    text = dialog.download_box.plan_label.text()
    assert said in text and model_preview.ERROR_STYLE in text
    assert "\n" not in text and "Traceback" not in text
    assert dialog.download_box.plan is None and not dialog.download_box.fetch_button.isEnabled()
    assert dialog.download_box.check_button.isEnabled()


def test_editing_the_id_takes_the_checked_plan_back(window, qtbot, dialog_hub):
    dialog = _dialog(window, qtbot)
    qtbot.mouseClick(dialog.download_box.check_button, Qt.MouseButton.LeftButton)  # no id yet
    assert "Type a Hugging Face model id" in dialog.download_box.plan_label.text()
    _check(dialog, qtbot, REPO)
    assert dialog.download_box.fetch_button.isEnabled()
    qtbot.keyClicks(dialog.download_box.repo_id, "x")
    assert dialog.download_box.plan is None and not dialog.download_box.fetch_button.isEnabled()
    assert "Press Check" in dialog.download_box.plan_label.text()
    assert not dialog.download_box.start_download()
