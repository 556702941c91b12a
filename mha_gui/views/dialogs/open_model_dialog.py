"""File ▸ Open model…: pick a model, a layer and a sentence — or download a model first.

The list starts with the built-in classroom model (its card's title and first line; it
is chosen when the dialog opens, so Open works on a fresh install with nothing on disk),
then the models of the local Hugging Face cache (unsupported ones greyed, with the
reason); "Choose a folder…" takes any other folder. For the built-in model a combo offers
ready sentences per role (engine/teaching/classroom.py), each one made for one of its heads.
The dialog shows the model's summary, a layer spin box and a live preview of the
sentence's tokens (a text longer than the model's positions is said at once); a folder
without tokenizer.json takes token ids. Open runs `open_layer` on a worker thread with a
progress bar (Cancel stops it at the next block); the layer then becomes the window's
session — an ordinary, editable, undoable, savable session — after the usual save
prompt. A failure is said in a message box and changes nothing.

"Download from the Hugging Face hub…" shows the download box (download_box.py: Check,
then Download, into the cache); the new model is then chosen in the list. What the
preview says is model_preview.py.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from mha_gui.engine.models import SUPPORTED, cache_folders, describe_model, discover_models
from mha_gui.engine.models import tokenize as model_tokenize
from mha_gui.engine.models.builtin import builtin_model_path
from mha_gui.engine.models.card import read_card
from mha_gui.engine.models.origin import ModelOrigin
from mha_gui.engine.teaching.classroom import ready_sentences
from mha_gui.engine.teaching.model_roles import is_builtin
from mha_gui.views.dialogs.download_box import DownloadBox
from mha_gui.views.dialogs.model_preview import ERROR_STYLE, error_html, parse_ids, tokens_html
from mha_gui.views.docks.model.model_job import ModelJob

PREVIEW_MS = 200  # the token preview waits for a pause in typing
BUILTIN_ROLE = Qt.ItemDataRole.UserRole + 1  # marks the built-in model's list item
EXAMPLE_ORDER = ("agreement", "antecedent", "induction", "previous")


class OpenModelDialog(QDialog):
    """Emits `opened(session, origin)` when a layer has been read (the window opens it)."""

    opened = Signal(object, object)

    def __init__(self, parent=None, start_text: str = "The cat sat on the mat."):
        super().__init__(parent)
        self.setObjectName("openModelDialog")
        self.setWindowTitle("Open a layer of a real model")
        self.info = None  # the chosen folder's ModelInfo
        self.job: ModelJob | None = None
        layout = QVBoxLayout(self)

        layout.addWidget(QLabel("The built-in model, then the local Hugging Face cache:", self))
        self.model_list = QListWidget(self)
        self.model_list.setObjectName("modelList")
        self.model_list.setAccessibleName("Models")
        self.model_list.setWordWrap(True)
        self.model_list.setMinimumHeight(110)
        self.model_list.setMaximumHeight(200)
        # selection, not the current item: focus alone makes an item current
        self.model_list.itemSelectionChanged.connect(self._on_item)
        layout.addWidget(self.model_list)
        folder_row = QHBoxLayout()
        self.folder_button = QPushButton("Choose a &folder…", self)
        self.folder_button.setObjectName("chooseFolder")
        self.folder_button.clicked.connect(self.choose_folder)
        self.path_label = QLabel("no model chosen", self)
        self.path_label.setObjectName("modelPath")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.download_button = QPushButton("&Download from the Hugging Face hub…", self)
        self.download_button.setObjectName("showDownload")
        self.download_button.setCheckable(True)
        self.download_button.toggled.connect(self.show_download)
        folder_row.addWidget(self.folder_button)
        folder_row.addWidget(self.download_button)
        folder_row.addWidget(self.path_label, 1)
        layout.addLayout(folder_row)
        self.download_box = DownloadBox(self, busy_elsewhere=lambda: self.job is not None)
        self.download_box.setVisible(False)
        self.download_box.downloaded.connect(lambda folder: self.fill_models(select=folder))
        self.download_box.busyChanged.connect(self._downloading)
        layout.addWidget(self.download_box)
        self.summary = QLabel(self)
        self.summary.setObjectName("modelSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)

        form = QFormLayout()
        self.layer = QSpinBox(self)
        self.layer.setObjectName("layerSpin")
        self.layer.setRange(0, 0)
        self.layer_of = QLabel(self)
        layer_row = QHBoxLayout()
        layer_row.addWidget(self.layer)
        layer_row.addWidget(self.layer_of, 1)
        layer_label = QLabel("&Layer", self)
        layer_label.setBuddy(self.layer)
        form.addRow(layer_label, layer_row)
        self.sentence = QLineEdit(start_text, self)
        self.sentence.setObjectName("sentenceEdit")
        self.sentence.setPlaceholderText("a sentence to run the model on")
        self.sentence.textEdited.connect(self._typed)
        form.addRow("&Sentence", self.sentence)
        self.examples = QComboBox(self)
        self.examples.setObjectName("exampleSentences")
        self.examples.setAccessibleName("Example sentences")
        self.examples.addItem("a ready sentence for one of the model's heads…", None)
        for role, sentences in sorted(
            ready_sentences().items(), key=lambda kv: EXAMPLE_ORDER.index(kv[0])
        ):
            for example in sentences:
                self.examples.addItem(f"{role}: {example.text}", example.text)
        self.examples.activated.connect(self._example)
        self.examples_label = QLabel("&Example sentences", self)
        self.examples_label.setBuddy(self.examples)
        form.addRow(self.examples_label, self.examples)
        self.ids_label = QLabel("Token &ids", self)
        self.token_ids = QLineEdit(self)
        self.token_ids.setObjectName("tokenIdsEdit")
        self.token_ids.setPlaceholderText("464, 3797, 3332 (this folder has no tokenizer.json)")
        self.ids_label.setBuddy(self.token_ids)
        form.addRow(self.ids_label, self.token_ids)
        layout.addLayout(form)
        self.preview = QLabel(self)
        self.preview.setObjectName("tokenPreview")
        self.preview.setWordWrap(True)
        self.preview.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.preview)

        self.progress = QProgressBar(self)
        self.progress.setObjectName("openProgress")
        self.progress.setVisible(False)
        layout.addWidget(self.progress)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.open_button.setObjectName("openModelButton")
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.cancel)
        layout.addWidget(self.buttons)

        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(PREVIEW_MS)
        self._preview_timer.timeout.connect(self.update_preview)
        self.sentence.textChanged.connect(lambda _t: self._preview_timer.start())
        self.token_ids.textChanged.connect(lambda _t: self._preview_timer.start())
        self.edited = False  # has the user typed a sentence of their own?
        self.fill_models()
        self._show_info(None, "Choose a model in the list or a folder.")
        self.model_list.item(0).setSelected(True)  # the built-in model: nothing to fetch
        self.resize(680, 460)

    # ------------------------------------------------------------------ models ------
    def fill_models(self, select=None) -> None:
        """The built-in model, then the cache's models (unsupported ones greyed with the
        reason); `select`: a folder to choose in the list (e.g. one just downloaded)."""
        self.model_list.clear()
        builtin = builtin_model_path()
        card = read_card(builtin)
        title = card.title if card is not None and card.title else "classroom"
        item = QListWidgetItem(
            f"Built-in: {title}" + (f"\n{card.line}" if card is not None and card.line else ""),
            self.model_list,
        )
        item.setData(Qt.ItemDataRole.UserRole, str(builtin))
        item.setData(BUILTIN_ROLE, True)
        item.setToolTip(card.sentence if card is not None else str(builtin))
        found = discover_models()
        for m in found:
            text = m.name
            if not m.supported:
                kind = m.model_type or "no model_type"
                text += f"  —  {kind}: not supported ({', '.join(SUPPORTED)} are)"
            item = QListWidgetItem(text, self.model_list)
            item.setData(Qt.ItemDataRole.UserRole, str(m.path))
            item.setToolTip(str(m.path))
            if not m.supported:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        if not found:
            where = ", ".join(str(p) for p in cache_folders()) or "no cache folder"
            item = QListWidgetItem(f"(no models in the cache: {where})", self.model_list)
            item.setFlags(Qt.ItemFlag.NoItemFlags)
        if select is not None:
            wanted = Path(select).resolve()
            for i in range(self.model_list.count()):
                item = self.model_list.item(i)
                path = item.data(Qt.ItemDataRole.UserRole)
                if path and Path(path).resolve() == wanted:
                    self.model_list.setCurrentItem(item)
                    item.setSelected(True)
                    self.model_list.scrollToItem(item)

    def _on_item(self) -> None:
        chosen = self.model_list.selectedItems()
        path = chosen[0].data(Qt.ItemDataRole.UserRole) if chosen else None
        if path and self.job is None:
            self.set_folder(path)

    def choose_folder(self) -> None:
        start = str(self.info.path) if self.info is not None else ""
        folder = QFileDialog.getExistingDirectory(self, "Model folder", start)
        if folder:
            self.model_list.clearSelection()
            self.set_folder(folder)

    def set_folder(self, path) -> bool:
        """Read the folder's config (no weights); say why when it is not a usable model."""
        try:
            info = describe_model(path)
        except ValueError as exc:
            self.path_label.setText(str(path))
            self._show_info(None, str(exc))
            return False
        self.path_label.setText(str(info.path))
        self._show_info(info, info.summary())
        return True

    def _show_info(self, info, text: str) -> None:
        self.info = info
        self.summary.setText(text)
        self.summary.setStyleSheet("" if info is not None else ERROR_STYLE)
        top = 0 if info is None else info.n_layers - 1
        self.layer.setRange(0, top)
        self.layer_of.setText("" if info is None else f"of {info.n_layers} (0 to {top})")
        ids = info is not None and not info.has_tokenizer
        builtin = info is not None and is_builtin(info.path)
        self.examples_label.setVisible(builtin)
        self.examples.setVisible(builtin)
        if builtin and not self.edited:  # a sentence the built-in model has words for
            self.sentence.setText(self.examples.itemData(1))
            self.examples.setCurrentIndex(1)
        self.sentence.setEnabled(not ids)
        self.ids_label.setVisible(ids)
        self.token_ids.setVisible(ids)
        self.update_preview()

    def _typed(self, _text: str) -> None:
        self.edited = True
        self.examples.setCurrentIndex(0)

    def _example(self, index: int) -> None:
        """A ready sentence fills the sentence field (the user may still edit it)."""
        text = self.examples.itemData(index)
        if text:
            self.sentence.setText(text)
            self.update_preview()

    # ----------------------------------------------------------------- tokens -------
    @property
    def open_button(self) -> QPushButton:
        """The box's Open button, looked up each time: the box made it in C++, and a
        wrapper kept from an earlier lookup was found invalidated by PySide ("already
        deleted") after the window opened other presets, while the button itself was
        alive and shown (the soak's toy seed 0, twice)."""
        return self.buttons.button(QDialogButtonBox.StandardButton.Open)

    def model_input(self) -> dict:
        """{"text": …} or {"token_ids": […]} as typed (ValueError for bad ids)."""
        if self.info is not None and not self.info.has_tokenizer:
            return {"token_ids": parse_ids(self.token_ids.text())}
        return {"text": self.sentence.text()}

    def update_preview(self) -> bool:
        """Show the tokens the model will see (and their count), or why it cannot."""
        self._preview_timer.stop()
        ok = False
        if self.info is None:
            self.preview.setText("")
        else:
            try:
                ids, labels = model_tokenize(self.info.path, info=self.info, **self.model_input())
            except ValueError as exc:
                self.preview.setText(error_html(str(exc)))
            else:
                ok = True
                self.preview.setText(tokens_html(self.info, ids, labels))
        self.open_button.setEnabled(ok and self.job is None and self.download_box.fetch_job is None)
        return ok

    # ---------------------------------------------------------------- opening -------
    def start(self) -> bool:
        """Read the layer on a worker thread (after the window's save prompt)."""
        if self.job is not None or not self.update_preview():
            return False
        window = self.parent()
        if window is not None and hasattr(window, "maybe_save") and not window.maybe_save():
            return False
        origin = ModelOrigin.make(self.info.path, self.layer.value(), **self.model_input())
        self.job = ModelJob(origin.open)
        self.job.reports_to(
            self,
            progress=self._on_progress,
            done=lambda session: self._on_done(session, origin),
            failed=self._on_failed,
            cancelled=self._on_cancelled,
        )
        self._busy(True)
        self.progress.setRange(0, 0)  # busy until the first block reports
        self.job.start()
        return True

    def cancel(self) -> None:
        """Cancel: stop a running job (the dialog stays), else close the dialog."""
        if self.job is not None:
            self.job.cancel()
            self.progress.setFormat("cancelling…")
            return
        if self.download_box.fetch_job is not None:
            self.download_box.cancel_download()
            return
        self.reject()

    def _busy(self, on: bool) -> None:
        for w in (self.model_list, self.folder_button, self.layer, self.sentence, self.token_ids):
            w.setEnabled(not on)
        if not on:
            self.sentence.setEnabled(self.info is None or self.info.has_tokenizer)
        self.progress.setVisible(on)
        self.progress.setFormat("block %v of %m")
        self.open_button.setEnabled(not on)

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _finished(self) -> None:
        self.job = None
        self._busy(False)

    def _on_done(self, session, origin) -> None:
        self._finished()
        self.opened.emit(session, origin)
        self.accept()

    def _on_failed(self, message: str) -> None:
        self._finished()
        QMessageBox.critical(self, "Cannot open the model", message)

    def _on_cancelled(self) -> None:
        self._finished()
        self.progress.setVisible(False)

    def reject(self) -> None:
        """Closing the dialog (Esc) abandons a check or a download: nothing is kept."""
        self.download_box.cancel_all()
        super().reject()

    def closeEvent(self, event) -> None:
        if self.job is not None:
            self.job.cancel()
        self.download_box.cancel_all()
        super().closeEvent(event)

    # --------------------------------------------------------------- download -------
    def show_download(self, on: bool) -> None:
        self.download_box.setVisible(on)
        with QSignalBlocker(self.download_button):
            self.download_button.setChecked(on)
        if on:
            self.download_box.repo_id.setFocus()
            self.resize(self.width(), max(self.height(), self.sizeHint().height()))

    def _downloading(self, on: bool) -> None:
        """A download runs: the list and the folder button wait for it."""
        for w in (self.model_list, self.folder_button):
            w.setEnabled(not on)
        self.update_preview()


def open_model(window) -> OpenModelDialog:
    """File ▸ Open model…: show the dialog (one per window, non-blocking)."""
    dialog = window.findChild(OpenModelDialog)
    if dialog is None:
        dialog = OpenModelDialog(window)
        dialog.opened.connect(lambda session, origin: open_model_layer(window, session, origin))
    dialog.open()
    return dialog


def open_model_layer(window, session, origin, ask: bool = False) -> bool:
    """Make a model's layer the window's session (a new file: the undo history restarts)."""
    if ask and not window.maybe_save():
        return False
    window.document.open_session(session, origin=origin)
    c = session.config
    window.show_message(f"Opened {session.source}: {c.n} tokens, {c.h} heads")
    return True
