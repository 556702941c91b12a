"""A heatmap canvas as accessible tables: canvas → one table per panel → its cells.

PySide6 binds QAccessibleInterface and QAccessibleWidget for subclassing in Python, but
not QAccessibleTableInterface (and a Python QAccessibleTableCellInterface cannot be
handed out through `interface_cast`, which returns a raw pointer). So each panel is an
interface with the Table role whose children are Cell interfaces, row-major; a cell's
row and column are spoken in its name ("A₁, query sat, key down"), its Value is the
number as the panel prints it, its Description the worked formula of its tooltip.

The canvas is a pyqtgraph GraphicsLayoutWidget, one QWidget whose panels are graphics
items (no QObjects for Qt's own accessibility to find); `install_factory` teaches
QAccessible to answer for every canvas given to `register_canvas`.

Lifetime: the table and cell interfaces have no QObject, so Qt's accessibility cache
keeps them until told otherwise; each is registered once, remembered by its canvas's
`CanvasTables`, and deleted from the cache when the canvas is destroyed.
"""

from __future__ import annotations

import weakref
from typing import Protocol

from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QAccessibleWidget, QWidget


class HeatmapSource(Protocol):
    """What the tables read of a canvas's panels (heatmap_access.StageSource)."""

    def name(self) -> str: ...
    def description(self) -> str: ...
    def panels(self) -> list: ...
    def title(self, panel) -> str: ...
    def row_name(self, panel, row: int) -> str: ...
    def column_name(self, panel, col: int) -> str: ...
    def cell_value(self, panel, row: int, col: int) -> str: ...
    def cell_description(self, panel, row: int, col: int) -> str: ...
    def panel_description(self, panel) -> str: ...


def cell_rect(canvas, panel, row: int, col: int) -> QRect:
    """A panel's cell in screen coordinates (what a screen reader's highlight frames)."""
    vb = panel.plot.getViewBox()
    scene_rect = vb.mapViewToScene(QRectF(col, row, 1.0, 1.0)).boundingRect()
    local = canvas.mapFromScene(scene_rect).boundingRect()
    top_left = canvas.viewport().mapToGlobal(local.topLeft())
    return QRect(top_left, local.size())


def panel_rect(canvas, panel) -> QRect:
    vb = panel.plot.getViewBox()
    local = canvas.mapFromScene(vb.sceneBoundingRect()).boundingRect()
    return QRect(canvas.viewport().mapToGlobal(local.topLeft()), local.size())


class CellInterface(QAccessibleInterface):
    """One cell of a panel's table."""

    def __init__(self, table: PanelTable, row: int, col: int):
        super().__init__()
        self._table, self.row, self.col = table, row, col

    def isValid(self) -> bool:
        return self._table.isValid() and self._table.panel_ok()

    def object(self):
        return None

    def window(self):
        return self._table.window()

    def rect(self) -> QRect:
        if not self.isValid():
            return QRect()
        return cell_rect(self._table.canvas, self._table.panel, self.row, self.col)

    def setText(self, _t, _text) -> None:
        pass  # the numbers are edited in the matrix editors, never here

    def childCount(self) -> int:
        return 0

    def child(self, _index: int):
        return None

    def childAt(self, _x: int, _y: int):
        return None

    def indexOfChild(self, _child) -> int:
        return -1

    def parent(self):
        return self._table

    def role(self):
        return QAccessible.Role.Cell

    def state(self):
        s = QAccessible.State()
        s.focusable = True
        s.selectable = True
        s.readOnly = True
        tables = self._table.tables
        cursor = tables.cursor_cell()
        here = cursor == (self._table.panel, self.row, self.col)
        s.focused = here and tables.canvas.hasFocus()
        s.selected = here
        s.invisible = not self.isValid() or not tables.canvas.isVisible()
        return s

    def text(self, t) -> str:
        if not self.isValid():
            return ""
        table = self._table
        source, panel = table.source, table.panel
        if t == QAccessible.Text.Name:
            return (
                f"{source.title(panel)}, {source.row_name(panel, self.row)}, "
                f"{source.column_name(panel, self.col)}"
            )
        if t == QAccessible.Text.Value:
            return source.cell_value(panel, self.row, self.col)
        if t == QAccessible.Text.Description:
            return source.cell_description(panel, self.row, self.col)
        return ""


