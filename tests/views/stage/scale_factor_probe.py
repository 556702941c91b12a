"""Run in a fresh interpreter with QT_SCALE_FACTOR set (Qt reads it once, at start):
opens the window at 1280×720 on a layer, visits every stage and prints, as JSON, what
each heatmap draws — its cell size in logical and device pixels, and whether every
token is named on both axes — plus the window's device pixel ratio and the stage bar's
height. tests/views/stage/test_qt_scale_factor.py reads it."""

from __future__ import annotations

import json
import sys

from PySide6.QtWidgets import QApplication


def main(layer: str) -> None:
    app = QApplication(sys.argv[:1])
    from mha_gui.app import create_main_window
    from mha_gui.engine.layer.presets import random_session
    from mha_gui.engine.panels.stages import STAGES
    from mha_gui.views.stage.square_grid import READABLE, axis_label
    from tests.views.stage.test_square_heatmaps import drawn_cell, drawn_labels

    if "," in layer:
        w = create_main_window("toy")
        n, d, h = (int(x) for x in layer.split(","))
        w.document.replace_session(random_session(0, n, d, h))
    else:
        w = create_main_window(layer)
    w.resize(1280, 720)
    w.show()
    view = w.attention_view

    def settle():
        for _ in range(2000):
            app.processEvents()
            if view.settled and not w.document.busy and w.query_strip.settled:
                break
        app.processEvents()

    settle()
    tokens = w.document.tokens
    names = [axis_label(t, i) for i, t in enumerate(tokens)]
    ratio = w.devicePixelRatioF()
    out = {"ratio": ratio, "size": [w.width(), w.height()], "stages": [], "bar": []}
    for stage in STAGES:
        w.document.set_stage(stage.index)
        settle()
        out["bar"].append(w.stage_bar.height())
        for key, panel in view.panels.items():
            if view.geometry.places[key[1]].thumb:
                continue
            width, height = drawn_cell(panel)
            rows_named = cols_named = None
            if panel.rows <= READABLE:
                rows_named = drawn_labels(panel.plot.getAxis("left")) == names[: panel.rows]
            if panel.cols <= READABLE:
                cols_named = len(drawn_labels(panel.plot.getAxis("bottom"))) == panel.cols
            out["stages"].append(
                {
                    "stage": stage.name,
                    "panel": f"{key[0]}{key[1]}",
                    "side": max(panel.rows, panel.cols),
                    "cell": [width, height],
                    "rows_named": rows_named,
                    "cols_named": cols_named,
                    "token_rows": panel.rows == len(tokens),
                }
            )
    strip = w.query_strip.panels["a"].plot.getAxis("bottom")
    out["strip_keys"] = drawn_labels(strip) == names
    w.document.undo_stack.setClean()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
