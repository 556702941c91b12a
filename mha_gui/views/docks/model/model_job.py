"""Running a real model off the UI thread: opening a layer, computing every layer's maps.

`ModelJob(work)` runs `work(progress)` on Qt's thread pool; `progress(done, total)` is
what engine.models calls after each block: the job forwards it as a signal (a progress
bar follows it) and raises `Cancelled` from it once `cancel()` was called, so a big model
stops at the next block. Work that polls for Cancel itself (a download asks
`cancelled()` between chunks and must clean up) reads `job.cancelled` and reports with
`job.report`, which never raises. The result, the failure's one-line reason or the
cancellation arrives on the UI thread as a signal; `reports_to(receiver, …)` delivers
them to callbacks only while the receiving widget exists (a job may end after its dock or
dialog was closed and deleted: a lambda connected straight to the signal would then call
into a deleted widget).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThreadPool, Signal


class Cancelled(Exception):
    """Raised from the progress callback to stop the engine at the next block."""


class JobSignals(QObject):
    progress = Signal(int, int)
    done = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class _Relay(QObject):
    """A child of the receiving widget, so Qt drops its connections when the widget goes."""

    def __init__(self, receiver: QObject, callbacks: dict):
        super().__init__(receiver)
        self.callbacks = callbacks

    def progress(self, done: int, total: int) -> None:
        self._call("progress", done, total)

    def done(self, result) -> None:
        self._call("done", result)

    def failed(self, reason: str) -> None:
        self._call("failed", reason)

    def cancelled(self) -> None:
        self._call("cancelled")

    def _call(self, name: str, *args) -> None:
        callback = self.callbacks.get(name)
        if callback is not None:
            callback(*args)


class ModelJob:
    """Started as a callable (`QThreadPool.start(self.run)`), so the pool owns the runnable
    that wraps it: a Python QRunnable could be freed by the UI thread while the pool thread
    is still returning from `run()`."""

    # jobs still running, so Python does not delete one before it has reported
    running: set[ModelJob] = set()

    def __init__(self, work):
        self.work = work
        self.signals = JobSignals()
        self._cancel = False
        self.finished = False
        for signal in (self.signals.done, self.signals.failed, self.signals.cancelled):
            signal.connect(self._finish)

    def reports_to(self, receiver: QObject, **callbacks) -> ModelJob:
        """Deliver `progress(done, total)`, `done(result)`, `failed(reason)` and
        `cancelled()` to the given callbacks on the UI thread, while `receiver` exists."""
        unknown = set(callbacks) - {"progress", "done", "failed", "cancelled"}
        if unknown:
            raise TypeError(f"ModelJob reports no {', '.join(sorted(unknown))}")
        relay = _Relay(receiver, callbacks)
        for name in callbacks:
            getattr(self.signals, name).connect(getattr(relay, name))
        return self

    def start(self) -> ModelJob:
        ModelJob.running.add(self)
        QThreadPool.globalInstance().start(self.run)
        return self

    def cancel(self) -> None:
        self._cancel = True

    @property
    def cancelled(self) -> bool:
        """Has Cancel been asked for (the work stops at its next chance)?"""
        return self._cancel

    def report(self, done: int, total: int) -> None:
        """Progress as a signal, from any thread; never raises."""
        self._emit("progress", int(done), int(total))

    def _emit(self, name: str, *args) -> None:
        """Emit one of the job's signals, from any thread, unless they are gone: the
        application quit while the job ran (its signals' QObject was deleted with it,
        and each emit raised "Signal source has been deleted" in the pool's thread)."""
        try:
            getattr(self.signals, name).emit(*args)
        except RuntimeError:
            self._cancel = True  # nobody is listening: stop at the next block

    def _progress(self, done: int, total: int) -> None:
        if self._cancel:
            raise Cancelled
        self.report(done, total)

    def run(self) -> None:
        try:
            result = self.work(self._progress)
        except Cancelled:
            self._emit("cancelled")
        except (ValueError, OSError, MemoryError) as exc:
            self._emit("failed", str(exc) or type(exc).__name__)
        except Exception as exc:  # a worker must report, never die silently
            self._emit("failed", f"{type(exc).__name__}: {exc}")
        else:
            if self._cancel:
                self._emit("cancelled")
            else:
                self._emit("done", result)

    def _finish(self, *_args) -> None:
        self.finished = True
        ModelJob.running.discard(self)
