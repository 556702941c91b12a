"""How fast is forward() compared with the matrix products it cannot avoid, and with PyTorch?

Two ways of timing, both printed:

* After idle (the headline): every call starts after `IDLE` seconds of sleep, as the
  window calls the engine — after a pause, not in a loop. BLAS's and OpenMP's worker
  threads have gone to sleep by then and each call pays for waking them, which a hot
  loop hides (and a loop also leaves threads spinning from the previous call, which
  slows whatever runs next). One round times each runner once, in a rotating order;
  the figure is the median over `ROUNDS` rounds of that round's ratio, so a burst of
  load from another process spoils one round, not the figure.
* Hot loop: the median of back-to-back calls (the old figure, kept beside it).

Runners, per shape and dtype:
  forward    the public API: validation, fresh buffers, every intermediate
  reuse      forward(..., out=previous_trace): buffers kept between calls (the window)
  floor      only the four GEMM groups — X·W for Q, K, V; Q·Kᵀ; A·V; H·W_O — into
             preallocated outputs, BLAS on every core: nothing else
  torch      torch.nn.functional.multi_head_attention_forward on the CPU with
             need_weights=True, average_attn_weights=False (weights per head), if
             torch is importable

The BLAS kernel in use (threadpoolctl) is printed with the figures. Machines are shared
and noisy: compare the ratios, not the absolute times. Run with `make bench`, or
`python benchmarks/bench_forward.py --quick` for fewer rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from mha_gui.engine import forward

IDLE = 0.3  # seconds of sleep before each timed call of the after-idle figure
ROUNDS = 9
IDLE_SHAPES = [("bert n=128", 128, 768, 12), ("bert n=512", 512, 768, 12)]
HOT_SHAPES = [("toy", 4, 4, 2), ("causal-6x16", 6, 16, 4), *IDLE_SHAPES]
DTYPES = (np.float64, np.float32)


def median_time(fn, budget=1.5, min_runs=5, max_runs=200) -> float:
    """Median of back-to-back calls (after one warm-up call)."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (time.perf_counter() - start < budget and len(times) < max_runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_after_idle(fn, idle: float = IDLE) -> float:
    """One call of `fn` after `idle` seconds in which this process does nothing."""
    time.sleep(idle)
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


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
    """The four GEMM groups and nothing else, each into a preallocated output."""
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
    """PyTorch's CPU attention with the weights of every head (None without torch)."""
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


def runners(p) -> dict:
    out = {"forward": lambda: forward(**p), "reuse": reuse_runner(p), "floor": gemm_floor(p)}
    tr = torch_runner(p)
    if tr is not None:
        out["torch"] = tr
    return out


def after_idle(p, rounds: int, idle: float) -> dict[str, list[float]]:
    """Per-round times of every runner, each call after `idle` s; the order rotates."""
    run = runners(p)
    for fn in run.values():  # warm up: first-call costs (imports, pools) are not timed
        fn()
        fn()
    names = list(run)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            times[name].append(time_after_idle(run[name], idle))
    return times


def median_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def scrub_step_times(n: int, d_model: int, h: int, name: str = "W_Q") -> tuple[float, float]:
    """One cell edited — of head 3's W_Q, or of X (every head: its row's projections,
    then the pass from the scores on) — incremental refresh vs a full forward()."""
    from mha_gui.engine.attention.incremental import IncrementalTrace
    from mha_gui.engine.layer.presets import random_session

    session = random_session(seed=0, tokens=n, d_model=d_model, heads=h)
    inc = IncrementalTrace(session)
    inc.refresh()
    w = session.params.W_Q if name == "W_Q" else session.params.X
    cell, head = ((3, 0, 0), 3) if name == "W_Q" else ((5, 0), None)
    state = {"v": 0.0}

    def step():
        state["v"] = 0.1 - state["v"]
        w[cell] = state["v"]
        inc.mark(name, head)
        inc.refresh()

    return median_time(step), median_time(session.run)


