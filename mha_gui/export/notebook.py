"""A session as the value of a notebook cell: its current stage's figure, SVG or PNG.

Jupyter calls `Session._repr_svg_` / `_repr_png_`, which call these. The figure is the
one `mha-gui export --stage …` writes for the session's own view (its stage, every head
with the inspected one framed, its query row outlined), drawn by the same export code;
a notebook needs no QApplication of its own (`ensure_app` makes one, offscreen when
there is no display).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from mha_gui.export import figure

NOTEBOOK_PNG_WIDTH = 1200  # px: a notebook column shows it without scaling much


def session_svg(session) -> str:
    """The current stage's figure as SVG text (vector cells, text labels)."""
    figure.ensure_app()
    with tempfile.TemporaryDirectory(prefix="mha-gui-") as folder:
        path = Path(folder) / "stage.svg"
        figure.write_svg(path, session, session.view.stage, query=session.view.query)
        return path.read_text(encoding="utf-8")


def session_png(session, width: int = NOTEBOOK_PNG_WIDTH) -> bytes:
    """The current stage's figure as PNG bytes, `width` pixels wide."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    view = session.view
    image = figure.render_image(session, view.stage, query=view.query, width=width)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("the figure could not be encoded as PNG")
    buffer.close()
    return bytes(data.data())
