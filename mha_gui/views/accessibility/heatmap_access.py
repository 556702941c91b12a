"""Accessibility of a stage's canvas: the hook the attention view's scenes call.

`attach_stage(scene, view)` makes the canvas a Tab stop with a visible focus frame,
gives it a keyboard cell cursor (heatmap_cursor.py) and accessible tables
(heatmap_table.py), and describes its panels in words: rows and columns by token (or
dimension), a cell's value as printed, "blocked" for a masked pair, "blank" for an
exercise's hidden cell (never its number), and a switched-off head said as such.
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QWidget

from mha_gui.engine.panels.stage_panels import KINDS, symbol
from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.accessibility.heatmap_cursor import CellCursor, KeyboardMode
from mha_gui.views.accessibility.heatmap_table import register_canvas
from mha_gui.views.widgets.never_raises import never_raises

CANVAS_HELP = (
    "Heatmaps of this stage, one table per panel. Arrow keys move the cell cursor, "
    "Ctrl+arrows go to the next panel, Home/End and Page Up/Down to the row's or "
    "column's ends, Enter shows the cell's formula, Space inspects the head and follows "
    "the row, Ctrl+Space blocks or opens a pair; Tab leaves."
)
# each view's keyboard mode, shared by its canvases (a stage change keeps it)
_MODES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class StageSource:
    """The words for one stage scene's panels, read from the document and each panel's
    public surface (kind, head, shape, matrix, number format, hidden cells, tooltip)."""

    def __init__(self, document, scene):
        self.document = document
        self._scene = weakref.ref(scene)

    def panels(self) -> list:
        scene = self._scene()
        return [] if scene is None else list(scene.panels.values())

    def _stage(self):
        scene = self._scene()
        return STAGES[scene.stage if scene is not None else self.document.view.stage]

    def name(self) -> str:
        return f"{self._stage().heading}: heatmaps"

    def description(self) -> str:
        return CANVAS_HELP

    def title(self, panel) -> str:
        return symbol(panel.kind, panel.head, self.document.config).pretty

    def _token(self, i: int) -> str:
        tokens = self.document.tokens
        return str(tokens[i]) if 0 <= i < len(tokens) else str(i)

    def row_name(self, panel, row: int) -> str:
        if panel.kind in ("K", "KR"):
            return f"key {self._token(row)}"
        if KINDS[panel.kind].query_rows:
            return f"query {self._token(row)}"
        return f"token {self._token(row)}"

    def column_name(self, panel, col: int) -> str:
        if KINDS[panel.kind].masked:
            return f"key {self._token(col)}"
        if panel.kind == "H":
            d_v = self.document.config.d_v
            return f"head {col // d_v} dimension {col % d_v}"
        return f"dimension {col}"

    def blocked(self, panel, row: int, col: int) -> bool:
        if not KINDS[panel.kind].masked:
            return False
        mask = self.document.trace().mask
        return (
            mask is not None
            and row < mask.shape[0]
            and col < mask.shape[1]
            and bool(mask[row, col])
        )

    def switched_off(self, panel) -> bool:
        return panel.head is not None and panel.head in self.document.config.ablate

    def cell_value(self, panel, row: int, col: int) -> str:
        if (row, col) in panel.hidden:
            return "blank (an exercise's cell to work out)"
        if self.blocked(panel, row, col):
            return "blocked"
        if panel.matrix is None:
            return "not computed yet"
        text = panel.fmt.cell(float(panel.matrix[row, col]))
        return f"{text}, head switched off" if self.switched_off(panel) else text

    def cell_description(self, panel, row: int, col: int) -> str:
        """The value as shown, then the worked formula of the tooltip: AT-SPI carries no
        Value for an interface made in Python (no value interface to hand out), so Orca
        speaks the number from here (NVDA, JAWS and VoiceOver read the Value too)."""
        return f"{self.cell_value(panel, row, col)}. {panel.tooltip(row, col)}"

    def panel_description(self, panel) -> str:
        parts = [f"{panel.rows} rows by {panel.cols} columns"]
        if panel.head is not None and panel.head == self.document.view.head:
            parts.append("the inspected head")
        if self.switched_off(panel):
            parts.append("head switched off")
        if panel.hidden:
            parts.append(f"{len(panel.hidden)} blank cells (exercise)")
        return "; ".join(parts)

    def anchor(self) -> tuple[int, int]:
        """What the cursor's start depends on: the inspected head, the followed query."""
        view = self.document.view
        return view.head, view.query

    def start(self) -> tuple[object, int, int]:
        """Where the cursor first enters: the inspected head's panel, the followed row."""
        panels = self.panels()
        view = self.document.view
        mine = [p for p in panels if p.head == view.head]
        panel = (mine or panels)[0]
        return panel, view.query if panel.query_rows else 0, 0


