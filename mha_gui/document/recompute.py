"""When and where the document's trace is recomputed: coalesced to one refresh per
event-loop turn, incremental (only what an edit touched), and — for layers with more
than `ASYNC_CELLS` attention entries — on a worker thread, so the window never freezes.

A mixin of Document. The worker recomputes from a private copy of the numbers; edits
made meanwhile are queued and recomputed next; `trace()` waits rather than hand out
arrays being written; `run_off_thread` lets a view prepare what it draws from a trace
nobody writes meanwhile. `traceChanged` is emitted after every recompute, with the heads
that changed (a `TraceChange`) or None for everything.
"""

from __future__ import annotations

import contextlib
import threading

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from mha_gui.engine.forward import Trace

# Layers with more attention entries (h·n²) than this recompute off the UI thread (n =
# 2048, 12 heads: seconds per full recompute); smaller ones stay synchronous, which is
# faster for them (no copy, no thread hop).
ASYNC_CELLS = 1_500_000


class TraceChange(frozenset):
    """What a recompute changed: the query heads whose Z_i changed (the set itself) and
    `contributions`, the heads whose share Z_i W_O[i] of Y changed (an edit of W_O's
    row block i changes C_i but not Z_i). Y changes with every recompute."""

    contributions: frozenset

    def __new__(cls, heads, contributions=()):
        change = super().__new__(cls, heads)
        change.contributions = frozenset(contributions) | change
        return change


class _Finished(QObject):
    """Carries a worker's result back to the UI thread (a queued signal)."""

    done = Signal(object)  # the finished _Job


class _Job:
    """`work()` on a worker thread: a recompute of the engine (on a private copy of the
    session) or a view preparing what it draws (reading a trace nobody writes meanwhile).

    Started as a callable (`QThreadPool.start(job.run)`): the pool then owns the runnable
    that wraps it. A QRunnable subclass of Python's would be freed with its last Python
    reference, which the UI thread can drop while the pool thread is still returning from
    `run()` — a use after free."""

    def __init__(self, work, on_done, finished: _Finished, idle: threading.Event):
        self.work, self.on_done, self.finished, self.idle = work, on_done, finished, idle
        self.result: tuple = (None, None)  # (value, error)

    def run(self) -> None:
        try:
            self.result = (self.work(), None)
        except Exception as exc:
            self.result = (None, exc)
        self.idle.set()
        # RuntimeError: the document was deleted meanwhile (its window closed), nobody waits
        with contextlib.suppress(RuntimeError):
            self.finished.done.emit(self)


