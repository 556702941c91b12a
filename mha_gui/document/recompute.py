"""When and where the document's trace is recomputed: coalesced to one refresh per
event-loop turn, incremental (only what an edit touched), and — for layers with more
than `ASYNC_CELLS` attention entries — on a worker thread, so the window never freezes.

`Recompute` is a part the Document owns (`document.recompute`). The document tells it
what an edit changed (`values_changed`, `switched`, `reset`); it reads the document's
session through the callable it was given and reports through the three callables it
was given (the document's traceChanged, busyChanged and computeFailed). The worker
recomputes from a private copy of the numbers; edits made meanwhile are queued and
recomputed next; `trace()` waits rather than hand out arrays being written;
`run_off_thread` lets a view prepare what it draws from a trace nobody writes
meanwhile. After every recompute the change is reported with the heads that changed (a
`TraceChange`) or EVERYTHING.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, QThreadPool, Signal

from mha_gui.document.cells import readonly
from mha_gui.document.later import Later
from mha_gui.engine.attention.forward import Trace
from mha_gui.engine.attention.incremental import EVERYTHING, IncrementalTrace
from mha_gui.engine.layer.session import Session

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
    """Carries a worker's result back to the UI thread: its own slot is the receiver, so
    `handler(job)` is queued to the thread this object lives in."""

    done = Signal(object)  # the finished _Job

    def __init__(self, parent: QObject, handler: Callable[[_Job], object]):
        super().__init__(parent)
        self._handler = handler
        self.done.connect(self._deliver)

    def _deliver(self, job) -> None:
        self._handler(job)


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
    """The document's trace, kept up to date after every edit (see the module docstring).

    `session()` returns the document's session as it is now; `on_change(change)` is
    called after every recompute with a TraceChange or EVERYTHING, `on_busy(bool)` when
    the worker starts or ends, `on_failure(reason)` when a recompute raised. `parent`
    owns the timers and the worker's messenger."""

    def __init__(
        self,
        parent: QObject,
        session: Callable[[], Session],
        *,
        on_change: Callable[[TraceChange | None], object],
        on_busy: Callable[[bool], object],
        on_failure: Callable[[str], object],
    ):
        self._session = session
        self._on_change, self._on_busy, self._on_failure = on_change, on_busy, on_failure
        self.engine = IncrementalTrace(session())
        # what the recomputes since the last report changed (EVERYTHING or query heads)
        self._changed_heads: set[int] | None = set()
        self._changed_contributions: set[int] = set()
        self._contributions: dict[int, np.ndarray] = {}  # head → Z_i W_O[i], until stale
        self._flush_later = Later(parent, self._flush)
        self.count = 0  # recomputes so far (tests and the benchmark count them)
        # off-thread recomputes of large layers (see ASYNC_CELLS)
        self.busy = False
        self._idle = threading.Event()
        self._idle.set()
        self._finished = _Finished(parent, self._job_done)
        self._queued: list[tuple] = []  # engine marks/resets made while a job runs
        self._job: _Job | None = None
        self._requests: list[tuple] = []  # run_off_thread calls waiting for the worker
        self._private: Session | None = None  # the worker's own copy (_worker_session)
        # parameters edited since the worker's copy was last brought up to date (None: any)
        self._unsynced: set[str] | None = None
        # a result is being handed to the views (a report, a view's preparation): the
        # trace they read is the one it was made of, even if edits are waiting
        self._delivering = False
        self._sharing = False  # the running recompute reads the document's own arrays
        if self.asynchronous:
            self._changed_heads = EVERYTHING
            self._start_job()  # the window opens at once; panels say "computing…"
        else:
            self.engine.refresh()

    # ------------------------------------------------- what the document tells it ---
    # What an edit changed, as soon as it is written (a trace() right after sees it);
    # then `schedule()`.
    def values_changed(self, name: str, head: int | None, contributions=()) -> None:
        """Numbers of parameter `name` changed (for one head or K/V group, or EVERYTHING);
        `contributions`: the heads whose block of W_O changed."""
        self._engine_call("mark", name, head)
        if self._unsynced is not None:
            self._unsynced.add(name)
        self._changed_contributions |= set(contributions)

    def switched(self, session: Session) -> None:
        """The document moved to `session`, whose numbers are the same but whose ablated
        heads or extra mask differ: only what those touch is recomputed."""
        self._engine_call("switch", session)

    def reset(self, session: Session) -> None:
        """The document moved to `session`, which may differ in anything: everything is
        recomputed."""
        self._engine_call("reset", session)
        self._changed_heads = EVERYTHING
        self._unsynced = None  # other numbers, maybe: the worker's copy is redone whole

    @property
    def pending(self) -> bool:
        """Is a recompute (and its report) due on the next event-loop turn?"""
        return self._flush_later.pending

    def schedule(self) -> None:
        """Recompute on the next event-loop turn what the calls above said changed (the
        document calls it last, after its own signals: views schedule their work first)."""
        self._flush_later.schedule()

    def _engine_call(self, *item) -> None:
        """Give an edit to the engine, or queue it while a job runs on the worker."""
        if self.busy:
            self._queued.append(item)
        else:
            _give(self.engine, item)

    def reads(self, params) -> bool:
        """Does the running recompute read these very arrays (the document's own)?"""
        return self._sharing and self.engine.session.params is params

    def moved(self, shared: Session, reusable: bool) -> None:
        """The document moved to a copy of `shared` (another thread reads its arrays).
        If that is the running recompute, they become the worker's own for later jobs
        when `reusable` (no writer thread reads them either); between jobs the engine
        follows the document to its copy (it would recompute the old numbers)."""
        if self.reads(shared.params):
            self._sharing = False
            if reusable:
                self._private = shared
                self._unsynced = set()  # its numbers are the document's before this edit
        elif not self.busy:
            self.engine.session = self._session()

    # -------------------------------------------------------------------- reading ---
    def trace(self) -> Trace:
        """The up-to-date trace; refreshes now if edits are pending (the signal still comes).

        A large layer is recomputed off the UI thread: while it is, this waits for the
        result rather than hand out arrays being written (views read the trace when
        `traceChanged` says it is ready, so only an export or a tooltip ever waits). While
        a view only prepares its images from the trace, nothing writes it: returned at once."""
        job = self._job
        preparing = self.busy and not self._recomputing(job)
        if preparing and not self._queued and not self.engine.is_dirty:
            # a view preparing its images only reads the trace: it is up to date already
            return self.engine.trace
        if self.busy:
            self._idle.wait()
            self._job_done(job)  # its queued signal, arriving later, is ignored
        if self._delivering and self.asynchronous and not self.engine.starts_over:
            # a view handling a report or its prepared images: the trace they were made
            # of (the edits waiting are recomputed on the worker next, not here)
            return self.engine.trace
        if self.engine.is_dirty:
            self._refresh()
            self._flush_later.schedule()  # the report still comes, from the next turn's flush
        return self.engine.trace

    def shown_trace(self) -> Trace:
        """The trace the views show: for a large layer the last one reported, even when
        edits made since are waiting to be recomputed (never refreshed here on the UI
        thread: the views show the last consistent trace until `traceChanged` brings the
        next). Only while a recompute is writing it does this wait, as `trace()` does;
        views check `computing` first. A small layer's is `trace()` (cheap, exact)."""
        if not self.asynchronous:
            return self.trace()
        if self.busy and self._recomputing(self._job):
            self._idle.wait()
            self._job_done(self._job)
        return self.engine.trace

    def contribution(self, head: int) -> np.ndarray:
        """C_i = Z_i W_O[i·d_v:(i+1)·d_v, :] (read-only), computed once per change of Z_i
        or of that block of W_O."""
        trace = self.trace()
        cached = self._contributions.get(head)
        if cached is None:
            d_v = self._session().config.d_v
            cached = readonly(trace.heads[head] @ trace.w_o[head * d_v : (head + 1) * d_v])
            self._contributions[head] = cached
        return cached

    def frozen_data(self):
        """The numbers as they are now, for `run_off_thread` work: a StageData over the
        current trace (not waited for, not refreshed) and the parameters."""
        from mha_gui.engine.panels.stage_panels import TraceData

        s = self._session()
        return TraceData(s.config, list(s.tokens), s.params, self.engine.trace)

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
        return self.asynchronous and (self.engine.is_dirty or bool(self._queued))

    @property
    def asynchronous(self) -> bool:
        c = self._session().config
        return c.h * c.n * c.n > ASYNC_CELLS

    # ------------------------------------------------------------------ recomputing ---
    def _refresh(self) -> None:
        _trace, heads = self.engine.refresh()
        self._account(heads)

    def _account(self, heads: set[int] | None) -> None:
        """Record what a recompute changed, until the next report says it."""
        self.count += 1
        if heads is EVERYTHING or self._changed_heads is EVERYTHING:
            self._changed_heads = EVERYTHING
            self._contributions.clear()
        else:
            self._changed_heads |= heads
            for head in heads | self._changed_contributions:
                self._contributions.pop(head, None)

    def _flush(self) -> None:
        if self.busy:
            return  # the running job's end flushes again
        if self.engine.is_dirty and self.asynchronous:
            self._start_job()
            return
        if self.engine.is_dirty:
            self._refresh()
        self._report()

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
        self.engine.session = self._worker_session()
        self._start(lambda: self.engine.refresh()[1], self._recomputed)

    def _worker_session(self) -> Session:
        """The numbers the worker recomputes from, which no edit may touch meanwhile.

        The worker's own arrays when it has some of the right shapes (the last job's,
        overwritten: at n = 2048, d_model 768 a fresh 28 MB copy costs ~40 ms of page
        faults on the UI thread, a copy into touched pages ~5 ms). Otherwise — a layer
        just opened — the document's own session, copied only if an edit arrives before
        the job ends (the document asks `reads`). Nothing else reads the worker's arrays
        between jobs: a trace made from them is recomputed in the next job, and views wait."""
        s, p = self._session(), self._private
        if p is None or p.config.parameter_shapes() != s.config.parameter_shapes():
            self._private = None
            self._sharing = True
            return s
        p.config = s.config  # same shapes: a switch (causal, ablation…) reuses the arrays
        names, self._unsynced = self._unsynced, set()
        return s.copy_into(p, names)  # only the parameters edited since the last copy

    def _start(self, work, done) -> None:
        self.busy = True
        self._idle.clear()
        self._on_busy(True)
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
                self._on_failure(str(error))
            else:
                with self._delivery():
                    done(value)
            self._apply_queued()
            self._on_busy(False)
            self._next_job()
            return
        self._recomputed(value, error)

    def _apply_queued(self) -> None:
        """The marks and resets of edits made while a job ran, given to the engine."""
        for item in self._queued:
            _give(self.engine, item)
        self._queued.clear()

    def _next_job(self) -> None:
        if self.busy:
            return
        if self._requests:
            self._start(*self._requests.pop(0))
        elif self.engine.is_dirty:
            self._flush_later.schedule()  # edits made while it ran: the newest numbers next

    def _recomputed(self, heads, error=None) -> None:
        self._sharing = False
        self.engine.session = self._session()
        self._apply_queued()
        if error is not None:
            self.engine.reset(self._session())  # start over from scratch next time
            self._on_failure(str(error))
        else:
            self._account(heads)
            if not self.engine.starts_over:
                self._report()
            # else: a session opened (or reshaped) meanwhile: this trace is not of its
            # numbers, nor maybe of its shapes; the next job's report says EVERYTHING
        self._on_busy(False)
        self._next_job()

    def _report(self) -> None:
        heads, self._changed_heads = self._changed_heads, set()
        contributions, self._changed_contributions = self._changed_contributions, set()
        with self._delivery():
            self._on_change(
                EVERYTHING if heads is EVERYTHING else TraceChange(heads, contributions)
            )

    @contextlib.contextmanager
    def _delivery(self):
        outer, self._delivering = self._delivering, True
        try:
            yield
        finally:
            self._delivering = outer


def _give(engine: IncrementalTrace, item: tuple) -> None:
    """One edit for the engine: ("mark", name, head), ("switch", session) — same numbers,
    other ablation or mask — or ("reset", session)."""
    kind = item[0]
    if kind == "mark":
        engine.mark(item[1], item[2])
    else:
        engine.reset(item[1], same_numbers=kind == "switch")
