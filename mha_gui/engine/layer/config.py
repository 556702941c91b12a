"""The dimensions and switches that fix the shape of every array in the computation.

A `Config` is the single source of truth for shapes: parameters, session files, the
GUI's editors and the figures all ask it what shape a matrix must have, so that one
validation message serves every entry point.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields, replace

from mha_gui.engine.attention.rope import (
    DEFAULT_THETA,
    RoPE,
    check_head_width,
    validate_scaling,
    validate_theta,
)
from mha_gui.engine.attention.validation import out_of_range

# Guard rails for anything a user types or a file claims: large enough for real model
# shapes (BERT-base, n=512), small enough that a typo cannot ask for terabytes.
MAX_TOKENS = 4096
MAX_WIDTH = 8192
MAX_HEADS = 128
# Every dimension can be within its limit and the layer still need tens of GB (n=4096
# with 128 heads: 34 GB of attention matrices); refuse it with a reason, not an OOM kill.
MAX_MEMORY_BYTES = 4_000_000_000
# What the window holds per attention entry besides the trace: the stage on screen draws
# each of its h·n² cells from a display copy and an 8-bit image (views/stage/stage_scene).
DISPLAY_BYTES_PER_CELL = 12


@dataclass(frozen=True)
class Config:
    """Shapes and switches of one multi-head attention layer.

    `scale=None` means the textbook 1/sqrt(d_k); any positive number replaces it.
    `h_kv` key/value heads are shared by `h // h_kv` query heads each (GQA; 1 is MQA).
    `rope` rotates Q and K after projection (Hugging Face's convention, base `rope_theta`,
    optional Llama 3 `rope_scaling`; needs an even d_k). `ablate` lists query heads whose
    Z_i is replaced by zeros (their weights are still computed); it is normalised to a
    sorted tuple of distinct indices. The defaults reproduce the textbook layer.
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
    rope: bool = False
    rope_theta: float = DEFAULT_THETA
    rope_scaling: dict | None = None
    ablate: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.h_kv is None:
            object.__setattr__(self, "h_kv", self.h)
        # Normalised copies: a caller mutating their dict/list later cannot change us.
        object.__setattr__(self, "rope_scaling", validate_scaling(self.rope_scaling))
        object.__setattr__(self, "rope_theta", validate_theta(self.rope_theta))
        object.__setattr__(self, "ablate", ablate_heads(self.ablate, None))
        self.validate()

    def __hash__(self) -> int:  # rope_scaling is a dict: hash its items instead
        scaling = None if self.rope_scaling is None else tuple(self.rope_scaling.items())
        return hash(
            tuple(getattr(self, f.name) for f in fields(self) if f.name != "rope_scaling")
            + (scaling,)
        )

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
        for name in ("causal", "bias", "rope"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.scale is not None:
            if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)):
                raise ValueError(f"scale must be a number or null, got {self.scale!r}")
            if not math.isfinite(self.scale) or self.scale <= 0:
                raise ValueError(f"scale must be a positive finite number, got {self.scale}")
        if self.rope:
            check_head_width(self.d_k)
        ablate_heads(self.ablate, self.h)
        need = self.bytes_needed()
        if need > MAX_MEMORY_BYTES:
            raise ValueError(
                f"n={self.n}, d_model={self.d_model}, h={self.h}, d_k={self.d_k}, d_v={self.d_v} "
                f"needs {need / 1e9:.1f} GB (h·n² = {self.h * self.n**2:,} attention entries); "
                f"the limit is {MAX_MEMORY_BYTES / 1e9:.1f} GB: use fewer tokens, heads or features"
            )

    def bytes_needed(self) -> int:
        """The memory the window needs for this layer at its peak: two traces (a change
        of the session computes the new one while the old one is still shown), the undo
        step of that change (the session before and after it), and the display of the
        stage on screen. One forward's arrays alone (`values_in_memory`) were half of it:
        BERT-base at n = 4096 was let in at an estimated 3.7 GB and reached 8.6 GB."""
        session = sum(math.prod(shape) for shape in self.parameter_shapes().values())
        traces = 2 * self.values_in_memory()
        return 8 * (traces + 2 * session) + DISPLAY_BYTES_PER_CELL * self.h * self.n**2

    def values_in_memory(self) -> int:
        """Numbers held for one forward pass: X, the weights and every intermediate."""
        n, d, h, kv, dk, dv = self.n, self.d_model, self.h, self.h_kv, self.d_k, self.d_v
        weights = h * d * dk + kv * d * (dk + dv) + 2 * h * dv * d  # W_O and its copy
        intermediates = h * n * dk + kv * n * (dk + dv) + 2 * h * n * n + 2 * h * n * dv
        if self.rope:  # the rotated Q and K are kept beside the projections
            intermediates += (h + kv) * n * dk
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

    @property
    def rope_spec(self) -> RoPE | None:
        """What forward(rope=...) takes for this config: None when RoPE is off."""
        return RoPE.make(self.rope_theta, self.rope_scaling) if self.rope else None

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
        """Plain JSON-ready values. The RoPE and ablation keys appear only when they differ
        from their defaults, so files of sessions that use neither stay as they were."""
        data = asdict(self)
        data["ablate"] = list(self.ablate)
        for name in OPTIONAL_KEYS:
            if data[name] == DEFAULTS[name]:
                del data[name]
        return data

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
        """A validated copy; dimension names follow the dataclass fields.

        Fewer heads drop the ablated heads that no longer exist (unless `ablate` is given).
        """
        if "h" in changes and "ablate" not in changes:
            h = changes["h"]
            if isinstance(h, int) and not isinstance(h, bool):
                changes["ablate"] = tuple(i for i in self.ablate if i < h)
        return replace(self, **changes)


# Keys added after the first file format: written only when not at their default.
OPTIONAL_KEYS = ("rope", "rope_theta", "rope_scaling", "ablate")
DEFAULTS = {"rope": False, "rope_theta": DEFAULT_THETA, "rope_scaling": None, "ablate": []}


def ablate_heads(heads, h: int | None) -> tuple[int, ...]:
    """Query-head indices to switch off, as a sorted tuple of distinct ints in 0..h-1.

    `h=None` checks only that they are whole numbers ≥ 0 (the range is checked once h is
    known). Any iterable of ints is accepted (a JSON list, a set, a tuple).
    """
    if heads is None:
        return ()
    if isinstance(heads, (str, bytes, dict)) or not hasattr(heads, "__iter__"):
        raise ValueError(f"ablate must be a list of query-head indices, got {heads!r}")
    out = set()
    for i in heads:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise ValueError(f"ablate must hold whole-number head indices, got {i!r}")
        i = int(i)
        if i < 0 and h is None:
            raise ValueError(f"ablate head {i} is out of range: head indices are 0 or more")
        if i < 0 or (h is not None and i >= h):
            raise ValueError(out_of_range("ablate head", i, h, "query heads"))
        out.add(i)
    return tuple(sorted(out))