def blas_info() -> str:
    """Every BLAS/OpenMP library loaded, its kernel (architecture) and thread count."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    rows = []
    for i in threadpool_info():
        kernel = f", kernel {i['architecture']}" if i.get("architecture") else ""
        rows.append(
            f"{i.get('internal_api')} {i.get('version') or ''}{kernel}, {i.get('num_threads')} threads"
        )
    return "; ".join(rows) or "unknown"


def environment() -> str:
    keys = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "OMP_WAIT_POLICY")
    set_ = [f"{k}={os.environ[k]}" for k in keys if k in os.environ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpus} cores, load {load:.1f}; " + (" ".join(set_) or "no OPENBLAS_/OMP_ variables")


COLUMNS = ("fwd/floor", "reuse/floor", "fwd/torch", "reuse/torch")


def print_header(title: str) -> None:
    print(f"\n{title}")
    header = f"{'shape':<14}{'dtype':<9}" + "".join(
        f"{name:>12}" for name in ("forward", "reuse", "floor", "torch", *COLUMNS)
    )
    print(header)
    print("-" * len(header))


def print_row(label: str, dtype, times: dict, ratio) -> None:
    """One shape: the runners' times, then each ratio `ratio(a, b)` of COLUMNS (n/a
    where torch is missing)."""
    cells = [
        f"{times[k] * 1e3:9.2f}ms" if k in times else "n/a"
        for k in ("forward", "reuse", "floor", "torch")
    ]
    for column in COLUMNS:
        a, b = column.replace("fwd", "forward").split("/")
        cells.append(f"{ratio(a, b):.2f}×" if b in times else "n/a")
    print(f"{label:<14}{np.dtype(dtype).name:<9}" + "".join(f"{c:>12}" for c in cells))
    sys.stdout.flush()


def print_after_idle(rounds: int, idle: float) -> None:
    print_header(
        f"After {idle} s idle before every call (times: medians; ratios: the median of "
        f"{rounds} rounds' ratios)"
    )
    measured = []
    for label, n, d_model, h in IDLE_SHAPES:
        for dtype in DTYPES:
            times = after_idle(make(n, d_model, h, dtype), rounds, idle)
            measured.append((label, dtype, times))
            medians = {k: statistics.median(v) for k, v in times.items()}
            print_row(label, dtype, medians, lambda a, b, t=times: median_ratio(t[a], t[b]))
    print("fwd/floor: 1.00× would be pure BLAS; fwd/torch < 1 means we are faster.")
    # On a shared machine another process's burst spoils some calls (a multi-threaded
    # BLAS call waiting for a descheduled thread most of all): each runner's fastest
    # after-idle call is what the same calls take when the machine is quiet.
    print_header("The same calls, each runner's fastest of the rounds (a quiet moment's figure)")
    for label, dtype, times in measured:
        best = {k: min(v) for k, v in times.items()}
        print_row(label, dtype, best, lambda a, b, t=best: t[a] / t[b])


def print_hot_loop() -> None:
    print_header("Hot loop (back-to-back calls; median times and their ratios)")
    for label, n, d_model, h in HOT_SHAPES:
        for dtype in DTYPES:
            run = runners(make(n, d_model, h, dtype))
            t = {k: median_time(fn) for k, fn in run.items()}
            print_row(label, dtype, t, lambda a, b, t=t: t[a] / t[b])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--idle", type=float, default=IDLE)
    parser.add_argument("--quick", action="store_true", help="3 rounds, no hot loop, no scrub")
    parser.add_argument("--idle-only", action="store_true", help="only the after-idle table")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else args.rounds
    print(f"numpy {np.__version__}; {environment()}")
    try:
        import torch

        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    except ImportError:
        print("torch not installed: no torch column")
    print(f"BLAS: {blas_info()}")
    print_after_idle(rounds, args.idle)
    print(f"(BLAS after the run: {blas_info()})")
    if args.quick or args.idle_only:
        return 0
    print_hot_loop()
    print(
        "\nGUI scrub step (one cell of one head's W_Q, or of X; float64): incremental "
        "refresh vs full forward"
    )
    for name in ("W_Q", "X"):
        for n in (128, 512):
            inc, full = scrub_step_times(n, 768, 12, name)
            print(
                f"  {name:3s} n={n:<4} d_model=768 h=12: {inc * 1e3:8.3f} ms vs "
                f"{full * 1e3:8.3f} ms  ({full / inc:.1f}× less work)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
