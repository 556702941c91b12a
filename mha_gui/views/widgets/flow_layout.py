"""A layout that places its items left to right and wraps onto new lines when narrow.

Like Qt's FlowLayout example, plus two things a toolbar-like bar needs: items whose
horizontal size policy expands share a line's spare width, and an item wider than the
whole line is narrowed to it (a word-wrapping label then grows taller instead of
clipping). Its minimum width is the widest item's minimum, so a narrow window wraps the
bar into more lines instead of growing wider than the screen.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy

_P = QSizePolicy.Policy
_GROWING = (_P.Expanding, _P.MinimumExpanding, _P.Ignored)


class FlowLayout(QLayout):
    def __init__(self, parent=None, h_spacing: int = 12, v_spacing: int = 2):
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._h, self._v = h_spacing, v_spacing

    # ---------------------------------------------------------------- QLayout API ---
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._live())

    def itemAt(self, index: int):
        items = self._live()
        return items[index] if 0 <= index < len(items) else None

    def takeAt(self, index: int):
        items = self._live()
        return items.pop(index) if 0 <= index < len(items) else None

    def _live(self) -> list[QLayoutItem]:
        """The items whose Python side is still valid. `removeWidget` below meets the
        cause found (PySide's own removeWidget); another PySide path still marks an item
        deleted behind the layout's back (the suite's random user, toy seed 1, at an undo,
        after that fix): handing Qt such an item crashed the window, so it is dropped."""
        if not all(shiboken6.isValid(i) for i in self._items):
            self._items = [i for i in self._items if shiboken6.isValid(i)]
        return self._items

    def removeWidget(self, widget) -> None:
        """QLayout::removeWidget (take the widget's item out and delete it), done here.
        PySide's own removeWidget first marks the widget's item deleted on the Python
        side, then lets Qt ask this layout for its items: the item Qt was to take and
        delete could no longer be handed back (an exception in heightForWidth, then a
        segmentation fault, as a random user undid and redid a change of heads)."""
        for index, item in enumerate(self._live()):
            if item.widget() is widget:
                del self._items[index]
                shiboken6.delete(item)  # Qt's `delete takeAt(i)`
                self.invalidate()
                return

    def expandingDirections(self):
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._do_layout(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._do_layout(rect, apply=True)

    def sizeHint(self) -> QSize:
        m = self.contentsMargins()
        width = sum(self._hint(i).width() for i in self._visible()) + self._h * max(
            0, len(self._visible()) - 1
        )
        height = max((self._hint(i).height() for i in self._visible()), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:
        # The height it needs at the width it gets comes from heightForWidth; as a
        # minimum, the height of everything wrapped at the narrowest width would make the
        # window taller than the screen, so the minimum is one line.
        m = self.contentsMargins()
        width = max((i.minimumSize().width() for i in self._visible()), default=0)
        height = max((self._hint(i).height() for i in self._visible()), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    # ------------------------------------------------------------------ layout ------
    def _visible(self) -> list[QLayoutItem]:
        return [i for i in self._live() if not i.isEmpty()]

    @staticmethod
    def _hint(item: QLayoutItem) -> QSize:
        return item.sizeHint().expandedTo(item.minimumSize())

    @staticmethod
    def _expands(item: QLayoutItem) -> bool:
        widget = item.widget()
        if widget is None:
            return False
        return widget.sizePolicy().horizontalPolicy() in _GROWING

    def _lines(self, width: int) -> list[list[QLayoutItem]]:
        lines: list[list[QLayoutItem]] = [[]]
        x = 0
        for item in self._visible():
            w = min(self._hint(item).width(), width)
            if lines[-1] and x + self._h + w > width:
                lines.append([])
                x = 0
            x += (self._h if lines[-1] else 0) + w
            lines[-1].append(item)
        return [line for line in lines if line]

    def _do_layout(self, rect: QRect, apply: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        width = max(1, area.width())
        y = area.y()
        for n, line in enumerate(self._lines(width)):
            widths = [min(self._hint(i).width(), width) for i in line]
            spare = width - sum(widths) - self._h * (len(line) - 1)
            growers = [k for k, i in enumerate(line) if self._expands(i)]
            if spare > 0 and growers:
                for k in growers:
                    widths[k] += spare // len(growers)
            heights = [
                i.heightForWidth(w) if i.hasHeightForWidth() else self._hint(i).height()
                for i, w in zip(line, widths, strict=True)
            ]
            line_h = max(heights)
            if n:
                y += self._v
            if apply:
                x = area.x()
                for item, w in zip(line, widths, strict=True):
                    h = min(line_h, max(self._hint(item).height(), line_h))
                    item.setGeometry(QRect(QPoint(x, y + (line_h - h) // 2), QSize(w, h)))
                    x += w + self._h
            y += line_h
        return y - rect.y() + m.bottom()
