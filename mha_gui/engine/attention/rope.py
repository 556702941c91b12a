"""Rotary position embeddings (RoPE): rotate Q and K by an angle that grows with position.

RoPE (Su et al., 2021) gives attention a sense of order without adding anything to X:
after projection, every pair of query/key features is rotated by the angle
position · ω_j, with one frequency ω_j per pair. Rotations preserve lengths, and the dot
product of a query rotated to position m with a key rotated to position n depends only on
m − n, so the scores see *relative* positions.

We follow Hugging Face transformers exactly, because real Llama/Mistral/Qwen2 checkpoints
are trained with its convention, not the paper's interleaved one:

- pairs are (x_j, x_{j + d/2}) — the first half of the features with the second half —
  not the neighbours (x_{2j}, x_{2j+1});
- ω_j = θ^(−2j/d) for j = 0 .. d/2 − 1 (`_compute_default_rope_parameters`), optionally
  rescaled by Llama 3's piecewise rule (`_compute_llama3_parameters`);
- the tables are cos/sin of position · cat(ω, ω) (d columns), and
  rotated = x · cos + rotate_half(x) · sin, with rotate_half(x) = cat(−x₂, x₁).

Computed in float64 (Hugging Face computes ω and the angles in float32, which at position
4096 is already ~2e-4 rad off the exact angle; float64 is the exact formula).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

DEFAULT_THETA = 10000.0
LLAMA3_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
ROPE_TYPES = ("default", "llama3")


def _number(name: str, value, *, positive: bool = True) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (positive and value <= 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def validate_theta(theta) -> float:
    """RoPE's base θ as a float; it must exceed 1 so that the frequencies decrease."""
    theta = _number("rope_theta", theta)
    if theta <= 1.0:
        raise ValueError(
            f"rope_theta must be greater than 1 (the base of the frequencies θ^(−2j/d)), "
            f"got {theta:g}"
        )
    return theta


def validate_scaling(scaling) -> dict | None:
    """Normalise a `rope_scaling` object: None, {"rope_type": "default"} or Llama 3's.

    Accepts the legacy spelling "type" for "rope_type" (older config.json files). Returns
    None for no scaling, or a new dict {"rope_type": "llama3", factor, low_freq_factor,
    high_freq_factor (floats), original_max_position_embeddings (int)}.
    """
    if scaling is None:
        return None
    if not isinstance(scaling, dict):
        raise ValueError(f"rope_scaling must be an object (or null), got {type(scaling).__name__}")
    data = dict(scaling)
    if "type" in data:
        legacy = data.pop("type")
        if "rope_type" in data and data["rope_type"] != legacy:
            raise ValueError(
                f'rope_scaling gives "type" {legacy!r} and "rope_type" {data["rope_type"]!r}: '
                f"give one"
            )
        data.setdefault("rope_type", legacy)
    kind = data.pop("rope_type", None)
    if kind not in ROPE_TYPES:
        raise ValueError(
            f"rope_scaling.rope_type must be one of {', '.join(ROPE_TYPES)}, got {kind!r}"
        )
    if kind == "default":
        if data:
            raise ValueError(
                f'rope_scaling with rope_type "default" takes no other keys, '
                f"got {', '.join(sorted(data))}"
            )
        return None
    unknown = sorted(set(data) - set(LLAMA3_KEYS))
    if unknown:
        raise ValueError(
            f"rope_scaling has unknown key(s) {', '.join(unknown)} "
            f"(llama3 takes {', '.join(LLAMA3_KEYS)})"
        )
    missing = [k for k in LLAMA3_KEYS if k not in data]
    if missing:
        raise ValueError(f"rope_scaling (llama3) is missing {', '.join(missing)}")
    factor = _number("rope_scaling.factor", data["factor"])
    if factor < 1:
        raise ValueError(f"rope_scaling.factor must be at least 1, got {factor:g}")
    low = _number("rope_scaling.low_freq_factor", data["low_freq_factor"])
    high = _number("rope_scaling.high_freq_factor", data["high_freq_factor"])
    if not low < high:
        raise ValueError(
            f"rope_scaling.low_freq_factor ({low:g}) must be smaller than "
            f"high_freq_factor ({high:g})"
        )
    original = data["original_max_position_embeddings"]
    if isinstance(original, float) and original.is_integer():
        original = int(original)
    if isinstance(original, bool) or not isinstance(original, numbers.Integral) or original < 1:
        raise ValueError(
            f"rope_scaling.original_max_position_embeddings must be a whole number ≥ 1, "
            f"got {original!r}"
        )
    return {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": int(original),
    }


