"""Guard against PySide6 builds that leak references to None/True (6.12.0 on CPython 3.11).

Such a build drops a reference on every void call, emit and callback return; a live app
then dies with `Fatal Python error: none_dealloc` after a few hundred repaints. If this
test fails, pin PySide6-Essentials below the offending release in pyproject.toml.
"""

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage, QPainter

N = 300  # enough to see a leak of one per call, too few to exhaust the ~570 refs to True


class _Emitter(QObject):
    fired = Signal()
    flag = Signal(bool)


def test_emits_and_void_calls_do_not_drop_none_or_true_references(qapp):
    received = []
    e = _Emitter()
    e.fired.connect(lambda: None)
    e.flag.connect(received.append)
    image = QImage(32, 32, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        for _ in range(50):  # warm caches before measuring
            e.fired.emit()
            painter.drawRect(0, 0, 4, 4)
        none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
        for _ in range(N):
            e.fired.emit()
            e.flag.emit(True)
            painter.drawRect(0, 0, 4, 4)
            painter.setOpacity(1.0)
        received.clear()
        none_after, true_after = sys.getrefcount(None), sys.getrefcount(True)
    finally:
        painter.end()
    # Immortal objects (3.12+) report a constant; on 3.11 a leak shows as a fall of ≥ N.
    assert none_after >= none_before - N // 3, (none_before, none_after)
    assert true_after >= true_before - N // 3, (true_before, true_after)
