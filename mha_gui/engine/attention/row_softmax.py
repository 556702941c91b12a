"""Large forward passes on every core: cache-sized softmax blocks, a job pool, BLAS control.

`softmax_rows` keeps each block of rows in the L2 cache through all its passes (the
careful softmax, subtracting each row's maximum); `parallel_rows` runs row ranges, or a
list of jobs such as a few heads' whole attention, on every core; `blas_threads` lets
those jobs call BLAS single-threaded so that they, and not BLAS's own threads, share the
cores. engine/attention/scheduler.py decides when to use them.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Rows of scores one softmax block holds, in bytes: small enough to stay in the L2 cache
# from the row maximum to the normalisation (256 KB measured best here).
BLOCK_BYTES = 256 * 1024


def softmax_rows(scores: np.ndarray, out: np.ndarray, block_bytes: int | None = None) -> None:
    """Row softmax of a 2-D (rows, n) array, a cache-sized block of rows at a time.

    The same arithmetic as `softmax_step` (subtract the row maximum, exp, divide by the
    sum; an all-blocked row gives zeros), but each block goes through the five passes
    while it is still in the L2 cache instead of streaming the whole array five times.
    `block_bytes` (default BLOCK_BYTES) sets the block size.
    """
    total_rows, n = scores.shape
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    rows = max(1, min(total_rows, block_bytes // max(1, n * scores.itemsize)))
    row_max = np.empty((rows, 1), scores.dtype)
    total = np.empty((rows, 1), scores.dtype)
    for r0 in range(0, total_rows, rows):
        r1 = min(total_rows, r0 + rows)
        s_blk, a_blk = scores[r0:r1], out[r0:r1]
        mx, tot = row_max[: r1 - r0], total[: r1 - r0]
        np.max(s_blk, axis=1, keepdims=True, out=mx)
        dead = ~np.isfinite(mx)
        any_dead = dead.any()
        if any_dead:
            mx[dead] = 0.0
        np.subtract(s_blk, mx, out=a_blk)
        np.exp(a_blk, out=a_blk)
        np.sum(a_blk, axis=1, keepdims=True, out=tot)
        if any_dead:
            tot[dead] = 1.0
        np.reciprocal(tot, out=tot)
        np.multiply(a_blk, tot, out=a_blk)


class _ParallelRows:
    """Runs a row-wise function over the rows of a large array on every core.

    numpy releases the GIL inside its loops, so Python threads running the softmax on
    different rows use all cores — a step that would otherwise leave all but one idle
    while the matrix products around it use every core through BLAS. (BLAS products are
    not split this way: concurrent BLAS calls here ran one after the other.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0  # a forked child inherits the pool object but not its threads
        self.workers = 1

    def setup(self) -> None:
        """Start the pool (again, in a forked child) and set `workers`."""
        with self._lock:
            if self._pid == os.getpid():
                return
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
            self.workers = max(1, min(cpus, 8))
            self._pool = None
            if self.workers > 1:
                self._pool = ThreadPoolExecutor(self.workers - 1, thread_name_prefix="mha-rows")
            self._pid = os.getpid()

    def each(self, fn, count: int) -> None:
        """fn(0), fn(1), … fn(count - 1) on every core, each index taken by whichever
        thread is free next.

        Taking jobs as threads come free (rather than splitting them in fixed halves)
        keeps a core that another process slows down from holding up the rest. The
        calling thread works too, so the jobs finish even when the pool is busy with
        another caller's.
        """
        self.setup()
        workers = min(self.workers, count)
        indices = itertools.count()  # next() on it is atomic under the GIL
        errors = np.geterr()  # the caller's np.errstate, which pool threads do not inherit

        def work() -> None:
            with np.errstate(**errors):
                for i in indices:
                    if i >= count:
                        return
                    fn(i)

        if workers < 2:
            work()
            return
        futures = [self._pool.submit(work) for _ in range(workers - 1)]
        try:
            work()
        finally:
            for f in futures:
                f.result()

    def run(self, fn, a: np.ndarray, out: np.ndarray) -> None:
        """fn(a[r0:r1], out[r0:r1]) over `workers` nearly equal row ranges of 2-D a, out."""
        self.setup()
        rows = a.shape[0]
        workers = min(self.workers, rows)
        if workers < 2:
            fn(a, out)
            return
        bounds = [round(i * rows / workers) for i in range(workers + 1)]
        parts = list(zip(bounds, bounds[1:], strict=False))
        errors = np.geterr()

        def part(r0: int, r1: int) -> None:
            with np.errstate(**errors):
                fn(a[r0:r1], out[r0:r1])

        futures = [self._pool.submit(part, r0, r1) for r0, r1 in parts[1:]]
        try:
            fn(a[parts[0][0] : parts[0][1]], out[parts[0][0] : parts[0][1]])
        finally:
            for f in futures:
                f.result()


parallel_rows = _ParallelRows()


class _BlasThreads:
    """Switches OpenBLAS to one thread while our own threads share the cores.

    After a product, OpenBLAS's worker threads keep spinning for a while before they
    sleep; a softmax running in our threads then competes with them for the cores and
    took twice as long in the pipeline as alone. With BLAS single-threaded inside
    `single()`, each of our threads calls BLAS on its own jobs (one head's products,
    a block of rows) and no other thread is there to compete.

    The switch is process-wide (OpenBLAS has no per-thread setting in its pthreads
    build), so nested and concurrent `single()` blocks are counted and the first one's
    saved thread count comes back when the last one ends. Only OpenBLAS's pthreads
    build is touched (its OpenMP build's setting is broken before 0.3.34); with any
    other BLAS `available` is False and forward() keeps BLAS's own threading.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._looked = False
        self._get = self._set = None
        self._depth = 0
        self._saved = 1

    def _find(self) -> None:
        self._looked = True
        for path in _openblas_candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
                get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                parallel = getattr(lib, f"{prefix}openblas_get_parallel{suffix}", None)
                if get is None or put is None or parallel is None:
                    continue
                if parallel() != 1:  # 0: single-threaded build, 2: OpenMP build
                    return
                get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
                self._get, self._set = get, put
                return

    @property
    def available(self) -> bool:
        with self._lock:
            if not self._looked:
                self._find()
            return self._set is not None

    @contextlib.contextmanager
    def single(self):
        """BLAS runs in the calling thread only, until the last nested block ends."""
        if not self.available:
            yield
            return
        with self._lock:
            if self._depth == 0:
                self._saved = self._get()
                if self._saved > 1:
                    self._set(1)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._saved > 1:
                    self._set(self._saved)


def _openblas_candidates() -> list[str]:
    """Paths of the OpenBLAS libraries numpy may use: its bundled one, then any loaded."""
    here = os.path.dirname(os.path.dirname(np.__file__))
    paths = []
    for folder in ("numpy.libs", os.path.join("numpy", ".dylibs")):
        paths += sorted(glob.glob(os.path.join(here, folder, "*openblas*")))
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "openblas" in os.path.basename(path) and path not in paths:
                    paths.append(path)
    except OSError:  # not Linux
        pass
    return paths


blas_threads = _BlasThreads()
