"""Colour scales and number formats stay finite for subnormal and huge values (issue 21).

A typed 1e-320 or 5e-324 (or a score scale of 1e-310) gave a stage a colour range of
±1e-320: a pixel size divided by it overflowed to infinity in the views' drawing code,
and `nice_peak(5e-324)` divided by 10.0**-325 == 0. At the other end a typed 1e308
made the scale ±inf (1.7e308 rounded up overflows) and number_format raised
OverflowError in a slot. Every scale is now between ±SMALLEST_PEAK and ±LARGEST_PEAK,
every common factor at least 10^SMALLEST_EXPONENT.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mha_gui import theme
from mha_gui.engine.layer.numbers import (
    LARGEST_PEAK,
    SMALLEST_EXPONENT,
    SMALLEST_PEAK,
    fixed_format,
    nice_peak,
    number_format,
)
from mha_gui.engine.panels.colour_scale import stage_levels

TINY = st.one_of(
    st.sampled_from([5e-324, 1e-320, 1e-310, 2.2250738585072014e-308, 1e-300, 1.1e-300]),
    st.floats(min_value=0.0, max_value=1e-290, allow_subnormal=True),
)


def span_is_drawable(levels) -> bool:
    lo, hi = levels
    return math.isfinite(1000.0 / (hi - lo)) and math.isfinite(lo) and math.isfinite(hi)


@given(TINY)
def test_nice_peak_is_never_below_the_smallest_peak(value):
    top = nice_peak(value)
    assert math.isfinite(top)
    assert top >= SMALLEST_PEAK or (value == 0 and top == 1.0)
    assert top >= value


@given(TINY, st.sampled_from(["scores", "projections", "mixing", "output"]))
def test_a_stage_of_tiny_values_gets_a_drawable_scale(value, stage):
    levels = stage_levels(stage, [value])
    assert span_is_drawable(levels)
    fmt = number_format("values", levels)
    assert fmt.exponent >= SMALLEST_EXPONENT
    assert fmt.cell(value) in {"0", "≈0"} or fmt.cell(value).replace("−", "-")[0].isdigit()
    assert fmt.tick(levels[1])  # the colour bar's ticks print


@given(TINY, st.integers(min_value=0, max_value=6))
def test_fixed_formats_print_tiny_values(value, decimals):
    fmt = fixed_format(value, decimals)
    assert fmt.exponent >= SMALLEST_EXPONENT
    text = fmt.cell(value)
    assert text and "inf" not in text and "nan" not in text


@given(TINY)
def test_theme_levels_of_tiny_arrays_are_drawable(value):
    levels = theme.levels_for("values", np.array([[value, -value / 2]]))
    assert span_is_drawable(levels)
    assert levels[1] >= SMALLEST_PEAK


def test_ordinary_peaks_are_unchanged():
    assert nice_peak(0.40626) == 0.41
    assert nice_peak(3e-7) == 3e-7
    assert theme.levels_for("values", np.array([0.25])) == (-0.25, 0.25)


HUGE = st.one_of(
    st.sampled_from([1e300, 1.7e308, 1.7976931348623157e308, math.inf, math.nan]),
    st.floats(min_value=1e290, allow_infinity=True),
)


@given(HUGE, st.sampled_from(["scores", "projections", "mixing", "output"]))
def test_a_stage_of_huge_values_gets_a_drawable_scale(value, stage):
    levels = stage_levels(stage, [value])
    assert span_is_drawable(levels) and levels[1] <= LARGEST_PEAK
    fmt = number_format("values", levels)
    assert fmt.tick(levels[1]) and fmt.cell(1e308)


@given(HUGE)
def test_theme_levels_and_fixed_formats_of_huge_values_are_finite(value):
    levels = theme.levels_for("values", np.array([[value, 1.0]]))
    assert span_is_drawable(levels)
    assert number_format("values", (-value, value)).tick(1.0)
    assert fixed_format(value, 2).cell(1e300)
