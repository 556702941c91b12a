"""A panel's pixels come out of the colour table for any levels (issue 21).

With a subnormal span (levels ±1e-320) the old look-up multiplied by n / span = inf,
a value at the lower level became 0 · inf = NaN, cast to an index far outside the table
and raised IndexError inside the image's paint — which shiboken 6.11 turned into a
segmentation fault."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mha_gui import theme
from mha_gui.views.stage.panel_images import colour_pixels, packed_lut

LUT = packed_lut(theme.colormap_for("values"))


@pytest.mark.parametrize(
    "levels",
    [(-1e-320, 1e-320), (-5e-324, 5e-324), (0.0, 0.0), (1.0, 1.0), (2.0, 1.0), (-1e308, 1e308)],
)
def test_any_levels_give_pixels_of_the_table(levels):
    image = np.array([[levels[0], 0.0, levels[1]], [1e-320, -1e-320, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pixels = colour_pixels(image, levels, LUT)
    assert pixels.shape == image.shape
    assert np.isin(pixels, LUT).all()


def test_nan_cells_take_the_lowest_colour_rather_than_raising():
    pixels = colour_pixels(np.array([[np.nan, 1.0]]), (-1.0, 1.0), LUT)
    assert pixels[0, 0] == LUT[0] and pixels[0, 1] == LUT[-1]


def test_ordinary_levels_map_as_before():
    pixels = colour_pixels(np.array([[-1.0, 0.0, 1.0]]), (-1.0, 1.0), LUT)
    assert pixels[0, 0] == LUT[0] and pixels[0, 2] == LUT[-1]
    assert pixels[0, 1] == LUT[len(LUT) // 2]


@pytest.mark.parametrize("levels", [(-np.inf, np.inf), (-1e-320, 1e-320), (np.nan, 1.0)])
def test_the_figures_colour_look_up_takes_any_levels(levels):
    """theme.colors_for (every exported figure's cells): a colour of the map for every
    value, never an index far outside it (the neuron view raised IndexError at 1e308)."""
    lut = theme.colormap_for("values")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        colours = theme.colors_for(np.array([[1.0, np.nan, 1e308, -1e308]]), levels, lut)
    assert colours.shape == (1, 4, 3)
    assert all(any((c == row).all() for row in lut) for c in colours[0])
