"""How long from a user's edit to the repainted window? (offscreen, the real main window)

For each layer size (toy; bert-base n=128 h=12; a random n=512 d_model=768 h=12 layer)
and each stage (weights, output) it times, median over several edits:

  edit → painted   the edit goes in through the document as the editors send it
                   (`set_value(..., merge_key=...)`, like one scrub step), then the event
                   loop runs until the coalesced recompute's `traceChanged` has been
                   handled by every view and the dirty regions have been painted
  + grab           then `attentionView.grab()`: every panel painted again into a pixmap
                   (an upper bound: the real loop only repaints what changed)

for (a) one W_Q cell of head 0 (a scrub step: one head changes), (b) one X cell (every
head changes), (c) one W_O cell (only the output changes); then the stage switch (next
stage round the cycle, and back and forth between weights and output), the inspected
head and the query token; and the number of recomputes per edit, and for 20
edits made in one event-loop turn (must be 1).

Then a 10 ms watchdog timer on the event loop records the largest gap between its ticks
(the worst stall a user would feel) per action on a random n = 2048, d_model 768,
12-head layer: opening it, walking every stage, switching head and query, scrubbing a
W_Q cell — each until everything has settled and painted — then a scrub as a hand makes
it (20 edits of one W_Q cell, 50 ms apart, never waiting for the window), the autosave
and File ▸ Save that follow, and File ▸ Open of the file just saved. Last, `mha-gui --preset toy`
from the command to the first painted window (a subprocess, median of 3).
Machines are shared and noisy: the load average is printed with the numbers.

    .venv/bin/python benchmarks/bench_gui.py [--quick] [--stalls-only] [--scrub-only]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication

WEIGHTS, OUTPUT = 3, 6


def turn(app, *flags) -> None:
    """One turn of the event loop as app.exec makes it: events, then the widgets deleted
    during them. processEvents alone leaves deleteLater's deletions for the next
    QEventLoop.exec, which then paid for every canvas dropped since (File ▸ Open's
    read-while-turning loop measured ~200 ms of other actions' deletions)."""
    app.processEvents(*flags)
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)


