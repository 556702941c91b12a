"""block_mean (a large panel's image: the mean of each k×k block) against the plain
definition: pad by edge values, then average every block — on random shapes and steps."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.views.stage.panel_images import block_mean


def reference(matrix: np.ndarray, kr: int, kc: int) -> np.ndarray:
    rows, cols = matrix.shape
    padded = np.pad(matrix, ((0, -rows % kr), (0, -cols % kc)), mode="edge")
    out = np.empty((padded.shape[0] // kr, padded.shape[1] // kc), matrix.dtype)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = padded[i * kr : (i + 1) * kr, j * kc : (j + 1) * kc].mean()
    return out


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 40),
    cols=st.integers(1, 40),
    kr=st.integers(1, 6),
    kc=st.integers(1, 6),
    dtype=st.sampled_from([np.float64, np.float32]),
    seed=st.integers(0, 2**32 - 1),
)
def test_block_mean_is_the_mean_of_each_block(rows, cols, kr, kc, dtype, seed):
    matrix = np.random.default_rng(seed).normal(size=(rows, cols)).astype(dtype) * 10
    got = block_mean(matrix, kr, kc)
    want = reference(matrix, kr, kc)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
