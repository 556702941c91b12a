"""The docked figures (neuron view, token lines, contributions, KV cache, model grid …)
from the keyboard: what a click on them does, with keys.

A figure answers `hit(x, y)` with the item under a point (a key, a token, a head, a
row); it has no list of its items. `DrawingKeys` finds them by asking `hit` over a grid
of points once per drawing, orders them as they read (top to bottom, left to right),
and then

    arrows, Home, End   move between the items (a frame shows which)
    Space or Enter      what a click on it does (follow a query, show a head, …)

and the widget's accessible name says the item ("Neuron view: key sat"), with its
tooltip as the description, so a screen reader speaks each one.
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtWidgets import QFrame, QToolTip

from mha_gui.views.accessibility.audit import dock_of
from mha_gui.views.accessibility.heatmap_cursor import KeyboardMode
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.widgets.never_raises import never_raises

K = Qt.Key
NEXT = (K.Key_Right, K.Key_Down)
PREVIOUS = (K.Key_Left, K.Key_Up)
KEYS = {*NEXT, *PREVIOUS, K.Key_Home, K.Key_End, K.Key_Space, K.Key_Return, K.Key_Enter}
GRID_STEPS = 90  # points per side of the drawing at which `hit` is asked


def item_words(item) -> str:
    """("key", 2) → "key 2"; a dataclass item → its class and fields, in words."""
    if isinstance(item, tuple):
        return " ".join(str(part) for part in item)
    fields = getattr(item, "__dataclass_fields__", None)
    if fields:
        values = ", ".join(f"{name} {getattr(item, name)}" for name in fields)
        return f"{type(item).__name__.lower()} {values}"
    return str(item)


def scan(drawing) -> list[tuple[object, tuple[float, float, float, float]]]:
    """The drawing's items with their bounding boxes (x0, y0, x1, y1), in reading order."""
    w, h = float(drawing.width), float(drawing.height)
    step = max(2.0, min(w, h) / GRID_STEPS)
    boxes: dict[str, list] = {}
    y = step / 2
    while y < h:
        x = step / 2
        while x < w:
            item = drawing.hit(x, y)
            if item is not None:
                key = repr(item)
                box = boxes.get(key)
                if box is None:
                    boxes[key] = [item, x, y, x, y]
                else:
                    box[1], box[2] = min(box[1], x), min(box[2], y)
                    box[3], box[4] = max(box[3], x), max(box[4], y)
            x += step
        y += step
    found = [
        (b[0], (b[1] - step / 2, b[2] - step / 2, b[3] + step / 2, b[4] + step / 2))
        for b in boxes.values()
    ]
    found.sort(key=lambda entry: (round(entry[1][1] / (4 * step)), entry[1][0]))
    return found


class DrawingKeys(QObject):
    """Keyboard items for one DrawingWidget (see the module docstring)."""

    def __init__(self, widget, name: str):
        super().__init__(widget)
        self._widget = weakref.ref(widget)
        self.name = name
        self.index = -1
        self.mode = KeyboardMode()  # the frame shows for keyboard users only
        self._items: list = []
        self._scanned = None  # the drawing the items were found on
        if widget.focusPolicy() == Qt.FocusPolicy.NoFocus:
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        widget.setAccessibleName(name)
        widget.setAccessibleDescription(
            "Arrow keys move between the figure's items, Space or Enter does what a click does"
        )
        self.frame = QFrame(widget)
        self.frame.setObjectName("keyboardItemFrame")
        self.frame.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.frame.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.frame.setStyleSheet("border: 3px solid palette(highlight); background: transparent;")
        self.frame.hide()
        widget.installEventFilter(self)

    def items(self) -> list:
        widget = self._widget()
        drawing = None if widget is None else widget.current_drawing()
        if drawing is None or not hasattr(drawing, "hit"):
            return []
        if drawing is not self._scanned:
            self._scanned = drawing
            self._items = scan(drawing)
        return self._items

    def current(self):
        items = self.items()
        return items[self.index][0] if 0 <= self.index < len(items) else None

    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ShortcutOverride and event.key() in KEYS and self.items():
            event.accept()  # ← → are the figure's here, not the stage bar's
            return True
        if kind == QEvent.Type.KeyPress and event.key() in KEYS and self.items():
            self.mode.on = True
            self._key(event.key())
            return True
        if kind == QEvent.Type.FocusIn and self.mode.focus_in(event.reason()):
            self._show()
        elif kind == QEvent.Type.FocusOut:
            self.frame.hide()
            obj.setAccessibleName(self.name)
        return False

    def _key(self, key) -> None:
        items = self.items()
        count = len(items)
        if key in NEXT:
            self.index = min(count - 1, self.index + 1)
        elif key in PREVIOUS:
            self.index = max(0, self.index - 1)
        elif key == K.Key_Home:
            self.index = 0
        elif key == K.Key_End:
            self.index = count - 1
        else:
            item = self.current()
            widget = self._widget()
            if item is not None and widget is not None:
                widget.hitClicked.emit(item)
                self._follow(item)
        self._show()

    def _follow(self, item) -> None:
        """After a click the drawing is new: keep the cursor on the same item."""
        key = repr(item)
        for i, (other, _box) in enumerate(self.items()):
            if repr(other) == key:
                self.index = i
                return

    def _show(self) -> None:
        widget = self._widget()
        items = self.items()
        if widget is None or not items:
            return
        self.index = max(0, min(len(items) - 1, self.index))
        item, (x0, y0, x1, y1) = items[self.index]
        scale, dx, dy = widget.transform()
        rect = QRect(
            round(x0 * scale + dx) - 3,
            round(y0 * scale + dy) - 3,
            round((x1 - x0) * scale) + 6,
            round((y1 - y0) * scale) + 6,
        )
        self.frame.setGeometry(rect)
        self.frame.show()
        self.frame.raise_()
        tip = getattr(widget.drawing, "tooltip", None)
        text = tip(item) if tip is not None else ""
        widget.setAccessibleName(f"{self.name}: {item_words(item)}")
        widget.setAccessibleDescription(text or item_words(item))
        if text and widget.hasFocus():
            QToolTip.showText(widget.mapToGlobal(rect.bottomLeft()), text, widget)


def attach_drawings(window) -> list[DrawingKeys]:
    """Keyboard items for every figure widget of the window's docks."""
    out = []
    for widget in window.findChildren(DrawingWidget):
        dock = dock_of(widget)
        name = dock.windowTitle() if dock is not None else (widget.objectName() or "figure")
        out.append(DrawingKeys(widget, name))
    return out
