"""An independent, deliberately plain multi-head attention: loops, no buffers, no tricks.

Written straight from the equations in DESIGN.md (one head at a time, one query row at a
time) so that the engine's batched, in-place implementation is checked against
something that shares none of its code.
"""

import math

import numpy as np


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
):
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
    scores, weights, heads = [], [], []
    for i in range(h):
        g = i // per_group
        s = np.zeros((n, n))
        a = np.zeros((n, n))
        for r in range(n):
            allowed = []
            for c in range(n):
                blocked = (mask is not None and mask[r, c]) or (causal and c > r)
                s[r, c] = -np.inf if blocked else scale * float(np.dot(q[i][r], k[g][c]))
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
        heads.append(a @ v[g])
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
    )