class PanelTable(QAccessibleInterface):
    """One heatmap panel: a table of rows × cols cells, row-major."""

    def __init__(self, tables: CanvasTables, panel):
        super().__init__()
        self.tables = tables
        self._panel = weakref.ref(panel)
        self.rows, self.cols = panel.rows, panel.cols
        self._cells: dict[tuple[int, int], CellInterface] = {}

    @property
    def panel(self):
        return self._panel()

    @property
    def canvas(self):
        return self.tables.canvas

    @property
    def source(self) -> HeatmapSource:
        return self.tables.source

    def panel_ok(self) -> bool:
        panel = self.panel
        return panel is not None and panel in self.source.panels()

    def cell(self, row: int, col: int) -> CellInterface | None:
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            return None
        iface = self._cells.get((row, col))
        if iface is None:
            iface = CellInterface(self, row, col)
            self.tables.keep(iface)
            self._cells[(row, col)] = iface
        return iface

    def isValid(self) -> bool:
        return self.tables.alive()

    def object(self):
        return None

    def window(self):
        return self.tables.window()

    def rect(self) -> QRect:
        if not (self.isValid() and self.panel_ok()):
            return QRect()
        return panel_rect(self.canvas, self.panel)

    def setText(self, _t, _text) -> None:
        pass

    def childCount(self) -> int:
        return self.rows * self.cols if self.panel_ok() else 0

    def child(self, index: int):
        if not self.panel_ok() or self.cols == 0:
            return None
        return self.cell(*divmod(index, self.cols))

    def childAt(self, x: int, y: int):
        if not self.panel_ok():
            return None
        rect = self.rect()
        if not rect.contains(QPoint(x, y)) or rect.width() <= 0 or rect.height() <= 0:
            return None
        col = min(self.cols - 1, (x - rect.left()) * self.cols // rect.width())
        row = min(self.rows - 1, (y - rect.top()) * self.rows // rect.height())
        return self.cell(row, col)

    def indexOfChild(self, child) -> int:
        if isinstance(child, CellInterface) and child.parent() is self:
            return child.row * self.cols + child.col
        return -1

    def focusChild(self):
        cursor = self.tables.cursor_cell()
        if cursor is not None and cursor[0] is self.panel:
            return self.cell(cursor[1], cursor[2])
        return None

    def parent(self):
        return QAccessible.queryAccessibleInterface(self.canvas)

    def role(self):
        return QAccessible.Role.Table

    def state(self):
        s = QAccessible.State()
        s.readOnly = True
        s.invisible = not self.isValid() or not self.canvas.isVisible()
        return s

    def text(self, t) -> str:
        if not (self.isValid() and self.panel_ok()):
            return ""
        if t == QAccessible.Text.Name:
            return self.source.title(self.panel)
        if t == QAccessible.Text.Description:
            return self.source.panel_description(self.panel)
        return ""


class CanvasTables:
    """The accessible tables of one canvas, and the interfaces it registered."""

    def __init__(self, canvas: QWidget, source: HeatmapSource, cursor_cell):
        self._canvas = weakref.ref(canvas)
        self.source = source
        self.cursor_cell = cursor_cell  # () -> (panel, row, col) or None
        self._tables: dict[int, PanelTable] = {}
        self._ids: list[int] = []
        ids = self._ids
        canvas.destroyed.connect(lambda *_: forget_interfaces(ids))

    @property
    def canvas(self):
        return self._canvas()

    def alive(self) -> bool:
        return self._canvas() is not None

    def window(self):
        canvas = self.canvas
        return None if canvas is None else canvas.window().windowHandle()

    def keep(self, iface: QAccessibleInterface) -> None:
        """Register `iface` with Qt's cache (which then owns it) and remember its id."""
        self._ids.append(QAccessible.registerAccessibleInterface(iface))

    def tables(self) -> list[PanelTable]:
        out = []
        for panel in self.source.panels():
            table = self._tables.get(id(panel))
            if table is None or table.panel is not panel:
                table = PanelTable(self, panel)
                self.keep(table)
                self._tables[id(panel)] = table
            out.append(table)
        return out

    def table_of(self, panel) -> PanelTable | None:
        for table in self.tables():
            if table.panel is panel:
                return table
        return None

    def cell(self, panel, row: int, col: int) -> CellInterface | None:
        table = self.table_of(panel)
        return None if table is None else table.cell(row, col)


def forget_interfaces(ids: list[int]) -> None:
    """Delete a gone canvas's table and cell interfaces from Qt's accessibility cache."""
    for uid in ids:
        QAccessible.deleteAccessibleInterface(uid)
    ids.clear()


class CanvasInterface(QAccessibleWidget):
    """The canvas widget: a pane whose children are its panels' tables."""

    def __init__(self, canvas: QWidget, tables: CanvasTables):
        super().__init__(canvas, QAccessible.Role.Pane)
        self._tables = tables

    def text(self, t) -> str:
        if t == QAccessible.Text.Name:
            return self._tables.source.name()
        if t == QAccessible.Text.Description:
            return self._tables.source.description()
        return super().text(t)

    def childCount(self) -> int:
        return len(self._tables.tables())

    def child(self, index: int):
        tables = self._tables.tables()
        return tables[index] if 0 <= index < len(tables) else None

    def indexOfChild(self, child) -> int:
        for i, table in enumerate(self._tables.tables()):
            if table is child:
                return i
        return -1

    def childAt(self, x: int, y: int):
        for table in self._tables.tables():
            if table.rect().contains(QPoint(x, y)):
                return table
        return None

    def focusChild(self):
        cursor = self._tables.cursor_cell()
        if cursor is None:
            return None
        return self._tables.cell(*cursor)


# canvases the factory answers for (weak: a deleted canvas drops out by itself)
_CANVASES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_installed = False


def register_canvas(canvas: QWidget, tables: CanvasTables) -> None:
    install_factory()
    _CANVASES[canvas] = tables
    # With a screen reader on, Qt may already have made (and cached) the plain widget
    # interface while the canvas was being constructed: drop it, ours comes next time.
    cached = QAccessible.queryAccessibleInterface(canvas)
    if cached is not None and not isinstance(cached, CanvasInterface):
        QAccessible.deleteAccessibleInterface(QAccessible.uniqueId(cached))


def _factory(_class_name: str, obj):
    try:
        tables = _CANVASES.get(obj)
    except TypeError:  # an object that cannot be weakly referenced: not one of ours
        return None
    if tables is None:
        return None
    return CanvasInterface(obj, tables)


def install_factory() -> None:
    """Teach QAccessible about heatmap canvases (once per process)."""
    global _installed
    if not _installed:
        QAccessible.installFactory(_factory)
        _installed = True
