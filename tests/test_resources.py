"""The installed package carries its icon, and it is a valid image Qt can draw."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QIcon

from mha_gui.resources import icon_path


def test_icon_is_packaged_and_renders(qapp):
    assert os.path.isfile(icon_path())
    pixmap = QIcon(icon_path()).pixmap(64, 64)
    assert not pixmap.isNull()
    image = pixmap.toImage()
    colours = {image.pixelColor(x, y).name() for x in range(0, 64, 4) for y in range(0, 64, 4)}
    assert len(colours) > 4
