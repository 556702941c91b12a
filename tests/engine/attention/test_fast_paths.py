"""The paths forward() takes at real sizes, forced on small layers and checked the same way.

At real sizes forward() runs as jobs on every core (engine/attention/scheduler.py): blocks of heads
projected by one GEMM, each head's attention (its softmax without the max pass, rows
that would overflow or underflow done again the careful way), blocks of output rows —
and takes its big arrays from recycled memory. Random small layers never reach those
sizes, so here the thresholds are set to zero (one K/V group per block, a few rows per
attention job) and every result is compared with the plain per-head reference again.
"""

import contextlib
import os
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings

from mha_gui.engine import forward
from mha_gui.engine.attention import buffers, row_softmax, scheduler, steps
from tests.engine.attention.test_forward_properties import FIELDS, _close
from tests.engine.attention.test_rope import rope_layers
from tests.engine.reference import reference_forward


@contextlib.contextmanager
def forced():
    """Every fast path on, whatever the size (and small row blocks: several per head)."""
    with (
        mock.patch.multiple(
            scheduler,
            JOBS_ABOVE_FLOPS=0,
            PARALLEL_ABOVE_BYTES=0,
            STREAM_ABOVE_BYTES=0,
            BLOCK_COLUMNS=1,
            ATTEND_ROWS=2,
        ),
        mock.patch.object(steps, "PACK_ABOVE", 0),
        mock.patch.object(row_softmax, "BLOCK_BYTES", 16),
    ):
        yield


@settings(max_examples=200, deadline=None)
@given(rope_layers())
def test_fast_paths_match_the_reference(case):
    arrays, options, rope = case
    with forced():
        t = forward(**arrays, **options, rope=(rope["theta"], rope["scaling"]))
    ref = reference_forward(**arrays, **options, rope=rope)
    for name in FIELDS:
        _close(getattr(t, name), ref[name])
    _close(t.q_rot, ref["q_rot"])


def test_a_real_size_equals_the_step_by_step_path():
    """n=300, 4 heads on every core, GQA, causal, an extra mask, ablation."""
    rng = np.random.default_rng(7)
    n, d, h, kv = 300, 32, 4, 2
    args = dict(
        x=rng.normal(size=(n, d)),
        w_q=rng.normal(size=(h, d, 8)),
        w_k=rng.normal(size=(kv, d, 8)),
        w_v=rng.normal(size=(kv, d, 6)),
        w_o=rng.normal(size=(h * 6, d)),
        b_q=rng.normal(size=(h, 8)),
        b_k=rng.normal(size=(kv, 8)),
        b_v=rng.normal(size=(kv, 6)),
        mask=rng.random((n, n)) < 0.1,
        causal=True,
        rope=True,
        ablate=[2],
    )
    args["mask"][5] = True  # a query with every key blocked
    with mock.patch.object(scheduler, "JOBS_ABOVE_FLOPS", 0):
        fast = forward(**args)
    with (
        mock.patch.object(scheduler, "JOBS_ABOVE_FLOPS", 1 << 60),
        mock.patch.object(steps, "PACK_ABOVE", 1 << 60),
    ):
        plain = forward(**args)
    for name in (*FIELDS, "q_rot", "k_rot"):
        _close(getattr(fast, name), getattr(plain, name))
    assert not fast.weights[:, 5].any() and not fast.heads[2].any()


def test_recycled_memory_never_changes_a_live_trace():
    def layer(seed):
        r = np.random.default_rng(seed)
        shapes = ((256, 64), (4, 64, 16), (4, 64, 16), (4, 64, 16), (64, 64))
        return [r.normal(size=s) for s in shapes]

    first = forward(*layer(1))
    kept = {name: getattr(first, name).copy() for name in FIELDS}
    row = first.weights[1, 3]  # a view: keeps first's memory busy after `first` is gone
    row_copy = row.copy()
    for seed in range(2, 6):
        forward(*layer(seed))  # made and dropped: its memory goes back to the pool
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(first, name), kept[name])
    del first
    for seed in range(6, 9):
        forward(*layer(seed))
    np.testing.assert_array_equal(row, row_copy)


def test_recycled_memory_is_reused_and_can_be_released():
    buffers.release()
    tracemalloc.start()  # numpy reports its allocations: what the pool holds is traced
    try:
        big = buffers.empty((512, 1024), np.float64)  # 4 MB
        address = big.ctypes.data
        view = big[3]
        del big
        assert buffers.empty((512, 1024), np.float64).ctypes.data != address  # view alive
        del view
        again = buffers.empty((1024, 512), np.float64)
        assert again.ctypes.data == address and again.flags.c_contiguous
        assert again.flags.writeable
        del again
        held, _ = tracemalloc.get_traced_memory()
        assert held >= 4 * 1024 * 1024  # idle, kept for the next array of its size
        buffers.release()
        after, _ = tracemalloc.get_traced_memory()
        assert held - after >= 4 * 1024 * 1024  # given back to the system
    finally:
        tracemalloc.stop()
    small = buffers.empty((3, 4), np.float32)
    assert small.shape == (3, 4) and small.dtype == np.float32


def test_out_reuse_and_float32_on_the_fast_paths():
    rng = np.random.default_rng(3)
    shapes = ((200, 48), (6, 48, 8), (3, 48, 8), (3, 48, 8), (48, 48))
    args = [(rng.normal(size=s) / 7).astype(np.float32) for s in shapes]
    with forced():
        t = forward(*args, causal=True)
        again = forward(*args, causal=True, out=t)
    ref = reference_forward(*[a.astype(np.float64) for a in args], causal=True)
    assert again is t and t.output.dtype == np.float32
    top = np.abs(ref["output"]).max()
    np.testing.assert_allclose(t.output, ref["output"], rtol=1e-4, atol=1e-5 * top)
    np.testing.assert_allclose(t.weights, ref["weights"], rtol=2e-4, atol=2e-5)


def test_concurrent_forwards_agree():
    rng = np.random.default_rng(11)
    shapes = ((128, 32), (4, 32, 8), (4, 32, 8), (4, 32, 8), (32, 32))
    layers = [[rng.normal(size=s) for s in shapes] for _ in range(6)]
    with forced():
        expect = [forward(*a).output for a in layers]
        with ThreadPoolExecutor(3) as pool:
            got = list(pool.map(lambda a: forward(*a).output, layers * 3))
    for i, out in enumerate(got):
        np.testing.assert_array_equal(out, expect[i % 6])


def test_a_forked_child_gets_its_own_threads():
    """The pool object survives fork(), its threads do not: the child must not hang."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    rng = np.random.default_rng(2)
    args = [rng.normal(size=s) for s in ((64, 16), (4, 16, 4), (4, 16, 4), (4, 16, 4), (16, 16))]
    with forced():
        expect = forward(*args).output  # the parent's pool is up
        pid = os.fork()
        if pid == 0:  # child: exit 0 only if the same numbers come out
            ok = np.array_equal(forward(*args).output, expect)
            os._exit(0 if ok else 1)
    for _ in range(600):  # up to 30 s, then the child is stuck: kill it and fail
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("forward() hung in a forked child")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
