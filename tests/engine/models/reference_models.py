"""An independent reference for every family, written from the published formulas.

Straightforward loops (per head, per query, per pair of RoPE features), plain math, and
none of the package's code (RoPE: the per-pair rotation of tests/engine/reference.py): what `open_layer` returns is compared with it layer by layer.
Returns, for every layer, the attention's input X, its weights A (h, n, n) and its output
Y (after the output projection and its bias, before any residual).
"""

from __future__ import annotations

import math

import numpy as np

from tests.engine.reference import reference_inv_freq, reference_rotate


def _ln(x, w, b, eps):
    out = np.empty_like(x)
    for t in range(x.shape[0]):
        mu = sum(x[t]) / len(x[t])
        var = sum((v - mu) ** 2 for v in x[t]) / len(x[t])
        out[t] = (x[t] - mu) / math.sqrt(var + eps) * w + b
    return out


def _rms(x, w, eps):
    out = np.empty_like(x)
    for t in range(x.shape[0]):
        ms = sum(v * v for v in x[t]) / len(x[t])
        out[t] = x[t] / math.sqrt(ms + eps) * w
    return out


def _gelu_tanh(v):
    return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))


def _gelu_erf(v):
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def _silu(v):
    return v / (1 + math.exp(-v))


def _apply(f, x):
    return np.array([[f(float(v)) for v in row] for row in x])


def _attention(q_heads, k_heads, v_heads, blocked, scale):
    """Per-head softmax attention with loops; returns A (h, n, n) and Z (h, n, d_v)."""
    h, n = len(q_heads), q_heads[0].shape[0]
    group = h // len(k_heads)
    A = np.zeros((h, n, n))
    Z = np.zeros((h, n, v_heads[0].shape[1]))
    for i in range(h):
        q, k, v = q_heads[i], k_heads[i // group], v_heads[i // group]
        for a in range(n):
            scores = [
                float(q[a] @ k[b]) * scale if not blocked(a, b) else -math.inf for b in range(n)
            ]
            top = max(scores)
            e = [math.exp(s - top) if s != -math.inf else 0.0 for s in scores]
            total = sum(e)
            A[i, a] = [v_ / total for v_ in e]
            Z[i, a] = sum(A[i, a, b] * v[b] for b in range(n))
    return A, Z


def reference_layers(cfg: dict, w: dict[str, np.ndarray], ids: list[int]):
    family = cfg["model_type"]
    out = []
    if family == "gpt2":
        d, h = cfg["n_embd"], cfg["n_head"]
        dk = d // h
        x = np.array([w["wte.weight"][t] + w["wpe.weight"][p] for p, t in enumerate(ids)])
        eps = cfg["layer_norm_epsilon"]
        for i in range(cfg["n_layer"]):
            p = f"h.{i}."
            a = _ln(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
            qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
            heads = [
                [qkv[:, s * d + j * dk : s * d + (j + 1) * dk] for j in range(h)] for s in range(3)
            ]
            A, Z = _attention(*heads, lambda q, k: k > q, 1 / math.sqrt(dk))
            y = (
                np.concatenate(list(Z), axis=1) @ w[p + "attn.c_proj.weight"]
                + w[p + "attn.c_proj.bias"]
            )
            out.append((a, A, y))
            x = x + y
            m = _ln(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
            m = _apply(_gelu_tanh, m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
            x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        return out
    if family == "bert":
        d, h = cfg["hidden_size"], cfg["num_attention_heads"]
        dk, eps = d // h, cfg["layer_norm_eps"]
        e = "embeddings."
        x = np.array(
            [
                w[e + "word_embeddings.weight"][t]
                + w[e + "position_embeddings.weight"][p]
                + w[e + "token_type_embeddings.weight"][0]
                for p, t in enumerate(ids)
            ]
        )
        x = _ln(x, w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], eps)
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def proj(part, p=p, x=x):
                full = (
                    x @ w[p + f"attention.self.{part}.weight"].T
                    + w[p + f"attention.self.{part}.bias"]
                )
                return [full[:, j * dk : (j + 1) * dk] for j in range(h)]

            A, Z = _attention(
                proj("query"), proj("key"), proj("value"), lambda q, k: False, 1 / math.sqrt(dk)
            )
            y = np.concatenate(list(Z), axis=1) @ w[p + "attention.output.dense.weight"].T
            y = y + w[p + "attention.output.dense.bias"]
            out.append((x, A, y))
            x = _ln(
                x + y,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            m = _apply(
                _gelu_erf,
                x @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"],
            )
            m = m @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
            x = _ln(x + m, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        return out
    # Llama, Mistral, Qwen2
    d, h, kv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dk = cfg.get("head_dim") or d // h
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta") or cfg.get("rope_parameters", {}).get("rope_theta", 10000.0)
    freqs = reference_inv_freq(dk, theta, cfg.get("rope_scaling"))
    window = cfg.get("sliding_window")
    if family == "qwen2" and not cfg.get("use_sliding_window"):
        window = None
    x = np.array([w["embed_tokens.weight"][t] for t in ids])
    for i in range(cfg["num_hidden_layers"]):
        p = f"layers.{i}."
        win = (
            window
            if (family == "mistral" or (family == "qwen2" and i >= cfg["max_window_layers"]))
            else None
        )
        a = _rms(x, w[p + "input_layernorm.weight"], eps)

        def proj(name, heads, rotate, p=p, a=a):
            full = a @ w[p + f"self_attn.{name}.weight"].T
            if p + f"self_attn.{name}.bias" in w:
                full = full + w[p + f"self_attn.{name}.bias"]
            hs = [full[:, j * dk : (j + 1) * dk] for j in range(heads)]
            if rotate:
                hs = [
                    np.array([reference_rotate(row, pos, freqs) for pos, row in enumerate(m)])
                    for m in hs
                ]
            return hs

        def blocked(q, k, win=win):
            return k > q or (win is not None and q - k >= win)

        A, Z = _attention(
            proj("q_proj", h, True),
            proj("k_proj", kv, True),
            proj("v_proj", kv, False),
            blocked,
            1 / math.sqrt(dk),
        )
        y = np.concatenate(list(Z), axis=1) @ w[p + "self_attn.o_proj.weight"].T
        if p + "self_attn.o_proj.bias" in w:
            y = y + w[p + "self_attn.o_proj.bias"]
        out.append((a, A, y))
        x = x + y
        m = _rms(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = _apply(_silu, m @ w[p + "mlp.gate_proj.weight"].T)
        x = x + (gate * (m @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    return out