class _TabPlace(QObject):
    """Puts a shown canvas in the Tab chain just after the control before its view (a
    canvas made later would otherwise come last, after every dock)."""

    def __init__(self, canvas: QWidget, view: QWidget):
        super().__init__(canvas)
        self._view = weakref.ref(view)
        canvas.installEventFilter(self)

    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Show:
            view = self._view()
            before = None if view is None else focus_before(view)
            if before is not None and before.window() is obj.window():
                QWidget.setTabOrder(before, obj)
        return False


def focus_before(view: QWidget) -> QWidget | None:
    """The last Tab stop before `view` in its window's focus chain (outside the view)."""
    w = view.previousInFocusChain()
    seen = 0
    while w is not None and w is not view and seen < 10_000:
        seen += 1
        if not view.isAncestorOf(w) and w.focusPolicy() & Qt.FocusPolicy.TabFocus:
            return w
        w = w.previousInFocusChain()
    return None


def attach(canvas, holder, source, view) -> CellCursor:
    """A canvas of heatmaps made a Tab stop with a visible focus frame, a keyboard cell
    cursor and accessible tables, described by `source`."""
    # registered first: with a screen reader on, a name set below already asks
    # QAccessible for the canvas's interface (and Qt keeps the first one it made)
    mode = _MODES.setdefault(view, KeyboardMode())
    cursor = CellCursor(canvas, source, source.start, holder, mode)
    register_canvas(canvas, cursor.tables)
    canvas.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    canvas.setAccessibleName(source.name())
    canvas.setAccessibleDescription(source.description())
    if holder is not None:
        holder.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # one Tab stop: the canvas
        holder.setAccessibleName("Stage heatmaps, scrolled")
    _TabPlace(canvas, view)
    return cursor


def attach_stage(scene, view) -> CellCursor:
    """A stage scene's canvas (before it is shown: QStackedLayout then hands it the
    focus the previous stage's canvas had)."""
    return attach(scene.canvas, scene.holder, StageSource(view.document, scene), view)


def attach_strip(canvas, strip) -> CellCursor:
    """The query strip's canvas (a new one at each of the strip's rebuilds)."""
    return attach(canvas, None, StripSource(strip, canvas), strip)


# the query strip's parts: (the panel's words, what its rows are)
STRIP_PARTS = {
    "q": "q, the query's row of Q",
    "s": "s, the query's scores",
    "a": "a, the query's weights",
    "z": "z, the query's row of Z",
    "heads": "the query's weights in every head",
}


class StripSource(StageSource):
    """The words for the query strip: the followed query's q, s, a, z, and its weights in
    every head (rows = heads)."""

    def __init__(self, strip, canvas):
        self.document = strip.document
        self._strip = weakref.ref(strip)
        self._canvas = weakref.ref(canvas)

    def _parts(self) -> dict:
        strip = self._strip()
        if strip is None or strip.canvas is not self._canvas():
            return {}  # an old canvas, being deleted
        return {id(panel): name for name, panel in strip.panels.items()}

    def panels(self) -> list:
        strip = self._strip()
        return [] if not self._parts() else list(strip.panels.values())

    def name(self) -> str:
        return "Query strip: heatmaps"

    def description(self) -> str:
        return "The followed query's numbers, step by step. " + CANVAS_HELP

    def _part(self, panel) -> str:
        return self._parts().get(id(panel), "q")

    def title(self, panel) -> str:
        view = self.document.view
        head = "" if self._part(panel) == "heads" else f" of head {view.head}"
        return f"{STRIP_PARTS[self._part(panel)]}{head} (query {self._token(view.query)})"

    def row_name(self, panel, row: int) -> str:
        if self._part(panel) == "heads":
            return f"head {row}"
        return f"query {self._token(self.document.view.query)}"

    def column_name(self, panel, col: int) -> str:
        if self._part(panel) in ("s", "a", "heads"):
            return f"key {self._token(col)}"
        return f"dimension {col}"

    def blocked(self, panel, row: int, col: int) -> bool:
        if self._part(panel) not in ("s", "a", "heads"):
            return False
        mask, query = self.document.trace().mask, self.document.view.query
        return mask is not None and bool(mask[query, col])

    def switched_off(self, panel) -> bool:
        return False

    def start(self) -> tuple[object, int, int]:
        return self.panels()[0], 0, 0