class Recompute:
    """The recompute scheduling of Document (which provides session, _engine, signals)."""

    def _init_recompute(self) -> None:
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._flush)
        self.recompute_count = 0
        # off-thread recomputes of large layers (see ASYNC_CELLS)
        self.busy = False
        self._idle = threading.Event()
        self._idle.set()
        self._finished = _Finished(self)
        self._finished.done.connect(self._job_done)
        self._queued: list[tuple] = []  # engine marks/resets made while a job runs
        self._job: _Job | None = None
        self._requests: list[tuple] = []  # run_off_thread calls waiting for the worker
        self._private = None  # the worker's own copy of the session (_worker_session)
        self._sharing = False  # the running recompute reads the document's own session
        if self.asynchronous:
            self._changed_heads = None
            self._start_job()  # the window opens at once; panels say "computing…"
        else:
            self._engine.refresh()

    def trace(self) -> Trace:
        """The up-to-date trace; refreshes now if edits are pending (the signal still comes).

        A large layer is recomputed off the UI thread: while it is, this waits for the
        result rather than hand out arrays being written (views read the trace when
        `traceChanged` says it is ready, so only an export or a tooltip ever waits). While
        a view only prepares its images from the trace, nothing writes it: returned at once."""
        job = self._job
        preparing = self.busy and not self._recomputing(job)
        if preparing and not self._queued and not self._engine.is_dirty:
            # a view preparing its images only reads the trace: it is up to date already
            return self._engine.trace
        if self.busy:
            self._idle.wait()
            self._job_done(job)  # its queued signal, arriving later, is ignored
        if self._engine.is_dirty:
            self._refresh()
            self._schedule()  # traceChanged still comes, from the next turn's flush
        return self._engine.trace

    def frozen_data(self):
        """The numbers as they are now, for `run_off_thread` work: a StageData over the
        current trace (not waited for, not refreshed) and the parameters."""
        from mha_gui.engine.stage_panels import TraceData

        return TraceData(self.config, self.tokens, self.session.params, self._engine.trace)

    def _recomputing(self, job: _Job | None) -> bool:
        """Is `job` a recompute (rather than a view preparing its images)? (A bound method
        is a new object at each access: compared with ==, not `is`.)"""
        return job is not None and job.on_done == self._recomputed

    @property
    def computing(self) -> bool:
        """A large layer's recompute is running or due: views that read the trace wait for
        `traceChanged` (reading it now would recompute on the UI thread). A view preparing
        its images on the worker does not count: nothing writes the trace meanwhile."""
        if self.busy and self._recomputing(self._job):
            return True
        return self.asynchronous and (self._engine.is_dirty or bool(self._queued))

    @property
    def asynchronous(self) -> bool:
        c = self.config
        return c.h * c.n * c.n > ASYNC_CELLS

    def _mark(self, name: str, head: int | None) -> None:
        if self.busy:
            self._queued.append(("mark", name, head))
        else:
            self._engine.mark(name, head)

    def _schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _refresh(self) -> None:
        _trace, heads = self._engine.refresh()
        self._account(heads)

    def _account(self, heads: set[int] | None) -> None:
        """Record what a recompute changed, until the next `traceChanged` says it."""
        self.recompute_count += 1
        if heads is None or self._changed_heads is None:
            self._changed_heads = None
            self._contributions.clear()
        else:
            self._changed_heads |= heads
            for head in heads | self._changed_contributions:
                self._contributions.pop(head, None)

    def _flush(self) -> None:
        if self.busy:
            return  # the running job's end flushes again
        if self._engine.is_dirty and self.asynchronous:
            self._start_job()
            return
        if self._engine.is_dirty:
            self._refresh()
        self._emit_change()

    def run_off_thread(self, work, done) -> None:
        """Run `work()` on a worker thread while the trace stays as it is (edits made
        meanwhile wait and are recomputed after); then `done(result)` on the UI thread.
        Views use it to prepare what they draw from a large trace without freezing."""
        if self.busy:
            self._requests.append((work, done))
        else:
            self._start(work, done)

    def _start_job(self) -> None:
        """Recompute on a worker thread from a private copy of the numbers, so edits made
        meanwhile (queued, applied after) never race with the computation."""
        self._engine.session = self._worker_session()
        self._start(lambda: self._engine.refresh()[1], self._recomputed)

    def _worker_session(self):
        """The numbers the worker recomputes from, which no edit may touch meanwhile.

        The worker's own arrays when it has some of the right shapes (the last job's,
        overwritten: at n = 2048, d_model 768 a fresh 28 MB copy costs ~40 ms of page
        faults on the UI thread, a copy into touched pages ~5 ms). Otherwise — a layer
        just opened — the document's own session, copied only if an edit arrives before
        the job ends (`_before_write`). Nothing else reads the worker's arrays between
        jobs: a trace made from them is recomputed in the next job, and views wait."""
        s, p = self.session, self._private
        if p is None or p.config != s.config:
            self._private = None
            self._sharing = True
            return s
        return s.copy_into(p)

    def _before_write(self) -> None:
        """An edit while another thread reads the document's own arrays (the worker's
        first recompute of an opened layer, a file being written): the document moves to
        a copy first. The worker's session then becomes its own arrays for later jobs,
        unless a writer still reads them."""
        worker = self._sharing and self._engine.session is self.session
        if worker or self._numbers_read_elsewhere():
            shared = self.session
            self.session = shared.copy(trusted=True)
            if worker:
                self._sharing = False
                if not self._numbers_read_elsewhere(shared.params):
                    self._private = shared

    def _start(self, work, done) -> None:
        self.busy = True
        self._idle.clear()
        self.busyChanged.emit(True)
        self._job = _Job(work, done, self._finished, self._idle)
        QThreadPool.globalInstance().start(self._job.run)

    def _job_done(self, job) -> None:
        if not self.busy or job is not self._job:
            return  # already handled by a trace() that waited for it
        self.busy = False
        self._job = None
        recompute, done = self._recomputing(job), job.on_done
        value, error = job.result
        # its closures (a view's scene) are not kept alive by the thread pool's reference
        job.work = job.on_done = None
        job.result = (None, None)
        if not recompute:
            # a view's preparation, shown while the trace is still the one it read (the
            # edits made meanwhile go to the engine after: recomputed on the worker next,
            # not by a trace() of the view's on the UI thread)
            if error is not None:
                self.computeFailed.emit(str(error))
            else:
                done(value)
            self._apply_queued()
            self.busyChanged.emit(False)
            self._next_job()
            return
        self._recomputed(value, error)

    def _apply_queued(self) -> None:
        """The marks and resets of edits made while a job ran, given to the engine."""
        for item in self._queued:
            if item[0] == "mark":
                self._engine.mark(item[1], item[2])
            else:
                self._engine.reset(item[1])
        self._queued.clear()

    def _next_job(self) -> None:
        if self.busy:
            return
        if self._requests:
            self._start(*self._requests.pop(0))
        elif self._engine.is_dirty:
            self._schedule()  # edits made while it ran: the newest numbers next

    def _recomputed(self, heads, error=None) -> None:
        self._sharing = False
        self._engine.session = self.session
        self._apply_queued()
        if error is not None:
            self._engine.reset(self.session)  # start over from scratch next time
            self.computeFailed.emit(str(error))
        else:
            self._account(heads)
            self._emit_change()
        self.busyChanged.emit(False)
        self._next_job()

    def _emit_change(self) -> None:
        heads, self._changed_heads = self._changed_heads, set()
        contributions, self._changed_contributions = self._changed_contributions, set()
        self.traceChanged.emit(None if heads is None else TraceChange(heads, contributions))
