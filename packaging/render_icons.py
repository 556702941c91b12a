"""Render the app icon (resources/mha-gui.svg) to the PNG sizes desktops look for.

    make icons        # = .venv/bin/python packaging/render_icons.py

writes packaging/icons/hicolor/NxN/apps/io.github.mha_gui.png for every N in SIZES,
with Qt's own SVG renderer (the one that draws the window icon), on a transparent
background. The PNGs are committed, so installing the launcher needs no renderer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "mha-gui.svg"
APP_ID = "io.github.mha_gui"
SIZES = (16, 32, 48, 64, 128, 256)
OUT = ROOT / "packaging" / "icons" / "hicolor"


def render(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # fonts for <text>
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"render_icons: Qt cannot read {SVG}", file=sys.stderr)
        return 1
    for size in SIZES:
        path = OUT / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not render(renderer, size).save(str(path), "PNG"):
            print(f"render_icons: could not write {path}", file=sys.stderr)
            return 1
        print(f"wrote {path.relative_to(ROOT)}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
