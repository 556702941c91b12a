"""`peak`, the largest finite magnitude every colour scale is made from, against the
straightforward definition on arrays with blocked (−inf), NaN and signed entries."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from mha_gui.engine.layer.numbers import peak

VALUES = st.one_of(
    st.floats(-1e300, 1e300, allow_nan=False),
    st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0]),
)


def reference(m: np.ndarray) -> float:
    finite = [abs(float(v)) for v in m.flat if np.isfinite(v)]
    return max(finite, default=0.0)


@given(
    arrays(
        np.float64, array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), elements=VALUES
    )
)
def test_peak_is_the_largest_finite_magnitude(m):
    assert peak(m) == reference(m)


@given(
    arrays(
        np.float32,
        array_shapes(min_dims=2, max_dims=2, max_side=5),
        elements=st.floats(-1e6, 1e6, width=32, allow_nan=False),
    )
)
def test_peak_of_float32_matrices(m):
    assert peak(m) == reference(m)
