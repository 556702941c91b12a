"""A session as a notebook cell's value shows its current stage's figure (SVG or PNG),
drawn by the export code, with no QApplication started by the user."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PySide6.QtGui import QImage

from mha_gui.engine import load_preset
from mha_gui.engine.panels.stages import stage_by_name
from mha_gui.export.notebook import NOTEBOOK_PNG_WIDTH

ROOT = Path(__file__).resolve().parents[2]


def test_svg_and_png_of_the_current_stage(qapp):
    session = load_preset("toy")
    session.view.stage = stage_by_name("weights").index
    svg = session._repr_svg_()
    assert isinstance(svg, str) and svg.startswith("<?xml") and "<svg" in svg
    assert "softmax" in svg  # the weights stage's formula, as text
    session.view.stage = stage_by_name("input").index
    assert "softmax" not in session._repr_svg_()  # it follows the session's stage

    png = session._repr_png_()
    assert isinstance(png, bytes) and png.startswith(b"\x89PNG\r\n\x1a\n")
    image = QImage.fromData(png, "PNG")
    assert image.width() == NOTEBOOK_PNG_WIDTH and image.height() > 100
    pixels = np.frombuffer(image.convertToFormat(QImage.Format.Format_RGB32).constBits(), np.uint8)
    assert len(np.unique(pixels)) > 10  # a figure, not a blank page


def test_a_fresh_interpreter_needs_no_qapplication_of_its_own(tmp_path):
    code = (
        "from mha_gui.engine import load_preset\n"
        "from PySide6.QtWidgets import QApplication\n"
        "assert QApplication.instance() is None\n"
        "s = load_preset('toy')\n"
        "svg, png = s._repr_svg_(), s._repr_png_()\n"
        "assert svg.startswith('<?xml') and png.startswith(b'\\x89PNG')\n"
        "print(len(svg), len(png))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env.pop("WAYLAND_DISPLAY", None)
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    svg_len, png_len = (int(x) for x in done.stdout.split())
    assert svg_len > 1000 and png_len > 1000
