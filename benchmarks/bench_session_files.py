"""How long a large session takes to save, autosave and open, and how long it holds the GIL.

A random layer of n = 2048 tokens, d_model 768, 12 heads (3.5 M numbers; the size the
window's watchdog is measured at) is written and read back:

  save       save_session(), what File ▸ Save of a small layer and the CLI call
  autosave   write_session_gently() on a worker thread, as the autosave and the
             background File ▸ Save run it
  open       load_session(), what File ▸ Open calls

Each is timed (wall clock, the median of `--repeats` runs). Beside the worker-thread
runs a ticker thread asks to wake every 10 ms; the worst gap between its ticks, less the
10 ms, is how long the window's event loop could have waited for the interpreter lock
(the same ticker with nothing else running gives the machine's own noise, printed
first). Usage: python benchmarks/bench_session_files.py [--tokens N] [--repeats K]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from mha_gui.engine.layer.presets import random_session
from mha_gui.engine.layer.session import load_session, save_session, write_session_gently

TICK = 0.010


class Ticker:
    """A thread that sleeps TICK at a time and records the longest gap between wake-ups."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(TICK)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - TICK)
            last = now

    def __enter__(self) -> Ticker:
        self._thread.start()
        time.sleep(3 * TICK)  # let it settle
        self.worst = 0.0
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def on_worker(fn):
    """Run fn() on a worker thread beside a ticker; (wall seconds, worst tick gap)."""
    result: list[float] = []

    def work() -> None:
        t0 = time.perf_counter()
        fn()
        result.append(time.perf_counter() - t0)

    with Ticker() as ticker:
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
    return result[0], ticker.worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--d-model", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    session = random_session(seed=0, tokens=args.tokens, d_model=args.d_model, heads=args.heads)
    session.params.X[0, 0] = 0.1 + 0.2  # a float without a short decimal form
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"n={args.tokens}, d_model={args.d_model}, {args.heads} heads: "
        f"{sum(a.size for a in session.params.as_dict().values()) / 1e6:.2f} M numbers; "
        f"load average {load:.1f}"
    )
    with Ticker() as idle:
        time.sleep(1.0)
    print(f"ticker alone: worst gap {idle.worst * 1e3:.1f} ms over 1 s (the machine's noise)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "large.json"
        rows = {"save": [], "autosave": [], "open": []}
        gaps = {"save": [], "autosave": [], "open": []}
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            save_session(session, path)
            rows["save"].append(time.perf_counter() - t0)
            wall, gap = on_worker(lambda: save_session(session, path))
            gaps["save"].append(gap)
            wall, gap = on_worker(lambda: write_session_gently(session, path))
            rows["autosave"].append(wall)
            gaps["autosave"].append(gap)
            t0 = time.perf_counter()
            back = load_session(path)
            rows["open"].append(time.perf_counter() - t0)
            wall, gap = on_worker(lambda: load_session(path))
            gaps["open"].append(gap)
        size = path.stat().st_size
        exact = all(
            np.array_equal(getattr(back.params, k), v) for k, v in session.params.as_dict().items()
        )
    print(f"file: {size / 1e6:.1f} MB; read back bit-exactly: {exact}")
    print(f"{'':<10}{'median':>10}{'worst':>10}{'worst GIL gap (on a thread)':>30}")
    for name, times in rows.items():
        print(
            f"{name:<10}{statistics.median(times) * 1e3:>8.0f}ms{max(times) * 1e3:>8.0f}ms"
            f"{max(gaps[name]) * 1e3:>28.1f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
