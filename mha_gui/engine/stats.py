"""Sizes and costs of a layer: parameters, FLOPs per stage, memory of the intermediates.

These are the numbers behind the textbook's claims (the attention matrix has h·n²
entries; splitting d_model into heads keeps the parameter count), computed for the
user's own configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha_gui.engine.config import Config
from mha_gui.engine.stages import STAGES


@dataclass(frozen=True)
class LayerStats:
    parameters: int
    flops: dict[str, int]  # per stage name; a multiply-add counts as 2
    attention_entries: int  # h·n²
    trace_values: int  # every intermediate, in numbers
    kv_cache_per_token: int  # numbers cached per token at inference: h_kv·(d_k + d_v)

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())


def parameter_count(config: Config) -> int:
    """Learned numbers (X is input, not a parameter)."""
    return sum(_prod(shape) for name, shape in config.parameter_shapes().items() if name != "X")


def layer_stats(config: Config) -> LayerStats:
    c = config
    n = c.n
    proj = 2 * n * c.d_model * (c.h * c.d_k + c.h_kv * (c.d_k + c.d_v))
    if c.bias:
        proj += n * (c.h * c.d_k + c.h_kv * (c.d_k + c.d_v))
    flops = {
        "input": 0,
        "projections": proj,
        # the scale multiplies Q (n×d_k per head), then one product per head
        "scores": c.h * n * c.d_k + 2 * c.h * n * n * c.d_k,
        # max, subtract, exp, sum, divide: about five operations per entry
        "weights": 5 * c.h * n * n,
        "mixing": 2 * c.h * n * n * c.d_v,
        "concat": 0,
        "output": 2 * n * c.h * c.d_v * c.d_model + (n * c.d_model if c.bias else 0),
    }
    assert set(flops) == {s.name for s in STAGES}
    trace_values = (
        c.h * n * c.d_k
        + c.h_kv * n * (c.d_k + c.d_v)
        + 2 * c.h * n * n
        + c.h * n * c.d_v
        + n * c.h * c.d_v
        + n * c.d_model
    )
    return LayerStats(
        parameters=parameter_count(c),
        flops=flops,
        attention_entries=c.h * n * n,
        trace_values=trace_values,
        kv_cache_per_token=c.h_kv * (c.d_k + c.d_v),
    )


def _prod(shape) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def human(n: float, unit: str = "") -> str:
    """1234567 → '1.23 M' — for tables a person reads."""
    for factor, suffix in ((1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(n) >= factor:
            return f"{n / factor:.3g}{suffix}{unit}"
    return f"{n:g} {unit}".rstrip() if unit else f"{n:g}"
