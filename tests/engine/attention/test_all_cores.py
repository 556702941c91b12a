"""The large-layer path on every core: BLAS switched to one thread, jobs in our threads.

`forward()` runs large layers as jobs with OpenBLAS single-threaded (`run_jobs`), and
falls back to BLAS's own threads plus a parallel softmax where OpenBLAS cannot be
switched. Both are forced on small layers here and compared with the
per-head reference; the thread switch must always be undone, and checking finiteness on
every core must not change which error a caller sees.
"""

import threading
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings

from mha_gui.engine import forward
from mha_gui.engine.attention import row_softmax, scheduler, validation
from tests.engine.attention.test_fast_paths import forced
from tests.engine.attention.test_forward_properties import FIELDS, _close
from tests.engine.attention.test_rope import rope_layers
from tests.engine.reference import reference_forward


def _without_blas_control():
    blas = row_softmax.blas_threads
    blas.available  # noqa: B018 - look the library up before hiding it
    return mock.patch.object(blas, "_set", None)


@settings(max_examples=100, deadline=None)
@given(rope_layers())
def test_the_fallback_without_blas_control_matches_the_reference(case):
    arrays, options, rope = case
    with forced(), _without_blas_control():
        t = forward(**arrays, **options, rope=(rope["theta"], rope["scaling"]))
    ref = reference_forward(**arrays, **options, rope=rope)
    for name in FIELDS:
        _close(getattr(t, name), ref[name])


def test_both_large_paths_agree_at_a_real_size():
    rng = np.random.default_rng(5)
    n, d, h, kv = 256, 48, 6, 3
    args = dict(
        x=rng.normal(size=(n, d)),
        w_q=rng.normal(size=(h, d, 8)) / 4,
        w_k=rng.normal(size=(kv, d, 8)) / 4,
        w_v=rng.normal(size=(kv, d, 8)),
        w_o=rng.normal(size=(h * 8, d)),
        b_o=rng.normal(size=d),
        mask=rng.random((n, n)) < 0.2,
        causal=True,
        ablate=[1],
    )
    args["mask"][7] = True  # every key blocked for query 7
    with mock.patch.multiple(scheduler, JOBS_ABOVE_FLOPS=0, PARALLEL_ABOVE_BYTES=0):
        cores = forward(**args)
        with _without_blas_control():
            fallback = forward(**args)
    for name in FIELDS:
        _close(getattr(cores, name), getattr(fallback, name))
    assert not cores.weights[:, 7].any() and not cores.heads[1].any()
    assert np.isneginf(cores.scores[:, 0, 1:]).all()


def test_blas_threads_come_back_after_nested_and_concurrent_blocks():
    blas = row_softmax.blas_threads
    if not blas.available:
        pytest.skip("no switchable OpenBLAS here")
    before = blas._get()
    inside = []
    barrier = threading.Barrier(3)

    def user():
        with blas.single():
            barrier.wait()
            inside.append(blas._get())
            barrier.wait()

    threads = [threading.Thread(target=user) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    with blas.single(), blas.single():
        inside.append(blas._get())
    with pytest.raises(RuntimeError), blas.single():
        raise RuntimeError("a failing job")
    assert inside == [1, 1, 1, 1]
    assert blas._get() == before


def test_a_failing_job_reaches_the_caller():
    def job(i):
        if i == 5:
            raise KeyError(i)

    with pytest.raises(KeyError):
        row_softmax.parallel_rows.each(job, 9)


@pytest.mark.parametrize("where", ["X", "W_K", "W_O"])
def test_finiteness_on_every_core_names_the_first_bad_operand(where):
    rng = np.random.default_rng(1)
    arrays = dict(
        X=rng.normal(size=(40, 12)),
        W_Q=rng.normal(size=(3, 12, 4)),
        W_K=rng.normal(size=(3, 12, 4)),
        W_V=rng.normal(size=(3, 12, 4)),
        W_O=rng.normal(size=(12, 12)),
    )
    arrays[where].reshape(-1)[-1] = np.nan  # in the last chunk of that array
    arrays["W_O"].reshape(-1)[0] = np.inf  # a later operand is bad too (unless W_O)
    bad = pytest.raises(ValueError, match=rf"^{where}\[")
    with mock.patch.object(validation, "PARALLEL_FINITE_ABOVE", 0), bad as err:
        forward(*arrays.values())
    assert "every entry must be finite" in str(err.value)


def test_all_finite_many_matches_all_finite():
    rng = np.random.default_rng(2)
    arrays = [rng.normal(size=s) for s in ((50, 30), (7,), (4, 9, 11), (30, 50))]
    arrays.append(arrays[3].T)  # not C-contiguous: checked whole
    arrays[2][3, 8, 10] = -np.inf
    arrays[4][0, 29] = np.nan
    arrays.append(np.full(100, 1e308))  # finite entries whose sum overflows
    with mock.patch.object(validation, "PARALLEL_FINITE_ABOVE", 0):
        got = validation.all_finite_many(arrays)
    assert got == [validation.all_finite(a) for a in arrays]
    assert got == [True, True, False, False, False, True]


@pytest.mark.filterwarnings("error")  # the caller's errstate holds in the pool threads too
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_overflow_is_reported_on_the_large_path(dtype):
    big = 1e20 if dtype == np.float32 else 1e200
    rng = np.random.default_rng(4)
    shapes = ((64, 8), (2, 8, 4), (2, 8, 4), (2, 8, 4), (8, 8))
    args = [rng.normal(size=s).astype(dtype) for s in shapes]
    args[0][3, 2] = big
    everywhere = mock.patch.object(validation, "PARALLEL_FINITE_ABOVE", 0)
    with forced(), everywhere, pytest.raises(ValueError, match="too large") as err:
        forward(*args)
    assert np.dtype(dtype).name in str(err.value)
