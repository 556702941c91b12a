"""Sizes and costs of a layer: parameters, FLOPs per stage, memory of the intermediates.

These are the numbers behind the textbook's claims (the attention matrix has h·n²
entries; splitting d_model into heads keeps the parameter count), computed for the
user's own configuration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from mha_gui.engine.layer.config import Config
from mha_gui.engine.panels.stages import STAGES


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
    flops = {s.name: s.flops(c) for s in STAGES}  # each stage counts its own (stages.py)
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


# ---------------------------------------------------------- MHA / GQA / MQA ----------
@dataclass(frozen=True)
class KvVariant:
    """The layer with `h_kv` key/value heads instead of its own (everything else kept)."""

    h_kv: int
    variant: str  # "MHA", "GQA" or "MQA"
    parameters: int
    kv_cache_per_token: int  # numbers: h_kv·(d_k + d_v), as LayerStats
    kv_cache: int  # numbers for all n tokens: n·h_kv·(d_k + d_v)
    current: bool  # the layer's own h_kv

    @property
    def label(self) -> str:
        return self.variant if self.variant != "GQA" else f"GQA ({self.h_kv} K/V heads)"

    def groups(self, h: int) -> list[range]:
        """The query heads that share each K/V head: head i reads K/V head i // (h/h_kv)."""
        per = h // self.h_kv
        return [range(g * per, (g + 1) * per) for g in range(self.h_kv)]


MAX_GQA_SHOWN = 4


def gqa_choices(h: int, current: int | None = None, limit: int = MAX_GQA_SHOWN) -> list[int]:
    """The GQA head counts worth comparing: every divisor of h strictly between 1 and h
    when there are at most `limit`, else `limit` of them spread evenly on a log scale —
    always including `current` when it is a GQA count. Largest first (MHA → MQA order)."""
    between = [g for g in range(h - 1, 1, -1) if h % g == 0]
    if len(between) <= limit:
        return between
    picks = {between[round(k * (len(between) - 1) / (limit - 1))] for k in range(limit)}
    if current in between and current not in picks:
        # replace the pick nearest to it, so the row count stays `limit`
        nearest = min(picks, key=lambda g: abs(math.log(g) - math.log(current)))
        picks = (picks - {nearest}) | {current}
    return sorted(picks, reverse=True)


def kv_variants(config: Config, limit: int = MAX_GQA_SHOWN) -> list[KvVariant]:
    """MHA (h_kv = h), GQA choices and MQA (h_kv = 1) for this layer at its n, largest
    cache first; one entry per distinct h_kv (h = 1 has only one)."""
    c = config
    counts = [c.h, *gqa_choices(c.h, c.h_kv, limit), 1]
    if c.h_kv not in counts:  # cannot happen (h_kv divides h), kept for safety
        counts.append(c.h_kv)
    out = []
    for g in sorted(set(counts), reverse=True):
        other = replace(c, h_kv=g)
        per_token = g * (c.d_k + c.d_v)
        out.append(
            KvVariant(
                h_kv=g,
                variant=other.variant,
                parameters=parameter_count(other),
                kv_cache_per_token=per_token,
                kv_cache=c.n * per_token,
                current=g == c.h_kv,
            )
        )
    return out


# ------------------------------------------------------------- the stats panel -------
def flops_share(stats: LayerStats) -> dict[str, float]:
    """Each stage's fraction of the total FLOPs (0 for all when the total is 0)."""
    total = stats.total_flops
    return {k: (v / total if total else 0.0) for k, v in stats.flops.items()}