class PaintCounter(QObject):
    """Counts paint events of the widgets that draw heatmaps."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


class Bench:
    def __init__(self, app, window):
        self.app, self.window = app, window
        self.doc = window.document
        self.view = window.attention_view
        self.handled = 0
        self._waiting: tuple[QEventLoop, int] | None = None
        # connected after the views: when this runs, every view has handled the signal
        self.doc.traceChanged.connect(self._on_trace)
        self.paints = PaintCounter()
        for canvas in (self.view.canvas, window.query_strip.canvas):
            canvas.viewport().installEventFilter(self.paints)

    def _on_trace(self, _heads) -> None:
        self.handled += 1
        if self._waiting is not None and self.handled >= self._waiting[1]:
            self._waiting[0].quit()

    def settle(self, rounds: int = 4) -> None:
        for _ in range(rounds):
            turn(self.app)

    def settle_all(self, timeout: float = 120.0) -> None:
        """Run the event loop until nothing is pending: a large layer's recompute, a stage
        built in turns, the images prepared (an edit timed before would time those too)."""
        deadline = time.perf_counter() + timeout
        self.settle(4)
        while not settled(self.window) and time.perf_counter() < deadline:
            turn(self.app, QEventLoop.ProcessEventsFlag.AllEvents, 20)
            time.sleep(0.005)
        self.settle(4)

    def run_until_painted(self, expect_trace: bool) -> None:
        """Run the event loop until the views have handled the next report, then painted.
        The loop sleeps while a worker computes, as the window's does: spinning
        processEvents here would take a core and the interpreter lock from the worker
        (on two cores it doubled an n = 512 edit's wall time)."""
        target = self.handled + (1 if expect_trace else 0)
        if self.handled < target:
            loop = QEventLoop()
            self._waiting = (loop, target)
            give_up = QTimer()
            give_up.setSingleShot(True)
            give_up.timeout.connect(loop.quit)
            give_up.start(30_000)
            loop.exec()
            give_up.stop()
            self._waiting = None
        # the scene posts its dirty regions, the viewport then posts its update request
        self.settle(3)

    def timed(self, action, expect_trace: bool, grab: bool = True) -> tuple:
        """(seconds to painted, seconds incl. a full grab, recomputes, CPU seconds of the UI
        thread to painted) of one action. The CPU time is what the window itself spent:
        on a shared machine the wall time also holds the waits for a core."""
        recomputes = self.doc.recompute_count
        t0, cpu0 = time.perf_counter(), time.thread_time()
        action()
        self.run_until_painted(expect_trace)
        t1, cpu1 = time.perf_counter(), time.thread_time()
        if grab:
            self.view.grab()
        t2 = time.perf_counter()
        return t1 - t0, t2 - t0, self.doc.recompute_count - recomputes, cpu1 - cpu0


def fmt(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:7.1f}" if ms < 1000 else f"{ms:7.0f}"


def edit_actions(doc):
    """name → (matrix, index factory): one cell of W_Q head 0, of X, of W_O."""
    c = doc.config
    return {
        "W_Q[0] cell": ("W_Q", lambda k: (0, k % c.d_model, k % c.d_k)),
        "X cell": ("X", lambda k: (k % c.n, k % c.d_model)),
        "W_O cell": ("W_O", lambda k: (k % (c.h * c.d_v), k % c.d_model)),
    }


def bench_edits(bench: Bench, label: str, reps: int, rows: list) -> None:
    doc = bench.doc
    for stage, stage_name in ((WEIGHTS, "weights"), (OUTPUT, "output")):
        doc.set_stage(stage)
        bench.settle_all()
        bench.view.grab()
        for what, (name, index) in edit_actions(doc).items():
            # the user scrubs in that matrix's editor: its dock is the one on top
            bench.window.docks[name].raise_()
            bench.settle(6)
            key = ("bench-scrub", label, stage, name)
            painted, grabbed, recomputes, cpu = [], [], [], []
            for k in range(reps + 1):
                idx = index(k)
                value = float(doc.matrix(name)[idx]) + (0.01 if k % 2 == 0 else -0.01)
                t = bench.timed(
                    lambda n=name, i=idx, v=value, m=key: doc.set_value(n, i, v, merge_key=m), True
                )
                if k:  # the first one warms caches up
                    painted.append(t[0])
                    grabbed.append(t[1])
                    recomputes.append(t[2])
                    cpu.append(t[3])
            rows.append(
                (
                    label,
                    stage_name,
                    what,
                    statistics.median(painted),
                    statistics.median(grabbed),
                    max(recomputes),
                    statistics.median(cpu),
                )
            )
            print(
                f"{label:10s} {stage_name:8s} {what:12s} {fmt(rows[-1][3])} ms "
                f"{fmt(rows[-1][4])} ms {fmt(rows[-1][6])} ms   {rows[-1][5]}",
                flush=True,
            )


def bench_navigation(bench: Bench, label: str, reps: int, rows: list) -> None:
    doc = bench.doc
    c = doc.config
    doc.set_stage(WEIGHTS)
    bench.settle(6)
    times = []
    for _k in range(reps):
        stage = (doc.view.stage + 1) % 7
        times.append(bench.timed(lambda s=stage: doc.set_stage(s), False))
    rows.append((label, "any", "next stage", *_medians(times)))
    times = []
    for k in range(reps):  # Previous / Next between two stages: a kept stage comes back
        stage = OUTPUT if k % 2 == 0 else WEIGHTS
        times.append(bench.timed(lambda s=stage: doc.set_stage(s), False))
    rows.append((label, "3 ↔ 6", "stage back", *_medians(times)))
    doc.set_stage(WEIGHTS)
    bench.settle(6)
    for what, setter, count in (
        ("head select", doc.set_head, c.h),
        ("query select", doc.set_query, c.n),
    ):
        times = []
        for k in range(reps):
            target = (k + 1) % count
            times.append(bench.timed(lambda t=target, f=setter: f(t), False))
        rows.append((label, "weights", what, *_medians(times)))
    for row in rows[-4:]:
        print(
            f"{row[0]:10s} {row[1]:8s} {row[2]:12s} {fmt(row[3])} ms {fmt(row[4])} ms "
            f"{fmt(row[6])} ms",
            flush=True,
        )


def _medians(times):
    """(painted, + grab, recomputes, UI CPU): the medians of the timed actions."""
    return (
        statistics.median(t[0] for t in times),
        statistics.median(t[1] for t in times),
        0,
        statistics.median(t[3] for t in times),
    )


def bench_burst(bench: Bench, label: str) -> str:
    """20 edits in one event-loop turn: how many recomputes and trace signals?"""
    doc = bench.doc
    c = doc.config
    doc.set_stage(WEIGHTS)
    bench.window.docks["W_Q"].raise_()
    bench.settle(6)
    recomputes, handled = doc.recompute_count, bench.handled
    updates = bench.view.update_count
    t0 = time.perf_counter()
    for k in range(20):
        idx = (k % c.h, k % c.d_model, k % c.d_k)
        doc.set_value("W_Q", idx, float(doc.matrix("W_Q")[idx]) + 0.01)
    bench.run_until_painted(True)
    dt = time.perf_counter() - t0
    return (
        f"{label:10s} 20 edits in one turn: {doc.recompute_count - recomputes} recompute(s), "
        f"{bench.handled - handled} traceChanged, {bench.view.update_count - updates} panel "
        f"updates, {fmt(dt)} ms to painted"
    )


class Watchdog(QObject):
    """A 10 ms timer on the event loop: `worst` is the largest gap between two ticks."""

    def __init__(self):
        super().__init__()
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.worst = 0.0
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def reset(self) -> None:
        self.last, self.worst = time.perf_counter(), 0.0


def settled(window) -> bool:
    view = window.attention_view
    return (
        not window.document.busy
        and view.settled
        and not view.building
        and not view.computing.isVisible()
    )


def watched(
    app, window, dog: Watchdog, action, timeout: float = 120.0, until=None
) -> tuple[float, float]:
    """(worst stall, seconds until settled and painted) of one action; `until()`, if
    given, must hold too (the scrub's last edit made, a save written)."""
    dog.reset()
    t0 = time.perf_counter()
    action()
    deadline = t0 + timeout
    quiet = 0
    while time.perf_counter() < deadline and quiet < 3:
        # waits for the next event (the watchdog ticks every 10 ms): no busy loop
        turn(app, QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        done = settled(window) and (until is None or until())
        quiet = quiet + 1 if done else 0
    turn(app)
    return dog.worst, time.perf_counter() - t0


def bench_stalls(
    app, window, quick: bool, scrub_only: bool = False
) -> list[tuple[str, float, float]]:
    from mha_gui.engine.layer.presets import random_session

    doc = window.document
    if scrub_only:  # the layer, then the scrub, the saves and the open only
        dog = Watchdog()
        session = random_session(seed=3, tokens=2048, d_model=768, heads=12)
        watched(app, window, dog, lambda: doc.open_session(session, owned=True))
        rows = bench_scrub(app, window, dog)
        dog.timer.stop()
        return rows
    dog = Watchdog()
    rows = []

    def run(name, action):
        worst, took = watched(app, window, dog, action)
        rows.append((name, worst, took))
        print(f"n=2048 {name:28s} worst stall {fmt(worst)} ms   settled in {fmt(took)} ms")

    session = random_session(seed=3, tokens=2048, d_model=768, heads=12)
    # handed over, as File ▸ Open and presets do (no copy); a caller's session is copied
    run("open (handed over)", lambda: doc.open_session(session, owned=True))
    again = random_session(seed=4, tokens=2048, d_model=768, heads=12)
    run("open again (copied)", lambda: doc.open_session(again))
    for stage in [*range(1, 7), 0]:
        run(f"stage → {stage}", lambda s=stage: doc.set_stage(s))
    doc.set_stage(3)
    watched(app, window, dog, lambda: None)
    for head in (1, 7) if quick else (1, 7, 11):
        run(f"head → {head} (weights)", lambda h=head: doc.set_head(h))
    for query in (5, 2000) if quick else (5, 1000, 2000):
        run(f"query → {query} (weights)", lambda q=query: doc.set_query(q))
    for stage in (3, 6):
        doc.set_stage(stage)
        watched(app, window, dog, lambda: None)
        for k in range(2 if quick else 4):
            idx = (0, k, 1)
            value = float(doc.matrix("W_Q")[idx]) + 0.01
            key = ("bench-scrub-2048", idx)
            run(
                f"W_Q scrub (stage {stage})",
                lambda i=idx, v=value, m=key: doc.set_value("W_Q", i, v, merge_key=m),
            )
    rows += bench_scrub(app, window, dog)
    dog.timer.stop()
    return rows


def scrubber(doc, edits: int, every_ms: int, merge_key):
    """(start, done): `start()` makes `edits` edits of one W_Q cell, one every `every_ms`
    from a timer (the event loop runs between them); `done()` once the last is made."""
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(every_ms)
    made = [0]

    def step():
        if made[0] >= edits:
            timer.stop()
            return
        idx = (0, 5, 2)
        value = float(doc.matrix("W_Q")[idx]) + (0.01 if made[0] % 2 == 0 else -0.005)
        made[0] += 1
        doc.set_value("W_Q", idx, value, merge_key=merge_key)

    timer.timeout.connect(step)
    return timer.start, lambda: made[0] >= edits


def bench_scrub(app, window, dog: Watchdog, edits: int = 20, every_ms: int = 50) -> list:
    """A scrub as a user makes it: `edits` edits of one W_Q cell, `every_ms` apart (20
    edits/s, not waiting for the window to settle between them), then the autosave
    that follows (its timer fired at once) and File ▸ Save to a file, then File ▸ Open
    of that file — each watched until settled. The layer is the one open (n = 2048)."""
    doc = window.document
    rows = []
    folder = tempfile.mkdtemp(prefix="mha-gui-bench-files-")
    path = os.path.join(folder, "layer-2048.json")

    def run(name, action, until=None):
        worst, took = watched(app, window, dog, action, until=until)
        rows.append((name, worst, took))
        print(f"n=2048 {name:28s} worst stall {fmt(worst)} ms   settled in {fmt(took)} ms")

    for stage in (3, 6):
        doc.set_stage(stage)
        watched(app, window, dog, lambda: None)
        start, made = scrubber(doc, edits, every_ms, ("bench-scrub-20", stage))
        run(f"scrub {edits} @ {1000 // every_ms}/s (stage {stage})", start, until=made)
    saved = {}

    def autosave():
        saved["autosave"] = time.perf_counter()
        future = window.recovery.autosave_in_background()  # what the autosave timer calls
        future.add_done_callback(lambda _f: saved.setdefault("autosaved", time.perf_counter()))
        saved["future"] = future

    run("autosave after the scrub", autosave, until=lambda: saved["future"].done())
    saved["future"].result()
    print(f"       autosave written (wall): {fmt(saved['autosaved'] - saved['autosave'])} ms")
    doc.saveFinished.connect(lambda *_: saved.setdefault("saved", time.perf_counter()))

    def save():
        saved["save"] = time.perf_counter()
        window.files._save_to(path)  # File ▸ Save As to `path`, as the menu's action does

    run("File ▸ Save", save, until=lambda: "saved" in saved)
    print(f"       File ▸ Save on disk (wall): {fmt(saved['saved'] - saved['save'])} ms")
    t1 = time.perf_counter()
    run("File ▸ Open (from the file)", lambda: window.open_path(path, ask=False))
    print(f"       opened and settled (wall): {fmt(time.perf_counter() - t1)} ms")
    return rows


STARTUP = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and obj.objectName() == "mainWindow":
            print("painted", flush=True)
            os._exit(0)
        return False
f = FirstPaint()
app.installEventFilter(f)
from mha_gui.cli import main
sys.exit(main(["--preset", "toy"]))
"""


def bench_startup(reps: int = 3) -> list[tuple[float, float]]:
    """(wall, CPU seconds) of `mha-gui --preset toy` to the first paint of the main window,
    in a fresh process (interpreter start and imports included), with a throw-away home.

    As installed: the modules' bytecode is cached (in a throw-away folder, compiled by an
    untimed first run). With PYTHONDONTWRITEBYTECODE set, as in some shells, every start
    would compile the program's ~230 modules again (~0.5 s of CPU here)."""
    times = []
    cache = tempfile.mkdtemp(prefix="mha-gui-bench-pyc-")
    for k in range(reps + 1):
        home = tempfile.mkdtemp(prefix="mha-gui-bench-home-")
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home, QT_QPA_PLATFORM="offscreen")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
        t0 = time.perf_counter()
        cpu0 = os.times()
        out = subprocess.run(
            [sys.executable, "-c", STARTUP], env=env, capture_output=True, text=True, timeout=120
        )
        took = time.perf_counter() - t0
        cpu1 = os.times()
        if "painted" not in out.stdout:
            print("startup: no painted window:", out.stderr[-500:])
            return times
        cpu = (cpu1.children_user - cpu0.children_user) + (
            cpu1.children_system - cpu0.children_system
        )
        if k:  # the first run compiled the bytecode
            times.append((took, cpu))
    return times


