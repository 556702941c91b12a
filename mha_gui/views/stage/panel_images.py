"""What a heatmap panel's image holds: the matrix with blocked cells neutral, reduced to
screen size by block means, and its pixels through a colour map (NumPy only, so it runs
on a worker thread too)."""

from __future__ import annotations

import math

import numpy as np

# A panel never holds an image larger than this per side: a 2048×2048 attention matrix is
# drawn from the mean of each 4×4 block (what a screen can show anyway); tooltips and
# exports keep reading the exact values.
MAX_IMAGE_SIDE = 512


def reduction(rows: int, cols: int) -> tuple[int, int]:
    """(rows, cols) of matrix cells averaged into one image pixel."""
    return math.ceil(rows / MAX_IMAGE_SIDE), math.ceil(cols / MAX_IMAGE_SIDE)


def prepare_image(shown: np.ndarray, step: tuple[int, int], blocked_value: float = 0.0):
    """What a panel's image holds: blocked (−∞) cells at `blocked_value` (the middle of the
    levels: they are painted over by the hatching), reduced by block means to the
    panel's image size. NumPy only: safe on a worker thread."""
    if not np.isfinite(shown).all():  # only scores have -inf
        shown = np.where(np.isfinite(shown), shown, blocked_value)
    return block_mean(shown, *step)


def block_mean(matrix: np.ndarray, kr: int, kc: int) -> np.ndarray:
    """Mean of each kr×kc block (the last blocks may be partial: padded by edge values)."""
    if kr == 1 and kc == 1:
        return matrix
    rows, cols = matrix.shape
    pr, pc = -rows % kr, -cols % kc
    if pr or pc:
        matrix = np.pad(matrix, ((0, pr), (0, pc)), mode="edge")
    # the sum of kc strided column views, then of kr row views: elementwise adds, where
    # a mean over the short axes of a (r/kr, kr, c/kc, kc) view ran ~5 ms per 512×768
    # panel (an n = 512 output stage's 13 panels: ~70 ms of each edit's preparation)
    cols = matrix[:, 0::kc] + matrix[:, 1::kc] if kc > 1 else matrix
    for j in range(2, kc):
        cols += matrix[:, j::kc]
    total = cols[0::kr] + cols[1::kr] if kr > 1 else cols
    for i in range(2, kr):
        total += cols[i::kr]
    return total / (kr * kc)


def packed_lut(lut) -> np.ndarray | None:
    """A uint8 colour map (N × 3 or N × 4) as N 0xAARRGGBB words; None for any other."""
    lut = None if lut is None or callable(lut) else np.asarray(lut)
    if lut is None or lut.dtype != np.uint8 or lut.ndim != 2 or lut.shape[1] not in (3, 4):
        return None
    alpha = lut[:, 3].astype(np.uint32) if lut.shape[1] == 4 else np.uint32(255)
    r, g, b = (lut[:, k].astype(np.uint32) for k in range(3))
    return np.ascontiguousarray((alpha << 24) | (r << 16) | (g << 8) | b, dtype=np.uint32)


def colour_pixels(image: np.ndarray, levels: tuple[float, float], lut32: np.ndarray):
    """`image`'s 32-bit pixels (rows × cols words): each value's colour on `levels`, as
    pyqtgraph maps them (N colours over the range, clipped at both ends)."""
    lo, hi = float(levels[0]), float(levels[1])
    n = lut32.shape[0]
    # halves throughout: hi − lo of ±1e308 would overflow
    half_span = (0.5 * hi - 0.5 * lo) or 0.5  # an empty range counts as 1, as pyqtgraph's
    scale = n / half_span
    if not math.isfinite(scale):  # a subnormal span: every value is at one end or the other
        scale = 0.0
    with np.errstate(over="ignore", invalid="ignore"):  # ±inf is clipped below
        index = np.multiply(image, 0.5, dtype=np.float64)
        index -= 0.5 * lo
        index *= scale
    # clipped at both ends; fmax/fmin take the number where the other is NaN, so a NaN
    # (which would cast to an index far outside) becomes 0 in the same two passes
    np.fmax(index, 0, out=index)
    np.fmin(index, n - 1, out=index)
    return lut32.take(index.astype(np.intp))
