"""The numbers a user edits: the input X and every learned matrix, checked against a Config.

Kept apart from the forward pass so that the GUI, session files and presets share one
set of shape rules and one set of messages a student can act on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.layer.config import Config

PARAMETER_NAMES = ("X", "W_Q", "W_K", "W_V", "W_O")
BIAS_NAMES = ("b_Q", "b_K", "b_V", "b_O")
# What each axis of a parameter means, for messages that explain a wrong shape.
AXIS_NAMES = {
    "X": ("n", "d_model"),
    "W_Q": ("h", "d_model", "d_k"),
    "W_K": ("h_kv", "d_model", "d_k"),
    "W_V": ("h_kv", "d_model", "d_v"),
    "W_O": ("h·d_v", "d_model"),
    "b_Q": ("h", "d_k"),
    "b_K": ("h_kv", "d_k"),
    "b_V": ("h_kv", "d_v"),
    "b_O": ("d_model",),
}
# Largest magnitude a user may type or a session may hold: keeps exp() and the figures
# meaningful, and keeps every product of the forward pass far from float64 overflow.
VALUE_LIMIT = 1e6


def check_array(
    name: str, value, shape: tuple[int, ...], dims: str = "", limit: float | None = None
) -> np.ndarray:
    """Return `value` as a finite float64 array of `shape`, or raise a ValueError naming it.

    With `limit`, every entry must also lie within ±limit.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except OverflowError:  # an integer with hundreds of digits
        raise ValueError(f"{name} holds a number too large for a float") from None
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must hold numbers only, in a rectangular array (rows of equal length)"
        ) from None
    if arr.shape != tuple(shape):
        need = "(" + ", ".join(str(s) for s in shape) + ")"
        extra = f" but {dims} needs {need}" if dims else f" but must be {need}"
        raise ValueError(f"{name} has shape {arr.shape}{extra}")
    # a finite sum has finite terms (NaN and inf propagate): one pass, no temporary array,
    # and the entry-by-entry search only when something is wrong (or the sum overflowed)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = bool(np.isfinite(arr.sum()))
    if not finite and not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name}{list(bad)} is {arr[bad]}: every entry must be a finite number")
    if limit is not None and arr.size and (arr.max() > limit or arr.min() < -limit):
        bad = tuple(int(i) for i in np.argwhere(np.abs(arr) > limit)[0])
        raise ValueError(f"{name}{list(bad)} is {arr[bad]:g}: values must be within ±{limit:g}")
    return arr


def dims_text(name: str, config: Config) -> str:
    """`d_model=4, d_k=2` — the dimensions that fix `name`'s shape, for error messages."""
    symbols = {"n", "d_model", "h", "h_kv", "d_k", "d_v"}
    used = []
    for axis in AXIS_NAMES[name]:
        for sym in axis.split("·"):
            if sym in symbols and sym not in used:
                used.append(sym)
    return ", ".join(f"{s}={getattr(config, s)}" for s in used)


@dataclass
class Parameters:
    """X and the weights of one layer; biases are None unless the config turns them on."""

    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    b_V: np.ndarray | None = None
    b_O: np.ndarray | None = None
    extra: dict = field(default_factory=dict, repr=False)

    def names(self) -> tuple[str, ...]:
        return PARAMETER_NAMES + tuple(b for b in BIAS_NAMES if getattr(self, b) is not None)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.names()}

    def copy(self) -> Parameters:
        return Parameters(**{k: v.copy() for k, v in self.as_dict().items()})

    def validated(self, config: Config) -> Parameters:
        """A float64 copy checked against `config`; the message names the matrix and why."""
        shapes = config.parameter_shapes()
        checked = {}
        for name, shape in shapes.items():
            value = getattr(self, name)
            if value is None:
                raise ValueError(f"{name} is missing (biases are on in the config)")
            checked[name] = check_array(
                name, value, shape, dims_text(name, config), limit=VALUE_LIMIT
            )
        if not config.bias:
            present = [b for b in BIAS_NAMES if getattr(self, b) is not None]
            if present:
                raise ValueError(f"{', '.join(present)} given but biases are off in the config")
        return Parameters(**checked)

    def forward_kwargs(self) -> dict:
        """Arguments for `forward()` in its parameter order."""
        return dict(
            x=self.X,
            w_q=self.W_Q,
            w_k=self.W_K,
            w_v=self.W_V,
            w_o=self.W_O,
            b_q=self.b_Q,
            b_k=self.b_K,
            b_v=self.b_V,
            b_o=self.b_O,
        )


def random_parameters(config: Config, seed: int = 0, std: float | None = None) -> Parameters:
    """Seeded random values: X ~ N(0, 1), weights ~ N(0, 1/d_in) so scores stay O(1)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in config.parameter_shapes().items():
        if name == "X":
            sigma = 1.0
        elif std is not None:
            sigma = std
        elif name.startswith("b_"):
            sigma = 0.1
        else:
            sigma = 1.0 / np.sqrt(shape[-2])
        arrays[name] = np.round(rng.normal(0.0, sigma, shape), 2)
    return Parameters(**arrays)


def resize_parameters(params: Parameters, old: Config, new: Config, seed: int = 0) -> Parameters:
    """Parameters for `new` that keep every value overlapping `old`; new cells are seeded.

    Overlap is by index along each axis (token i stays token i, head i stays head i), so a
    teacher who adds a token or a head loses nothing already typed. W_O is regrouped per
    head so that head i's rows stay head i's rows when d_v changes.
    """
    fresh = random_parameters(new, seed=seed)
    kept = {}
    for name, target in fresh.as_dict().items():
        source = getattr(params, name, None)
        if source is None:
            kept[name] = target
            continue
        if name == "W_O":
            src = source.reshape(old.h, old.d_v, old.d_model)
            dst = target.reshape(new.h, new.d_v, new.d_model).copy()
            _copy_overlap(src, dst)
            kept[name] = dst.reshape(new.h * new.d_v, new.d_model)
        else:
            dst = target.copy()
            _copy_overlap(source, dst)
            kept[name] = dst
    return Parameters(**kept)


def resize_mask(mask: np.ndarray | None, n: int) -> np.ndarray | None:
    """An extra block mask after a token count change: overlap kept, new pairs open."""
    if mask is None:
        return None
    out = np.zeros((n, n), dtype=bool)
    _copy_overlap(mask, out)
    return out


def _copy_overlap(src: np.ndarray, dst: np.ndarray) -> None:
    region = tuple(slice(0, min(a, b)) for a, b in zip(src.shape, dst.shape, strict=True))
    dst[region] = src[region]
