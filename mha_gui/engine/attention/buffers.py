"""Recycled memory for large arrays: a fresh forward() without fresh pages.

A forward pass at n=512, h=12 writes ~66 MB of new intermediates. Memory that large
comes straight from the kernel (glibc maps it, and unmaps it again on free), so every
call pays a page fault and the zeroing of each page: ~5,500 faults and ~20 % of the
whole pass here, and more noise than signal in timings. `empty()` hands out arrays whose
memory comes from a small pool instead, and takes the memory back once the last view of
the array is gone — the same idea as PyTorch's caching allocator.

How "the last view is gone" is known without guessing reference counts: each array
handed out is built on a fresh ctypes holder over the pooled block; numpy makes every
view, slice or reshape of it keep that holder alive, and a weakref finalizer on the
holder returns the block when nothing refers to it any more. A block is therefore never
handed out twice while any array still uses it.

At most `KEEP_BYTES` of idle blocks are kept; `release()` drops them all.
"""

from __future__ import annotations

import ctypes
import math
import threading
import weakref

import numpy as np

KEEP_BYTES = 256 * 1024 * 1024  # idle memory kept for reuse, at most
MIN_BYTES = 1 << 20  # smaller arrays are cheap to allocate (malloc keeps them): no pool

_lock = threading.RLock()  # RLock: a finalizer may run while this thread holds it
_idle: dict[int, list[np.ndarray]] = {}
_idle_bytes = 0


def empty(shape, dtype) -> np.ndarray:
    """Like np.empty (C order), from recycled memory when the array is large."""
    global _idle_bytes
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES or nbytes > KEEP_BYTES:  # the common small case: no overhead
        return np.empty(shape, dtype)
    shape = tuple(int(s) for s in shape)
    with _lock:
        stack = _idle.get(nbytes)
        block = stack.pop() if stack else None
        if block is not None:
            _idle_bytes -= nbytes
    if block is None:
        block = np.empty(nbytes, np.uint8)
    holder = (ctypes.c_char * nbytes).from_buffer(block)
    weakref.finalize(holder, _give_back, block)
    return np.frombuffer(holder, dtype=dtype).reshape(shape)


def _give_back(block: np.ndarray) -> None:
    global _idle_bytes
    with _lock:
        if _idle_bytes + block.nbytes <= KEEP_BYTES:
            _idle.setdefault(block.nbytes, []).append(block)
            _idle_bytes += block.nbytes


def release() -> None:
    """Return every idle block to the system."""
    global _idle_bytes
    with _lock:
        _idle.clear()
        _idle_bytes = 0
