"""An independent, deliberately plain multi-head attention: loops, no buffers, no tricks.

Written straight from the textbook equations (one head at a time, one query row at a
time) so that the engine's batched, in-place implementation is checked against
something that shares none of its code.
"""

import math

import numpy as np


def reference_inv_freq(d_k, theta=10000.0, scaling=None):
    """RoPE frequencies one at a time: ω_j = θ^(−2j/d_k), then Llama 3's piecewise rule.

    Llama 3 (Meta's `apply_scaling`): a rotation whose wavelength 2π/ω is shorter than
    original_max/high_freq_factor is kept, one longer than original_max/low_freq_factor
    is slowed by `factor`, and in between the two are blended by
    smooth = (original_max/wavelength − low) / (high − low).
    """
    freqs = [1.0 / theta ** (2 * j / d_k) for j in range(d_k // 2)]
    if scaling is None or scaling.get("rope_type", scaling.get("type")) == "default":
        return freqs
    factor = scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    out = []
    for f in freqs:
        wavelength = 2 * math.pi / f
        if wavelength < old / high:
            out.append(f)
        elif wavelength > old / low:
            out.append(f / factor)
        else:
            smooth = (old / wavelength - low) / (high - low)
            out.append((1 - smooth) * f / factor + smooth * f)
    return out


def reference_rotate(vec, position, freqs):
    """Rotate one query/key vector to `position`, one 2×2 rotation per frequency.

    Hugging Face pairs feature j with feature j + d/2 (not 2j with 2j+1):
        [y_j      ]   [cos a  −sin a] [x_j      ]
        [y_{j+d/2}] = [sin a   cos a] [x_{j+d/2}],   a = position · ω_j
    """
    half = len(vec) // 2
    out = np.array(vec, dtype=float)
    for j, w in enumerate(freqs):
        a = position * w
        x1, x2 = vec[j], vec[j + half]
        out[j] = math.cos(a) * x1 - math.sin(a) * x2
        out[j + half] = math.sin(a) * x1 + math.cos(a) * x2
    return out


def reference_forward(
    x,
    w_q,
    w_k,
    w_v,
    w_o,
    b_q=None,
    b_k=None,
    b_v=None,
    b_o=None,
    mask=None,
    causal=False,
    scale=None,
    rope=None,
    ablate=(),
):
    """`rope`: None, or a dict with "theta" and optional "scaling"; `ablate`: query heads
    whose Z_i is zeroed (weights still computed)."""
    n = x.shape[0]
    h, _, d_k = w_q.shape
    h_kv = w_k.shape[0]
    per_group = h // h_kv
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    q, k, v = [], [], []
    for i in range(h):
        q.append(x @ w_q[i] + (0 if b_q is None else b_q[i]))
    for g in range(h_kv):
        k.append(x @ w_k[g] + (0 if b_k is None else b_k[g]))
        v.append(x @ w_v[g] + (0 if b_v is None else b_v[g]))
    q_rot = k_rot = None
    if rope is not None:
        freqs = reference_inv_freq(d_k, rope.get("theta", 10000.0), rope.get("scaling"))
        q_rot = [np.array([reference_rotate(qi[m], m, freqs) for m in range(n)]) for qi in q]
        k_rot = [np.array([reference_rotate(kg[m], m, freqs) for m in range(n)]) for kg in k]
    q_use = q if q_rot is None else q_rot
    k_use = k if k_rot is None else k_rot
    scores, weights, heads = [], [], []
    for i in range(h):
        g = i // per_group
        s = np.zeros((n, n))
        a = np.zeros((n, n))
        for r in range(n):
            allowed = []
            for c in range(n):
                blocked = (mask is not None and mask[r, c]) or (causal and c > r)
                s[r, c] = -np.inf if blocked else scale * float(np.dot(q_use[i][r], k_use[g][c]))
                if not blocked:
                    allowed.append(c)
            if allowed:
                m = max(s[r, c] for c in allowed)
                e = {c: math.exp(s[r, c] - m) for c in allowed}
                total = sum(e.values())
                for c in allowed:
                    a[r, c] = e[c] / total
        scores.append(s)
        weights.append(a)
        heads.append(np.zeros((n, v[g].shape[1])) if i in ablate else a @ v[g])
    concat = np.concatenate(heads, axis=1)
    out = concat @ w_o + (0 if b_o is None else b_o)
    d_v = w_v.shape[2]
    contributions = [heads[i] @ w_o[i * d_v : (i + 1) * d_v] for i in range(h)]
    return dict(
        q=np.array(q),
        k=np.array(k),
        v=np.array(v),
        scores=np.array(scores),
        weights=np.array(weights),
        heads=np.array(heads),
        concat=concat,
        output=out,
        contributions=np.array(contributions),
        q_rot=None if q_rot is None else np.array(q_rot),
        k_rot=None if k_rot is None else np.array(k_rot),
    )
