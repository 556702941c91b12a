"""The app side of tools/accessibility_walk.py: the main window on the toy, driven from
the keyboard the way a student would (the keys sent to the focused widget), so that the
walker, reading the window through AT-SPI, can follow the focus cell by cell.

Run by accessibility_walk.py with the project's Python; not meant to be run alone.
Steps (one every STEP_MS, after the walker has had time to read the tree):
inspect head 1, follow "sat", stage 4, Tab into the heatmaps, then → → → ↓ Home.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from mha_gui.app import create_main_window

STEP_MS = 700
K, CTRL, ALT = Qt.Key, Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.AltModifier
NONE = Qt.KeyboardModifier.NoModifier


def main() -> int:
    app = QApplication(sys.argv)
    app.setApplicationName("mha-gui")
    window = create_main_window("toy")
    window.resize(1400, 900)
    window.show()
    window.activateWindow()
    doc = window.document
    sat = doc.tokens.index("sat")

    def key(k, mods=NONE):
        return lambda: QTest.keyClick(QApplication.focusWidget() or window, k, mods)

    setup = [
        key(K.Key_H, ALT),  # Inspect &head
        key(K.Key_Down),  # head 1
        key(K.Key_Q, ALT),  # &Query token
        *[key(K.Key_Down)] * sat,  # "sat"
        key(K.Key_PageDown, CTRL),
        key(K.Key_PageDown, CTRL),
        key(K.Key_PageDown, CTRL),  # stage 4, the attention weights
        *[None] * 6,  # the walker reads the tree and starts listening
        key(K.Key_Q, ALT),
        key(K.Key_Tab),  # into the heatmaps: the cursor on A₁[sat, the]
    ]
    moves = [key(K.Key_Right), key(K.Key_Right), key(K.Key_Right), key(K.Key_Down)]
    moves += [key(K.Key_Home), key(K.Key_Right, CTRL)]
    steps = setup + [None] * 2 + moves + [None] * 4 + [app.quit]  # None: a pause
    for i, step in enumerate(steps):
        if step is not None:
            QTimer.singleShot(2500 + STEP_MS * i, step)
    print("app: ready", flush=True)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
