"""What `mha-gui info` prints about a layer: shapes, parameters, FLOPs per stage, memory,
K/V cache. Plain text from the engine's numbers, so the window's statistics panel can
show exactly the same lines."""

from __future__ import annotations

from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.panels.stats import human, layer_stats


def info_text(session: Session) -> str:
    c = session.config
    st = layer_stats(c)
    g = "g" if c.variant != "MHA" else "i"
    rows = [
        ("X", "input", (c.n, c.d_model)),
        ("W_i^Q", f"× {c.h} heads", (c.d_model, c.d_k)),
        (f"W_{g}^K", f"× {c.h_kv} K/V heads", (c.d_model, c.d_k)),
        (f"W_{g}^V", f"× {c.h_kv} K/V heads", (c.d_model, c.d_v)),
        ("W_O", "output projection", (c.h * c.d_v, c.d_model)),
        ("Q_i", "queries, per head", (c.n, c.d_k)),
        (f"K_{g}", "keys, per K/V head", (c.n, c.d_k)),
        (f"V_{g}", "values, per K/V head", (c.n, c.d_v)),
        ("S_i", "scaled scores", (c.n, c.n)),
        ("A_i", "attention weights", (c.n, c.n)),
        ("Z_i", "head output", (c.n, c.d_v)),
        ("H", "concatenation", (c.n, c.h * c.d_v)),
        ("Y", "output", (c.n, c.d_model)),
    ]
    if c.bias:
        rows[5:5] = [
            ("b_i^Q", f"× {c.h}", (c.d_k,)),
            (f"b_{g}^K", f"× {c.h_kv}", (c.d_k,)),
            (f"b_{g}^V", f"× {c.h_kv}", (c.d_v,)),
            ("b_O", "", (c.d_model,)),
        ]
    scale = "1/√d_k" if c.scale is None else f"{c.scale:g}"
    out = [f"source: {session.source}"] if session.source else []
    out += [
        f"{c.variant}: n={c.n} tokens, d_model={c.d_model}, h={c.h} query heads, "
        f"h_kv={c.h_kv} K/V heads, d_k={c.d_k}, d_v={c.d_v}",
        f"scale={scale} ({c.effective_scale:.4g}), causal={'yes' if c.causal else 'no'}, "
        f"biases={'yes' if c.bias else 'no'}{_switches_text(c)}",
        f"tokens: {' '.join(session.tokens[:16])}{' …' if c.n > 16 else ''}",
        "",
        "shapes:",
    ]
    for sym, what, shape in rows:
        out.append(f"  {sym:<7} {' × '.join(str(s) for s in shape):<14} {what}")
    out += [
        "",
        f"parameters: {st.parameters:,}",
        "FLOPs per stage (multiply-add = 2):",
    ]
    for s in STAGES:
        out.append(f"  {s.index} {s.name:<12} {st.flops[s.name]:>16,}  ({human(st.flops[s.name])})")
    out.append(f"  {'total':<14} {st.total_flops:>16,}  ({human(st.total_flops)})")
    out += [
        "",
        f"attention matrix entries h·n²: {st.attention_entries:,}",
        f"memory of all intermediates: {human(st.trace_values * 8, 'B')} as float64, "
        f"{human(st.trace_values * 4, 'B')} as float32",
        f"K/V cache per token: h_kv·(d_k+d_v) = {st.kv_cache_per_token:,} numbers",
    ]
    return "\n".join(out)


def _switches_text(c) -> str:
    """`, RoPE θ=10000 (llama3 ×8), heads 1,3 off` — only the switches that are on."""
    text = ""
    if c.rope:
        scaling = c.rope_scaling
        extra = "" if scaling is None else f" (llama3 ×{scaling['factor']:g})"
        text += f", RoPE θ={c.rope_theta:g}{extra}"
    if c.ablate:
        text += f", heads {','.join(map(str, c.ablate))} off"
    return text
