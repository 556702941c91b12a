"""The dimensions and switches that fix the shape of every array in the computation.

A `Config` is the single source of truth for shapes: parameters, session files, the
GUI's editors and the figures all ask it what shape a matrix must have, so that one
validation message serves every entry point.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

# Guard rails for anything a user types or a file claims: large enough for real model
# shapes (BERT-base, n=512), small enough that a typo cannot ask for terabytes.
MAX_TOKENS = 4096
MAX_WIDTH = 8192
MAX_HEADS = 128
# Every dimension can be within its limit and the layer still need tens of GB (n=4096
# with 128 heads: 34 GB of attention matrices); refuse it with a reason, not an OOM kill.
MAX_MEMORY_BYTES = 4_000_000_000


@dataclass(frozen=True)
class Config:
    """Shapes and switches of one multi-head attention layer.

    `scale=None` means the textbook 1/sqrt(d_k); any positive number replaces it.
    `h_kv` key/value heads are shared by `h // h_kv` query heads each (GQA; 1 is MQA).
    """

    n: int = 4
    d_model: int = 4
    h: int = 2
    d_k: int = 2
    d_v: int = 2
    h_kv: int | None = None
    causal: bool = False
    bias: bool = False
    scale: float | None = None

    def __post_init__(self) -> None:
        if self.h_kv is None:
            object.__setattr__(self, "h_kv", self.h)
        self.validate()

    def validate(self) -> None:
        limits = {
            "n": MAX_TOKENS,
            "d_model": MAX_WIDTH,
            "h": MAX_HEADS,
            "d_k": MAX_WIDTH,
            "d_v": MAX_WIDTH,
            "h_kv": MAX_HEADS,
        }
        for name, limit in limits.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
            if not 1 <= value <= limit:
                raise ValueError(f"{name} must be between 1 and {limit}, got {value}")
        if self.h % self.h_kv != 0:
            raise ValueError(
                f"h_kv={self.h_kv} key/value heads must divide h={self.h} query heads "
                f"(each K/V head is shared by the same number of query heads)"
            )
        for name in ("causal", "bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.scale is not None:
            if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)):
                raise ValueError(f"scale must be a number or null, got {self.scale!r}")
            if not math.isfinite(self.scale) or self.scale <= 0:
                raise ValueError(f"scale must be a positive finite number, got {self.scale}")
        need = 8 * self.values_in_memory()
        if need > MAX_MEMORY_BYTES:
            raise ValueError(
                f"n={self.n}, d_model={self.d_model}, h={self.h}, d_k={self.d_k}, d_v={self.d_v} "
                f"needs {need / 1e9:.1f} GB (h·n² = {self.h * self.n**2:,} attention entries); "
                f"the limit is {MAX_MEMORY_BYTES / 1e9:.1f} GB: use fewer tokens, heads or features"
            )

    def values_in_memory(self) -> int:
        """Numbers held for one forward pass: X, the weights and every intermediate."""
        n, d, h, kv, dk, dv = self.n, self.d_model, self.h, self.h_kv, self.d_k, self.d_v
        weights = h * d * dk + kv * d * (dk + dv) + 2 * h * dv * d  # W_O and its copy
        intermediates = h * n * dk + kv * n * (dk + dv) + 2 * h * n * n + 2 * h * n * dv
        return n * d + weights + intermediates + n * d + h * n * d  # X, Y, contributions

    # ---- derived quantities -------------------------------------------------------
    @property
    def group_size(self) -> int:
        """How many query heads share one key/value head."""
        return self.h // self.h_kv

    @property
    def effective_scale(self) -> float:
        return 1.0 / math.sqrt(self.d_k) if self.scale is None else float(self.scale)

    @property
    def variant(self) -> str:
        if self.h_kv == self.h:
            return "MHA"
        if self.h_kv == 1:
            return "MQA"
        return "GQA"

    def kv_group(self, head: int) -> int:
        """The key/value head that query head `head` reads from."""
        return head // self.group_size

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Shapes of the learned parameters (plus X), in the order the UI lists them."""
        shapes: dict[str, tuple[int, ...]] = {
            "X": (self.n, self.d_model),
            "W_Q": (self.h, self.d_model, self.d_k),
            "W_K": (self.h_kv, self.d_model, self.d_k),
            "W_V": (self.h_kv, self.d_model, self.d_v),
            "W_O": (self.h * self.d_v, self.d_model),
        }
        if self.bias:
            shapes.update(
                b_Q=(self.h, self.d_k),
                b_K=(self.h_kv, self.d_k),
                b_V=(self.h_kv, self.d_v),
                b_O=(self.d_model,),
            )
        return shapes

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        """Build from a session's "config" object, naming any unknown or missing key."""
        if not isinstance(data, dict):
            raise ValueError(f"config must be an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"config has unknown key(s): {', '.join(unknown)}")
        missing = sorted({"n", "d_model", "h", "d_k", "d_v"} - set(data))
        if missing:
            raise ValueError(f"config is missing key(s): {', '.join(missing)}")
        return cls(**data)

    def with_changes(self, **changes) -> Config:
        """A validated copy; dimension names follow the dataclass fields."""
        return replace(self, **changes)
