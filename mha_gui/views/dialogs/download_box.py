"""The Open model dialog's "Download from the Hugging Face hub" box.

Check asks the hub (on a worker thread) which files the app would fetch and their size;
only Download fetches them (engine/models/download.py), with a progress bar and Cancel,
into the cache — a cancelled or failed download leaves nothing that looks like a model,
and its reason is one sentence in the box. `downloaded(folder)` then tells the dialog to
choose the new model; `busyChanged(on)` says a download runs (the dialog holds its own
controls meanwhile).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QLocale, Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from mha_gui.engine.models import cache_folders
from mha_gui.engine.models.download import DownloadCancelled, DownloadError, download, plan_download
from mha_gui.views.dialogs.model_preview import error_html
from mha_gui.views.docks.model.model_job import Cancelled, ModelJob

REPO_EXAMPLES = "gpt2, bert-base-uncased, Qwen/Qwen2.5-0.5B …"


def size_text(n: int) -> str:
    """548105171 → "548.1 MB" (SI units, as the hub shows sizes)."""
    return QLocale.c().formattedDataSize(int(n), 1, QLocale.DataSizeFormat.DataSizeSIFormat)


def plan_text(plan) -> str:
    """What a download plan will fetch, for the user to decide on."""
    files = " · ".join(f"{name} {size_text(size)}" for name, size in plan.files)
    return (
        f"<b>{html.escape(plan.repo_id)}</b> ({html.escape(plan.model_type)}): "
        f"{len(plan.files)} files, <b>{size_text(plan.total_bytes)}</b> — "
        f"{html.escape(files)}. Press Download to fetch them into the Hugging Face cache "
        f"({html.escape(str(cache_folders()[0]))})."
    )


def _hub(work, *args, **kwargs):
    """Run a download step in a job: Cancel is the job's cancellation and a refusal its
    one-line failure (ModelJob reports ValueError's sentence as it is)."""
    try:
        return work(*args, **kwargs)
    except DownloadCancelled:
        raise Cancelled from None
    except DownloadError as exc:
        raise ValueError(str(exc)) from None


class DownloadBox(QGroupBox):
    """`busy_elsewhere()`: whether the dialog is opening a layer (no download starts then)."""

    downloaded = Signal(str)  # the new model's folder
    busyChanged = Signal(bool)

    def __init__(self, parent, busy_elsewhere):
        super().__init__("Download from the Hugging Face hub", parent)
        self.setObjectName("downloadBox")
        self.busy_elsewhere = busy_elsewhere
        self.plan = None  # the checked DownloadPlan of the id in the field
        self.check_job: ModelJob | None = None
        self.fetch_job: ModelJob | None = None
        self._unit = 1  # bytes per progress step of the running download
        rows = QVBoxLayout(self)
        first = QHBoxLayout()
        label = QLabel("Model &id", self)
        self.repo_id = QLineEdit(self)
        self.repo_id.setObjectName("repoIdEdit")
        self.repo_id.setAccessibleName("Hugging Face model id")
        self.repo_id.setPlaceholderText(REPO_EXAMPLES)
        label.setBuddy(self.repo_id)
        self.check_button = QPushButton("Chec&k", self)
        self.check_button.setObjectName("checkDownload")
        self.check_button.setToolTip("Ask the hub which files the app needs and their size")
        first.addWidget(label)
        first.addWidget(self.repo_id, 1)
        first.addWidget(self.check_button)
        rows.addLayout(first)
        self.plan_label = QLabel(
            "Only config.json, tokenizer.json and the .safetensors weights are fetched, "
            "and nothing until you press Download.",
            self,
        )
        self.plan_label.setObjectName("downloadPlan")
        self.plan_label.setWordWrap(True)
        self.plan_label.setTextFormat(Qt.TextFormat.RichText)
        rows.addWidget(self.plan_label)
        second = QHBoxLayout()
        self.fetch_button = QPushButton("Do&wnload", self)
        self.fetch_button.setObjectName("startDownload")
        self.fetch_button.setEnabled(False)
        self.download_progress = QProgressBar(self)
        self.download_progress.setObjectName("downloadProgress")
        self.download_progress.setVisible(False)
        self.stop_button = QPushButton("Cancel download", self)
        self.stop_button.setObjectName("cancelDownload")
        self.stop_button.setVisible(False)
        second.addWidget(self.fetch_button, 0, Qt.AlignmentFlag.AlignLeft)
        second.addWidget(self.download_progress, 1)
        second.addWidget(self.stop_button)
        rows.addLayout(second)
        self.repo_id.textEdited.connect(self._forget_plan)
        self.repo_id.returnPressed.connect(self.check_download)
        self.check_button.clicked.connect(self.check_download)
        self.fetch_button.clicked.connect(self.start_download)
        self.stop_button.clicked.connect(self.cancel_download)

    def _say(self, text: str, error: bool = False) -> None:
        self.plan_label.setText(error_html(text) if error else text)

    def _forget_plan(self, _text: str = "") -> None:
        """A plan is for the id it was checked with: editing the id takes it back."""
        if self.plan is not None:
            self.plan = None
            self.fetch_button.setEnabled(False)
            self._say("Press Check to see the files and their size first.")

    def check_download(self) -> bool:
        """Ask the hub what Download would fetch (names and sizes; only the few-kB
        config.json is read, to refuse an unsupported family before the weights)."""
        if self.check_job is not None or self.fetch_job is not None:
            return False
        repo = self.repo_id.text().strip()
        if not repo:
            self._say(f"Type a Hugging Face model id, e.g. {REPO_EXAMPLES}", error=True)
            return False
        self.plan = None
        self.fetch_button.setEnabled(False)
        self.check_button.setEnabled(False)
        self._say(f"Asking the hub about {html.escape(repo)}…")
        job = self.check_job = ModelJob(lambda _progress: _hub(plan_download, repo))
        job.reports_to(
            self,
            done=lambda plan: self._checked(job, plan, ""),
            failed=lambda reason: self._checked(job, None, reason),
            cancelled=lambda: self._checked(job, None, ""),
        ).start()
        return True

    def _checked(self, job, plan, reason: str) -> None:
        if job is not self.check_job:
            return
        self.check_job = None
        self.check_button.setEnabled(True)
        if plan is None:
            if reason:
                self._say(reason, error=True)
            return
        self.plan = plan
        self._say(plan_text(plan))
        self.fetch_button.setEnabled(True)

    def start_download(self) -> bool:
        """Fetch the checked plan's files on a worker thread; Cancel stops it."""
        plan = self.plan
        if plan is None or self.fetch_job is not None or self.busy_elsewhere():
            return False
        # a big model's bytes overflow the progress bar's int: count in units of that many
        unit = self._unit = max(1, -(-plan.total_bytes // (1 << 30)))
        job = self.fetch_job = ModelJob(
            lambda _progress: _hub(
                download,
                plan,
                progress=lambda done, total: job.report(done // unit, total // unit),
                cancelled=lambda: job.cancelled,
            )
        )
        job.reports_to(
            self,
            progress=self._on_download_progress,
            done=lambda folder: self._downloaded(job, folder, ""),
            failed=lambda reason: self._downloaded(job, None, reason),
            cancelled=lambda: self._downloaded(job, None, "cancelled"),
        )
        self._downloading(True)
        self.download_progress.setRange(0, max(plan.total_bytes // unit, 1))
        self.download_progress.setValue(0)
        self.download_progress.setFormat(f"0 of {size_text(plan.total_bytes)}")
        job.start()
        return True

    def cancel_download(self) -> None:
        if self.fetch_job is not None:
            self.fetch_job.cancel()
            self.download_progress.setFormat("cancelling…")

    def cancel_all(self) -> None:
        """The dialog closes: a check or a download is abandoned (nothing is kept)."""
        for job in (self.check_job, self.fetch_job):
            if job is not None:
                job.cancel()

    def _downloading(self, on: bool) -> None:
        for w in (self.repo_id, self.check_button, self.fetch_button):
            w.setEnabled(not on)
        self.download_progress.setVisible(on)
        self.stop_button.setVisible(on)
        self.busyChanged.emit(on)

    def _on_download_progress(self, done: int, total: int) -> None:
        """`done` of `total` in units of `self._unit` bytes."""
        self.download_progress.setRange(0, max(total, 1))
        self.download_progress.setValue(min(done, total))
        unit = self._unit
        self.download_progress.setFormat(
            f"{size_text(done * unit)} of {size_text(total * unit)} (%p %)"
        )

    def _downloaded(self, job, folder, reason: str) -> None:
        if job is not self.fetch_job:
            return
        self.fetch_job = None
        plan, self.plan = self.plan, None
        self._downloading(False)
        self.fetch_button.setEnabled(False)
        if folder is None:
            if reason == "cancelled":
                self._say("The download was cancelled; nothing was kept.")
            else:
                self._say(reason, error=True)
            return
        self._say(
            f"Downloaded {html.escape(plan.repo_id)} ({size_text(plan.total_bytes)}); it is "
            "chosen in the list above."
        )
        self.downloaded.emit(str(folder))
