"""The numerics of the real-model blocks (engine/models/families.py), float64 NumPy:
LayerNorm, RMSNorm and the activations named in config.json (`hidden_act`), with a
vectorised exact erf for BERT's GELU.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * weight


ERF_STEP = 1.0 / 32  # grid of the Taylor table; |dx| ≤ 1/64
ERF_TERMS = 10


@cache
def _erf_table() -> np.ndarray:
    """Row n, column i: erf⁽ⁿ⁾(x_i)/n! at x_i = i/32 on [0, 6] (row 0: erf itself).

    erf⁽ⁿ⁾(x) = (2/√π)·(−1)ⁿ⁻¹·Hₙ₋₁(x)·e^(−x²) with the physicists' Hermite polynomials.
    """
    grid = np.arange(0.0, 6.0 + ERF_STEP, ERF_STEP)
    table = np.empty((ERF_TERMS + 1, len(grid)))
    for i, x in enumerate(grid):
        table[0, i] = math.erf(x)
        hermite = [1.0, 2.0 * x]
        for k in range(1, ERF_TERMS):
            hermite.append(2.0 * x * hermite[k] - 2.0 * k * hermite[k - 1])
        g = 2.0 / math.sqrt(math.pi) * math.exp(-x * x)
        for n in range(1, ERF_TERMS + 1):
            table[n, i] = g * (-1) ** (n - 1) * hermite[n - 1] / math.factorial(n)
    return table


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, vectorised: a 10-term Taylor series about the nearest multiple
    of 1/32 (math.erf there). Within 3e-16 of math.erf everywhere (a test checks it), and
    ~3× faster than calling math.erf per element; erf(±6) is ±1 in float64."""
    table = _erf_table()
    a = np.minimum(np.abs(x), 6.0)
    idx = np.rint(a * (1.0 / ERF_STEP)).astype(np.intp)
    dx = a - idx * ERF_STEP
    out = table[ERF_TERMS][idx]
    for n in range(ERF_TERMS - 1, -1, -1):
        out *= dx
        out += table[n][idx]
    return np.copysign(out, x)


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """x·Φ(x) with the exact error function (BERT's "gelu")."""
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GPT-2's "gelu_new": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


ACTIVATIONS = {
    "gelu": gelu_erf,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "gelu_fast": gelu_tanh,
    "silu": silu,
    "swish": silu,
    "relu": lambda x: np.maximum(x, 0.0),
}
