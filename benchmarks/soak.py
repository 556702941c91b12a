"""Soak the real main window: the seeded random user of tests/views/random_user.py for
tens of thousands of actions across seeds, offscreen, each seed in its own process with
faulthandler on (a segfault ends that seed's run with its last actions and the
faulting thread's stack, and the soak goes on with the next seed).

Prints, per seed as it ends, the actions done, the seconds, actions per second and the
child's peak RSS, then every failure — uncaught exceptions, Qt painter warnings and
worse, crashes, a trace that differs from a fresh forward — the first of each kind in
full with the action it came during (the action log and stderr of every seed are kept
in --log-dir, with summary.json), and what was only noted (Qt's info messages, Python
warnings). Exit status 1 when anything failed. A dimension's maximum is its true limit
(n = 4096, d_model = 8192, …) unless --suite-limits. Machines are shared and noisy: the
load average is printed too; --jobs runs that many seeds at a time.

    .venv/bin/python benchmarks/soak.py [--actions 20000] [--seeds 10] [--first-seed 0]
                                        [--seed-list 3,7] [--presets toy,causal-6x16,gqa]
                                        [--jobs 2] [--suite-limits] [--log-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.views.random_user import describe, run_in_subprocess  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=20_000, help="in all, across seeds")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--seed-list", default="", help="only these seeds (e.g. those to run again after a fix)"
    )
    parser.add_argument("--presets", default="toy,causal-6x16", help="taken in turn by seed")
    parser.add_argument("--jobs", type=int, default=1, help="seeds run at a time")
    parser.add_argument("--suite-limits", action="store_true", help="the suite's maxima")
    parser.add_argument("--log-dir", default=None, help="where each seed's action log goes")
    args = parser.parse_args(argv)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    logs = Path(args.log_dir or tempfile.mkdtemp(prefix="mha-soak-"))
    logs.mkdir(parents=True, exist_ok=True)
    per_seed = max(1, args.actions // args.seeds)
    every = [args.first_seed + k for k in range(args.seeds)]
    chosen = [int(s) for s in args.seed_list.split(",") if s.strip()] or every
    # a seed keeps its preset whether run with all the others or again alone
    plan = [(seed, presets[(seed - args.first_seed) % len(presets)]) for seed in chosen]
    print(
        f"soak: {per_seed} actions × {len(plan)} seeds, {args.jobs} at a time, "
        f"{'suite' if args.suite_limits else 'true'} limits, logs in {logs}",
        flush=True,
    )
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    results, start = [], time.monotonic()

    def one(seed: int, preset: str) -> dict:
        log = logs / f"{preset}-seed{seed}.log"
        log.unlink(missing_ok=True)
        return run_in_subprocess(
            preset, seed, per_seed, str(log), timeout=6 * 3600, suite_limits=args.suite_limits
        )

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(one, seed, preset) for seed, preset in plan]
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            rate = result["actions"] / max(result["seconds"], 1e-9)
            kinds = sum(result.get("counts", {}).values()) or len(result["failures"])
            print(
                f"{result['preset']:>12} seed {result['seed']:3d}: {result['actions']:6d} actions "
                f"in {result['seconds']:8.1f} s ({rate:5.1f}/s), peak RSS "
                f"{result.get('peak_rss_mb', float('nan')):7.0f} MB, {kinds} failures; "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    seconds = time.monotonic() - start
    actions = sum(r["actions"] for r in results)
    failed = [r for r in results if r["failures"]]
    crashes = sum(1 for r in results for f in r["failures"] if f["kind"] == "crash")
    painter = sum(
        count
        for r in results
        for key, count in r.get("counts", {}).items()
        if key.startswith("qt:") and "ainter" in key
    )
    peak = max((r.get("peak_rss_mb", 0.0) for r in results), default=0.0)
    print(
        f"\nin all: {actions} actions in {seconds:.0f} s ({actions / max(seconds, 1e-9):.1f}/s), "
        f"{len(failed)} of {len(results)} seeds failed, {crashes} crashed, {painter} painter "
        f"warnings, peak RSS {peak:.0f} MB; load average at the end: {os.getloadavg()[0]:.1f}"
    )
    notes: dict[str, int] = {}
    for result in results:
        for key, count in result.get("notes", {}).items():
            notes[key] = notes.get(key, 0) + count
    if notes:
        print("\nnoted, not failed (Qt's other messages, Python warnings):")
        for key, count in sorted(notes.items(), key=lambda kv: -kv[1]):
            print(f"  {count:7d} × {key}")
    for result in failed:
        print("\n" + describe(result))
    summary = {"actions": actions, "seconds": round(seconds), "peak_rss_mb": peak}
    summary.update(crashes=crashes, painter_warnings=painter, results=results)
    tmp = logs / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    tmp.replace(logs / "summary.json")  # atomically
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
