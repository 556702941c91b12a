"""What a heatmap panel's image holds: the matrix with blocked cells neutral, reduced to
screen size by block means (NumPy only, so it runs on a worker thread too)."""

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
    r, c = matrix.shape
    return matrix.reshape(r // kr, kr, c // kc, kc).mean(axis=(1, 3))
