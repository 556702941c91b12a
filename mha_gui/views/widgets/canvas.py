"""A pyqtgraph canvas whose items Qt deletes, never Python's garbage collector.

A GraphicsLayoutWidget's central item (`ci`, the layout every panel sits in) is the one
top-level item of its scene, and the scene owns it. But PySide hands an item to Python
when `parentItem()` is asked of it and the answer is None, and pyqtgraph asks exactly that
of every item under the mouse, up to the top (GraphicsScene.absZValue, on each hover and
click). From the first hover on, Python owns `ci`: it then deletes it, with every panel
on it, as soon as nothing refers to it — when the canvas's wrapper goes at the start of
the canvas's own destructor, or whenever the collector reaches a cycle that held it —
instead of the scene deleting it after the view. A random user's zoom or shape change
during a query strip rebuild found that, in a segmentation fault or an item whose Python
half was already cleared ("'LabelItem' object has no attribute '_sizeHint'").

`new_canvas()` keeps a reference to the central item for as long as the canvas's scene
exists, so only Qt ever deletes it: the reference goes when the scene says it is
destroyed, by which time the scene has deleted its items.
"""

from __future__ import annotations

import pyqtgraph as pg

# the central item of every live canvas's scene, by the scene's id
_CENTRAL_ITEMS: dict[int, object] = {}


def new_canvas() -> pg.GraphicsLayoutWidget:
    """A GraphicsLayoutWidget whose central item lives exactly as long as its scene."""
    canvas = pg.GraphicsLayoutWidget()
    scene = canvas.scene()
    key = id(scene)
    _CENTRAL_ITEMS[key] = canvas.ci
    scene.destroyed.connect(lambda *_args: _CENTRAL_ITEMS.pop(key, None))
    return canvas


def held_canvases() -> int:
    """How many canvases' central items are held (their scenes still exist)."""
    return len(_CENTRAL_ITEMS)
