"""How numbers look wherever a teacher reads them: cells, colour bars, captions, tooltips.

The window, the figure exporter, the handout and LaTeX all print matrices. They agree
because they ask this module: one colour scale per stage (`nice_peak`), one number format
per colour scale (`NumberFormat`), one typography for engine text (`pretty`, `minus`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from mha_gui.engine.layer.values import format_value

MINUS = "\u2212"  # typographic minus: every number in a figure uses it, LaTeX keeps "-"
_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def sub(i: int) -> str:
    """Unicode subscript digits: sub(12) == '₁₂'."""
    return str(i).translate(_SUB)


def minus(text: str) -> str:
    """Hyphen-minus before a number → U+2212 ("-2.74" → "−2.74"); hyphens in words stay."""
    return re.sub(r"(?<![\w.])-(?=[\d.∞])", MINUS, text)


def pretty(text: str) -> str:
    """Figure typography for engine text: `1e-05` → `10^{−5}`, `2.5e+06` → `2.5×10^{6}`
    (rich text with ^{…} superscripts), then typographic minus signs."""

    def power(m: re.Match) -> str:
        mant, sign, digits = m.group(1), m.group(2), m.group(3).lstrip("0") or "0"
        exp = ("−" if sign == "-" else "") + digits
        return f"10^{{{exp}}}" if mant in ("1", "1.0") else f"{mant}×10^{{{exp}}}"

    text = re.sub(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]?)(\d+)(?![\w.])", power, text)
    return minus(text)


def num(value: float, decimals: int = 3) -> str:
    """A number in running text (tooltips, explanations): `decimals` places, more for tiny
    values so that at least two significant digits survive (0.00042, not 0)."""
    value = float(value)
    if math.isfinite(value) and 0 < abs(value) < 10.0 ** (1 - decimals):
        decimals = min(8, 1 - math.floor(math.log10(abs(value))))
    return format_value(value, decimals)


def peak(matrix: np.ndarray) -> float:
    """Largest finite magnitude of a matrix (0 for an empty or all-blocked one)."""
    if matrix.size == 0:
        return 0.0
    # the usual case, every entry finite: two reductions and no temporary array (n = 2048:
    # ~3× faster than the masked form, which blocked scores (−inf) and NaNs still take)
    hi, lo = float(matrix.max()), float(matrix.min())
    if math.isfinite(hi) and math.isfinite(lo):
        return max(abs(hi), abs(lo))
    return float(np.max(np.abs(matrix), where=np.isfinite(matrix), initial=0.0))


# The smallest peak a colour scale takes. A matrix whose largest magnitude is below it
# (a typed 1e-320, a scale of 1e-310: subnormal floats) is drawn on ±1e-300, its cells
# printed "≈0": a pixel size divided by a subnormal range overflows to infinity, and
# drawing code (pyqtgraph's axes and views, Qt's transforms) then meets inf and NaN.
SMALLEST_PEAK = 1e-300
SMALLEST_EXPONENT = -300  # a common factor 10^k is never smaller: 10.0**-324 is 0
# ... nor a scale larger than ±1e300: a peak of 1.7e308 rounded up is inf, and a span of
# ±1e308 overflows too; larger values take the scale's end colour and print as they are.
LARGEST_PEAK = 1e300


def nice_peak(value: float) -> float:
    """`value` rounded up to two significant digits (0.40626 → 0.41, 6 → 6, 127 → 130);
    never below SMALLEST_PEAK nor above LARGEST_PEAK (1.0 for 0 or a non-finite value).

    A stage's colour scale is ±nice_peak: the colour bar reads a round number, and a scrub
    step that nudges the largest value leaves the levels — and so every other panel's
    pixels — as they were, instead of repainting them all.
    """
    if not math.isfinite(value) or value <= 0:
        return 1.0
    if value <= SMALLEST_PEAK:
        return SMALLEST_PEAK
    if value >= LARGEST_PEAK:
        return LARGEST_PEAK
    exponent = math.floor(math.log10(value)) - 1
    digits = math.ceil(round(value / 10.0**exponent, 9))
    return float(f"{digits}e{exponent}")


@dataclass(frozen=True)
class NumberFormat:
    """How the panels of one colour scale print numbers, in cells and on the colour bar.

    Values are printed divided by 10**exponent (a common factor written once, as
    `factor`, in the caption and colour-bar label) so tiny or huge values stay short; a
    non-zero value that still rounds to 0 prints as "≈0", never as "0"."""

    exponent: int
    decimals: int
    tick_decimals: int

    @property
    def factor(self) -> str:
        """Rich text of the common factor, "" when there is none: `×10^{−5}`."""
        return "" if self.exponent == 0 else f"×10^{{{minus(str(self.exponent))}}}"

    def scaled(self, v: float) -> float:
        return v / 10.0**self.exponent if self.exponent else v

    def cell(self, v: float) -> str:
        if not math.isfinite(v):
            return format_value(v)
        text = format_value(self.scaled(v), self.decimals)
        if text == "0" and v != 0:
            return "≈0"
        return minus(text)

    def plain(self, v: float) -> str:
        """The cell text with an ASCII minus (LaTeX, TSV-like contexts)."""
        return self.cell(v).replace(MINUS, "-")

    def tick(self, v: float) -> str:
        return minus(format_value(self.scaled(v), self.tick_decimals))


def number_format(kind: str, levels: tuple[float, float]) -> NumberFormat:
    """Weights: 2 decimals. Signed values: 2 decimals (3 below 1); a peak below 0.01
    or from 10⁴ up is printed as d.dd × 10^k with k shared by the whole scale."""
    lo, hi = levels
    top = min(max(abs(lo), abs(hi)), LARGEST_PEAK)  # nan and ±inf: the largest scale
    if math.isnan(top):
        top = LARGEST_PEAK
    exponent, decimals = 0, 2
    if kind != "weights" and top > 0:
        mag = max(math.floor(math.log10(top)), SMALLEST_EXPONENT)
        if top < 0.01 or top >= 1e4:
            exponent = mag
        else:
            decimals = 3 if mag < 0 else 2  # below 1: three places
    step = min(abs(hi / 4 - lo / 4), top / 2) / 10.0**exponent  # hi − lo may overflow
    tick_decimals = max(0, min(6, 1 - math.floor(math.log10(step)))) if step > 0 else 2
    return NumberFormat(exponent, decimals, tick_decimals)


def fixed_format(peak_value: float, decimals: int, kind: str = "values") -> NumberFormat:
    """A format with a decimals count the user chose (LaTeX, handout tables): when the
    largest value would keep fewer than two significant digits at `decimals` places, or
    reaches 10⁴, a common power of ten is pulled out so no nonzero entry prints as 0.
    Weights (probabilities) never get one."""
    exponent = 0
    if (
        kind != "weights"
        and peak_value > 0
        and (peak_value < 10.0 ** (1 - decimals) or peak_value >= 1e4)
    ):
        peak_value = min(peak_value, LARGEST_PEAK)  # inf: the largest scale's factor
        exponent = max(math.floor(math.log10(peak_value)), SMALLEST_EXPONENT)
    return NumberFormat(exponent, decimals, decimals)
