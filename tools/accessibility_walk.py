#!/usr/bin/python3
"""Check mha-gui with a real screen-reader API: AT-SPI, as Orca reads it on Linux.

Runs the app under Xvfb with at-spi2-core in a private D-Bus session, walks its
accessible tree with pyatspi (from the system Python: Debian's python3-pyatspi), prints
the heatmaps' tables and a cell's name, value and description, then follows the focus
while the app's keyboard cell cursor moves (tools/accessibility_app.py drives it).

    apt-get install -y at-spi2-core python3-pyatspi dbus-x11 xvfb
    /usr/bin/python3 tools/accessibility_walk.py [--python /path/to/project/python]

Not part of `make test` (the Qt side is: tests/views/accessibility/).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLLOW_S = 16.0  # how long the focus is followed (the app quits by itself before)


def start_session(display: str) -> tuple[dict, list[subprocess.Popen]]:
    """Xvfb on `display`, a D-Bus session and the accessibility bus: their environment."""
    procs = [
        subprocess.Popen(
            ["Xvfb", display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    time.sleep(1.0)
    out = subprocess.run(
        ["dbus-launch", "--sh-syntax"], capture_output=True, text=True, check=True
    ).stdout
    env = dict(os.environ, DISPLAY=display)
    pid = None
    for line in out.splitlines():
        if "=" in line and line.startswith("DBUS_SESSION_BUS"):
            name, value = line.split("=", 1)
            value = value.rstrip(";").strip("'")
            env[name] = value
            if name == "DBUS_SESSION_BUS_PID":
                pid = int(value)
    os.environ.update(env)
    launcher = "/usr/libexec/at-spi-bus-launcher"
    procs.append(subprocess.Popen([launcher, "--launch-immediately"], env=env))
    time.sleep(1.0)
    # accessibility on for every toolkit in this session
    subprocess.run(
        [
            "dbus-send",
            "--session",
            "--dest=org.a11y.Bus",
            "--type=method_call",
            "/org/a11y/bus",
            "org.freedesktop.DBus.Properties.Set",
            "string:org.a11y.Status",
            "string:IsEnabled",
            "variant:boolean:true",
        ],
        env=env,
        check=False,
    )
    return env, procs, pid


def start_app(python: str, env: dict, config: str) -> subprocess.Popen:
    app_env = dict(
        env,
        QT_QPA_PLATFORM="xcb",
        QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
        QT_ACCESSIBILITY="1",
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=config,  # throw-away settings: nothing of the user's changes
    )
    script = str(ROOT / "tools" / "accessibility_app.py")
    return subprocess.Popen([python, script], env=app_env, cwd=str(ROOT))


def describe(acc) -> str:
    text = f"[{acc.getRoleName()}] {acc.name!r}"
    value = cell_value(acc)
    if value:
        text += f" value={value!r}"
    return text


def cell_value(acc) -> str:
    """A cell's value as AT-SPI gives it (Qt sends QAccessible::Value as the text of the
    Text interface or the current value of the Value interface, when present)."""
    try:
        value = acc.queryValue()
        return f"{value.currentValue:g}"
    except NotImplementedError:
        pass
    try:
        text = acc.queryText()
        return text.getText(0, -1)
    except NotImplementedError:
        pass
    return ""


def find(acc, test, depth=0, limit=12):
    if acc is None or depth > limit:
        return None
    try:
        if test(acc):
            return acc
        for i in range(acc.childCount):
            if acc.getRoleName() == "table":
                break  # a table's cells are read on purpose, not searched
            found = find(acc.getChildAtIndex(i), test, depth + 1, limit)
            if found is not None:
                return found
    except Exception:  # an object gone while walking: skip it
        return None
    return None


def wait_for_app(pyatspi, timeout: float = 30.0):
    end = time.time() + timeout
    while time.time() < end:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            if app is not None and "mha" in (app.name or "").lower():
                return app
        time.sleep(0.5)
    raise SystemExit("walk: the app never appeared on the accessibility bus")


def walk(pyatspi) -> None:
    app = wait_for_app(pyatspi)
    print(f"walk: application {app.name!r} on the AT-SPI bus")
    end, canvas = time.time() + 30.0, None
    while canvas is None and time.time() < end:  # the app walks to stage 4 by keyboard
        canvas = find(
            app,
            lambda a: (
                a.getRoleName() == "panel"
                and (a.name or "").startswith("Stage 4")
                and (a.name or "").endswith(": heatmaps")
            ),
        )
        time.sleep(0.3)
    if canvas is None:
        raise SystemExit("walk: no stage 4 heatmaps in the tree")
    print(f"walk: {describe(canvas)} with {canvas.childCount} tables")
    for i in range(canvas.childCount):
        table = canvas.getChildAtIndex(i)
        print(f"  {describe(table)}: {table.childCount} cells; {table.description}")
    table = canvas.getChildAtIndex(canvas.childCount - 1)
    n = round(table.childCount**0.5)
    for index in (0, 2 * n + 3):  # A₁[the, the] and A₁[sat, down] of the toy
        cell = table.getChildAtIndex(index)
        print(f"    cell {index}: {describe(cell)}")
        print(f"      description: {cell.description}")
    print("walk: following the focus while the cell cursor moves …")

    def on_focus(event):
        src = event.source
        if event.detail1 != 1 or src is None:
            return
        print(f"  focus → {describe(src)}", flush=True)
        if src.getRoleName() == "table cell":
            print(f"      description: {src.description}", flush=True)

    pyatspi.Registry.registerEventListener(on_focus, "object:state-changed:focused")
    from gi.repository import GLib

    GLib.timeout_add(int(FOLLOW_S * 1000), lambda: pyatspi.Registry.stop() or False)
    pyatspi.Registry.start()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = ROOT / ".venv" / "bin" / "python"
    parser.add_argument("--python", default=str(default), help="the project's Python")
    parser.add_argument("--display", default=":93")
    args = parser.parse_args()
    for tool in ("Xvfb", "dbus-launch"):
        if shutil.which(tool) is None:
            raise SystemExit(f"walk: {tool} is missing (apt-get install xvfb dbus-x11)")
    env, procs, bus_pid = start_session(args.display)
    config = tempfile.mkdtemp(prefix="mha-a11y-")
    app = None
    try:
        import pyatspi

        app = start_app(args.python, env, config)
        walk(pyatspi)
        app.wait(timeout=30)
        return 0
    finally:
        if app is not None and app.poll() is None:
            app.terminate()
        for proc in reversed(procs):
            proc.terminate()
        if bus_pid:
            os.kill(bus_pid, 15)
        shutil.rmtree(config, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