@dataclass(frozen=True)
class RoPE:
    """What forward() needs to rotate: the base θ and an optional frequency scaling."""

    theta: float = DEFAULT_THETA
    scaling: tuple[tuple[str, object], ...] | None = None  # hashable items of the dict

    @classmethod
    def make(cls, theta=DEFAULT_THETA, scaling: dict | None = None) -> RoPE:
        checked = validate_scaling(scaling)
        items = None if checked is None else tuple(checked.items())
        return cls(validate_theta(theta), items)

    @property
    def scaling_dict(self) -> dict | None:
        return None if self.scaling is None else dict(self.scaling)

    def inv_freq(self, d_k: int) -> np.ndarray:
        return inverse_frequencies(d_k, self.theta, self.scaling_dict)

    def tables(self, n: int | np.ndarray, d_k: int, dtype=np.float64):
        return cos_sin(n, self.inv_freq(d_k), dtype)


def as_rope(rope) -> RoPE | None:
    """forward()'s `rope` argument → a RoPE or None.

    None/False: off. True: θ = 10000, no scaling. A number: θ. A (θ, scaling) pair. A
    RoPE. A dict {"theta": ..., "scaling": ...}.
    """
    if rope is None or rope is False or (isinstance(rope, np.bool_) and not rope):
        return None
    if rope is True or isinstance(rope, np.bool_):
        return RoPE()
    if isinstance(rope, RoPE):
        return RoPE.make(rope.theta, rope.scaling_dict)
    if isinstance(rope, numbers.Real):
        return RoPE.make(rope)
    if isinstance(rope, tuple) and len(rope) == 2:
        return RoPE.make(*rope)
    if isinstance(rope, dict):
        unknown = sorted(set(rope) - {"theta", "scaling"})
        if unknown:
            raise ValueError(f"rope has unknown key(s) {', '.join(unknown)} (theta, scaling)")
        return RoPE.make(rope.get("theta", DEFAULT_THETA), rope.get("scaling"))
    raise ValueError(
        f"rope must be None, True, a theta, a (theta, scaling) pair or a RoPE, got {rope!r}"
    )


def check_head_width(d_k: int) -> None:
    if d_k % 2:
        raise ValueError(
            f"RoPE rotates pairs of features, so d_k must be even, got d_k={d_k}: "
            f"use an even d_k or turn RoPE off"
        )


def inverse_frequencies(d_k: int, theta: float = DEFAULT_THETA, scaling: dict | None = None):
    """ω_j for j = 0 .. d_k/2 − 1, as Hugging Face computes them (float64).

    Default: ω_j = 1 / θ^(2j/d_k). Llama 3 (`rope_type: "llama3"`) keeps the fast
    rotations whose wavelength 2π/ω is shorter than original_max / high_freq_factor,
    divides the slow ones (wavelength longer than original_max / low_freq_factor) by
    `factor`, and blends linearly in between, so that a model trained on short contexts
    sees long ones at familiar angles.
    """
    check_head_width(d_k)
    exponents = np.arange(0, d_k, 2, dtype=np.int64).astype(np.float64) / d_k
    inv_freq = 1.0 / (float(theta) ** exponents)
    scaling = validate_scaling(scaling)
    if scaling is None:
        return inv_freq
    factor = scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_context = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context / low
    high_freq_wavelen = old_context / high
    wavelen = 2 * math.pi / inv_freq
    scaled = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_context / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(medium, smoothed, scaled)


def cos_sin(positions, inv_freq: np.ndarray, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of position · cat(ω, ω): two (n, d_k) tables.

    `positions` is a count n (positions 0 .. n−1) or an array of positions. Duplicating
    the d_k/2 angles is Hugging Face's layout: column j and column j + d_k/2 share ω_j,
    which is what lets `apply` rotate the pair (x_j, x_{j+d_k/2}) with whole-row products.
    """
    pos = np.arange(positions) if np.ndim(positions) == 0 else np.asarray(positions)
    angles = np.multiply.outer(pos.astype(np.float64), inv_freq)
    emb = np.concatenate([angles, angles], axis=-1)
    return np.cos(emb).astype(dtype, copy=False), np.sin(emb).astype(dtype, copy=False)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """cat(−x₂, x₁) over the last axis: the 90° turn of every pair (x_j, x_{j+d/2})."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, out: np.ndarray | None = None):
    """x · cos + rotate_half(x) · sin, into `out` (shape (..., n, d_k), d_k even).

    Written per half so that no rotate_half copy is built: the first half becomes
    x₁ cos − x₂ sin and the second x₂ cos + x₁ sin — a 2×2 rotation of each pair.
    `out` must not be `x`.
    """
    if out is None:
        out = np.empty(np.broadcast_shapes(x.shape, cos.shape), dtype=np.result_type(x, cos))
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[..., :half], sin[..., :half]
    o1, o2 = out[..., :half], out[..., half:]
    np.multiply(x1, c, out=o1)
    o1 -= x2 * s
    np.multiply(x2, c, out=o2)
    o2 += x1 * s
    return out
