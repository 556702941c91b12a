"""How fast is forward() compared with the matrix products it cannot avoid?

Prints, for each shape and dtype, the median time of
  forward()       the public API: validation, fresh buffers, every intermediate
  reuse           forward(..., out=previous_trace): buffers kept between calls
  GEMM floor      only X·W (Q, K, V), Q·Kᵀ, A·V and H·W_O, into preallocated outputs
  torch           torch.nn.functional.multi_head_attention_forward on the CPU (if installed)
and the ratios to the floor measured in the same run (machines are shared and noisy:
compare ratios, not absolute times). Run with `make bench`.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from mha_gui.engine import forward

SHAPES = [
    ("toy", 4, 4, 2),
    ("causal-6x16", 6, 16, 4),
    ("bert n=128", 128, 768, 12),
    ("bert n=512", 512, 768, 12),
]


def median_time(fn, budget=1.5, min_runs=5, max_runs=200) -> float:
    fn()  # warm up
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (time.perf_counter() - start < budget and len(times) < max_runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def make(n, d_model, h, dtype):
    rng = np.random.default_rng(0)
    d = d_model // h
    return dict(
        x=rng.normal(size=(n, d_model)).astype(dtype),
        w_q=(rng.normal(size=(h, d_model, d)) / np.sqrt(d_model)).astype(dtype),
        w_k=(rng.normal(size=(h, d_model, d)) / np.sqrt(d_model)).astype(dtype),
        w_v=(rng.normal(size=(h, d_model, d)) / np.sqrt(d_model)).astype(dtype),
        w_o=(rng.normal(size=(h * d, d_model)) / np.sqrt(d_model)).astype(dtype),
    )


def gemm_floor(p):
    x, n = p["x"], p["x"].shape[0]
    h, d_model, d = p["w_q"].shape
    packed = [
        w.transpose(1, 0, 2).reshape(d_model, h * d).copy() for w in (p["w_q"], p["w_k"], p["w_v"])
    ]
    proj = [np.empty((n, h * d), x.dtype) for _ in range(3)]
    q3 = np.empty((h, n, d), x.dtype)
    k3 = np.empty((h, n, d), x.dtype)
    v3 = np.empty((h, n, d), x.dtype)
    s = np.empty((h, n, n), x.dtype)
    z = np.empty((h, n, d), x.dtype)
    hcat = np.empty((n, h * d), x.dtype)
    y = np.empty((n, d_model), x.dtype)
    q3[...] = k3[...] = v3[...] = hcat[...] = 0.1
    s[...] = 1.0 / n

    def run():
        for w, o in zip(packed, proj, strict=True):
            np.matmul(x, w, out=o)
        np.matmul(q3, k3.transpose(0, 2, 1), out=s)
        np.matmul(s, v3, out=z)
        np.matmul(hcat, p["w_o"], out=y)

    return run


def reuse_runner(p):
    """forward(..., out=previous): the same API, buffers kept between calls."""
    previous = forward(**p)
    return lambda: forward(**p, out=previous)


def torch_runner(p):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.set_grad_enabled(False)
    x = p["x"]
    n, d_model = x.shape
    h, _, d = p["w_q"].shape
    packed = [w.transpose(1, 0, 2).reshape(d_model, h * d) for w in (p["w_q"], p["w_k"], p["w_v"])]
    in_proj = torch.from_numpy(np.concatenate(packed, axis=1).T.copy())
    out_proj = torch.from_numpy(p["w_o"].T.copy())
    xt = torch.from_numpy(x.copy()).unsqueeze(1)  # (n, batch=1, d_model)

    def run():
        F.multi_head_attention_forward(
            xt,
            xt,
            xt,
            d_model,
            h,
            in_proj,
            None,
            None,
            None,
            False,
            0.0,
            out_proj,
            None,
            training=False,
            need_weights=True,
            average_attn_weights=False,
        )

    return run


def scrub_step_times(n: int, d_model: int, h: int) -> tuple[float, float]:
    """One W_Q cell of one head edited: incremental refresh vs a full forward()."""
    from mha_gui.engine.incremental import IncrementalTrace
    from mha_gui.engine.presets import random_session

    session = random_session(seed=0, tokens=n, d_model=d_model, heads=h)
    inc = IncrementalTrace(session)
    inc.refresh()
    w = session.params.W_Q
    state = {"v": 0.0}

    def step():
        state["v"] = 0.1 - state["v"]
        w[3, 0, 0] = state["v"]
        inc.mark("W_Q", 3)
        inc.refresh()

    return median_time(step), median_time(session.run)


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    rows = [
        f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')}, {i.get('num_threads')} threads)"
        for i in threadpool_info()
    ]
    return "; ".join(rows) or "unknown"


def main() -> int:
    print(f"numpy {np.__version__}; BLAS: {blas_info()}")
    header = f"{'shape':<14}{'dtype':<9}{'forward':>11}{'reuse':>11}{'floor':>11}{'torch':>11}{'fwd/floor':>11}{'reuse/floor':>12}{'torch/fwd':>11}"
    print(header)
    print("-" * len(header))
    for label, n, d_model, h in SHAPES:
        for dtype in (np.float64, np.float32):
            p = make(n, d_model, h, dtype)
            t_fwd = median_time(lambda p=p: forward(**p))
            t_reuse = median_time(reuse_runner(p))
            t_floor = median_time(gemm_floor(p))
            tr = torch_runner(p)
            t_torch = median_time(tr) if tr else float("nan")
            ms = lambda s: f"{s * 1e3:9.3f}ms"  # noqa: E731
            print(
                f"{label:<14}{np.dtype(dtype).name:<9}{ms(t_fwd):>11}{ms(t_reuse):>11}{ms(t_floor):>11}"
                f"{ms(t_torch) if tr else 'n/a':>11}{t_fwd / t_floor:>10.2f}×{t_reuse / t_floor:>11.2f}×"
                f"{(t_torch / t_fwd) if tr else float('nan'):>10.2f}×"
            )
            sys.stdout.flush()
    print(
        "\nGUI scrub step (one W_Q cell of one head, float64): incremental refresh vs full forward"
    )
    for n in (128, 512):
        inc, full = scrub_step_times(n, 768, 12)
        print(
            f"  n={n:<4} d_model=768 h=12: {inc * 1e3:8.3f} ms vs {full * 1e3:8.3f} ms  ({full / inc:.1f}× less work)"
        )
    print(
        "\nfwd/floor and reuse/floor: 1.00× would be pure BLAS; torch/fwd > 1 means we are faster."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