def main() -> int:
    quick = "--quick" in sys.argv
    scrub_only = "--scrub-only" in sys.argv
    stalls_only = scrub_only or "--stalls-only" in sys.argv
    folder = tempfile.mkdtemp(prefix="mha-gui-bench-")
    for fmt_ in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt_, QSettings.Scope.UserScope, folder)
        QSettings.setPath(fmt_, QSettings.Scope.SystemScope, folder)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setStyle("Fusion")

    from mha_gui.app import create_main_window
    from mha_gui.engine.layer.presets import load_preset, random_session

    window = create_main_window("toy")
    window.resize(1280, 720)
    window.show()
    bench = Bench(app, window)
    bench.settle(10)

    layers = [
        ("toy", lambda: load_preset("toy"), 30 if not quick else 8),
        ("bert-base", lambda: load_preset("bert-base"), 15 if not quick else 5),
        (
            "n=512",
            lambda: random_session(seed=0, tokens=512, d_model=768, heads=12),
            9 if not quick else 3,
        ),
    ]
    rows: list = []
    bursts = []
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    if stalls_only:
        layers = []
    print(
        f"{'layer':10s} {'stage':8s} {'action':12s} {'painted':>10s} {'+ grab':>10s} "
        f"{'UI CPU':>10s}  recomputes"
    )
    for label, make, reps in layers:
        bench.doc.open_session(make())
        bench.settle_all()
        bench_edits(bench, label, reps, rows)
        bench_navigation(bench, label, max(3, reps // 2), rows)
        bursts.append(bench_burst(bench, label))
    print()
    print(
        "| layer | stage | action | edit → painted (ms) | UI thread CPU (ms) "
        "| + full grab (ms) | recomputes/edit |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for label, stage, what, painted, grabbed, recomputes, cpu in rows:
        rc = str(recomputes) if "cell" in what else "–"
        print(
            f"| {label} | {stage} | {what} | {painted * 1000:.1f} | {cpu * 1000:.1f} "
            f"| {grabbed * 1000:.1f} | {rc} |"
        )
    print()
    for line in bursts:
        print(line)
    print()
    stalls = bench_stalls(app, window, quick, scrub_only)
    startup = [] if scrub_only else bench_startup(1 if quick else 3)
    print()
    print("| n = 2048, d_model 768, 12 heads | worst event-loop stall (ms) | settled (ms) |")
    print("|---|---:|---:|")
    for name, worst, took in stalls:
        print(f"| {name} | {worst * 1000:.0f} | {took * 1000:.0f} |")
    if startup:
        print(
            f"\nmha-gui --preset toy → first painted window: median "
            f"{statistics.median(w for w, _ in startup) * 1000:.0f} ms wall, "
            f"{statistics.median(c for _, c in startup) * 1000:.0f} ms CPU ({len(startup)} runs)"
        )
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    window.document.undo_stack.setClean()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
