"""The softmax of large score arrays: cache-sized row blocks, on every core.

At real sizes (n = 512…2048, 12 heads) the softmax is most of the time left after the
matrix products; these two tricks bring it close to memory speed. `forward.py` decides
when to use them (PARALLEL_ABOVE_BYTES, STREAM_ABOVE_BYTES there).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Rows of scores one softmax block holds, in bytes: small enough to stay in the L2 cache
# from the row maximum to the normalisation (256 KB measured best here).
BLOCK_BYTES = 256 * 1024


def softmax_rows(scores: np.ndarray, out: np.ndarray) -> None:
    """Row softmax of a 2-D (rows, n) array, a cache-sized block of rows at a time.

    The same arithmetic as `softmax_step` (subtract the row maximum, exp, divide by the
    sum; an all-blocked row gives zeros), but each block goes through the five passes
    while it is still in the L2 cache instead of streaming the whole array five times.
    """
    total_rows, n = scores.shape
    rows = max(1, min(total_rows, BLOCK_BYTES // max(1, n * scores.itemsize)))
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

    def _setup(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                return
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
            self.workers = max(1, min(cpus, 8))
            self._pool = None
            if self.workers > 1:
                self._pool = ThreadPoolExecutor(self.workers - 1, thread_name_prefix="mha-rows")
            self._pid = os.getpid()

    def run(self, fn, a: np.ndarray, out: np.ndarray) -> None:
        """fn(a[r0:r1], out[r0:r1]) over `workers` nearly equal row ranges of 2-D a, out."""
        self._setup()
        rows = a.shape[0]
        workers = min(self.workers, rows)
        if workers < 2:
            fn(a, out)
            return
        bounds = [round(i * rows / workers) for i in range(workers + 1)]
        parts = list(zip(bounds, bounds[1:], strict=False))
        futures = [self._pool.submit(fn, a[r0:r1], out[r0:r1]) for r0, r1 in parts[1:]]
        try:
            fn(a[parts[0][0] : parts[0][1]], out[parts[0][0] : parts[0][1]])
        finally:
            for f in futures:
                f.result()


parallel_rows = _ParallelRows()
