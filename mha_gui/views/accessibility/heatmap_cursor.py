"""The keyboard's cell cursor over a canvas of heatmap panels.

The canvas takes focus with Tab like any control; then

    arrows            move the cursor one cell (Ctrl+arrows: the neighbouring panel)
    Home / End        first / last column of the row
    PgUp / PgDown     first / last row of the column
    Ctrl+Home / End   first / last cell of the panel
    Enter             show the cell's worked formula (its tooltip) beside it
    Space             what a click does: inspect this head, follow this query row
    Ctrl+Space        what a Ctrl+click does: block or open the pair (scores, weights)
    Shift+F10, Menu   the panel's context menu

and Tab / Shift+Tab leave the canvas. The cursor is drawn as a black-and-white double
frame (readable on every colour of every map); every move sends the accessible focus
to the cell (QAccessible.updateAccessibility), so a screen reader speaks it.

The cursor's frames are graphics items of the panel's own plot, made the first time the
cursor enters that panel and hidden, never removed, when it leaves (the scene's items
live and die with their canvas).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QAccessible, QAccessibleEvent, QBrush, QColor, QPen
from PySide6.QtWidgets import QFrame, QGraphicsRectItem, QToolTip

from mha_gui.views.accessibility.heatmap_table import CanvasTables, cell_rect
from mha_gui.views.widgets.never_raises import never_raises

K = Qt.Key
MOVES = {
    K.Key_Left: (0, -1),
    K.Key_Right: (0, 1),
    K.Key_Up: (-1, 0),
    K.Key_Down: (1, 0),
}
# every key the cursor answers: taken before the window's shortcuts (← → change stage)
CURSOR_KEYS = {
    *MOVES,
    K.Key_Home,
    K.Key_End,
    K.Key_PageUp,
    K.Key_PageDown,
    K.Key_Return,
    K.Key_Enter,
    K.Key_Space,
    K.Key_Menu,
}
CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def cursor_key(event) -> bool:
    """Is this key the cursor's? Ctrl+PgUp / Ctrl+PgDown stay the window's (the stages),
    Alt+anything the menus'."""
    key, mods = event.key(), event.modifiers()
    if key not in CURSOR_KEYS or mods & ALT:
        return False
    return not (key in (K.Key_PageUp, K.Key_PageDown) and mods & CTRL)


KEYBOARD_REASONS = (
    Qt.FocusReason.TabFocusReason,
    Qt.FocusReason.BacktabFocusReason,
    Qt.FocusReason.ShortcutFocusReason,
)


class KeyboardMode:
    """Is the user on the keyboard? Focus frames show then (as a browser's
    :focus-visible): a focus come by Tab, F6 or a shortcut, or a key pressed, turns it on;
    a click turns it off; a focus restored with the window or handed on at a stage
    change keeps it as it was. One per view, shared by the canvases of its stages."""

    def __init__(self):
        self.on = False

    def focus_in(self, reason) -> bool:
        if reason in KEYBOARD_REASONS:
            self.on = True
        elif reason == Qt.FocusReason.MouseFocusReason:
            self.on = False
        return self.on


class FocusFrame(QFrame):
    """A focus frame drawn over a widget's edges: a child on top, transparent for the
    mouse, so showing it never moves what the widget draws (a border would shift every
    pixel of the canvas by its width)."""

    def __init__(self, widget):
        super().__init__(widget)
        self.setObjectName("keyboardFocusFrame")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setStyleSheet("border: 3px solid palette(highlight); background: transparent;")
        self.hide()
        widget.installEventFilter(self)

    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.setGeometry(obj.rect())
        return False

    def set_shown(self, shown: bool) -> None:
        if shown:
            self.setGeometry(self.parentWidget().rect())
            self.raise_()
        self.setVisible(shown)


class CellCursor(QObject):
    """The cursor of one canvas: where it is, how it moves, what it says."""

    def __init__(
        self,
        canvas,
        source,
        start: Callable[[], tuple[object, int, int]],
        holder,
        mode: KeyboardMode | None = None,
    ):
        super().__init__(canvas)
        self.mode = mode if mode is not None else KeyboardMode()
        self.focus_frame = FocusFrame(canvas)
        self._canvas = weakref.ref(canvas)
        self._holder = weakref.ref(holder) if holder is not None else (lambda: None)
        self.source = source
        self._start = start
        self._panel = lambda: None
        self.row = self.col = 0
        self._anchor = None  # the source's anchor when the cursor was last placed
        self._frames: dict[int, tuple[QGraphicsRectItem, QGraphicsRectItem]] = {}
        self.tables = CanvasTables(canvas, source, self.cell)
        canvas.installEventFilter(self)

    # ------------------------------------------------------------------ state ------
    @property
    def canvas(self):
        return self._canvas()

    @property
    def panel(self):
        panel = self._panel()
        if panel is not None and panel not in self.source.panels():
            return None
        return panel

    def cell(self) -> tuple[object, int, int] | None:
        """(panel, row, col) of the cursor, or None before it first enters the canvas."""
        panel = self.panel
        return None if panel is None else (panel, self.row, self.col)

    def place(self, panel, row: int, col: int, announce: bool = True) -> None:
        """Put the cursor on a cell (clamped to the panel) and tell the screen reader."""
        old = self.panel
        row = max(0, min(panel.rows - 1, row))
        col = max(0, min(panel.cols - 1, col))
        self._panel, self.row, self.col = weakref.ref(panel), row, col
        self._anchor = self.source.anchor()
        if old is not None and old is not panel:
            self._show_frames(old, False)
        self._draw()
        self._scroll_to()
        if announce:
            self.announce()

    def announce(self) -> None:
        """The accessible focus moves to the cursor's cell (a screen reader speaks it)."""
        cell = self.cell()
        canvas = self.canvas
        if cell is None or canvas is None or not canvas.hasFocus():
            return
        iface = self.tables.cell(*cell)
        if iface is not None:
            QAccessible.updateAccessibility(QAccessibleEvent(iface, QAccessible.Event.Focus))

    def _ensure_placed(self, follow: bool = False) -> bool:
        """A cursor on a cell; with `follow`, back at the start when the inspected head or
        the followed query changed since it was placed (it enters where the user looks)."""
        anchor = self.source.anchor()
        if self.panel is not None and not (follow and anchor != self._anchor):
            return True
        if not self.source.panels():
            return False
        panel, row, col = self._start()
        self.place(panel, row, col, announce=False)
        return True

    # ---------------------------------------------------------------- drawing ------
    def _frames_of(self, panel):
        frames = self._frames.get(id(panel))
        if frames is None:
            frames = []
            for colour, width, z in (("#000000", 5.0, 4.0), ("#ffffff", 2.0, 4.1)):
                item = QGraphicsRectItem()
                pen = QPen(QColor(colour))
                pen.setCosmetic(True)
                pen.setWidthF(width)
                item.setPen(pen)
                item.setBrush(QBrush(Qt.BrushStyle.NoBrush))
                item.setZValue(z)
                item.setVisible(False)
                panel.plot.addItem(item, ignoreBounds=True)
                frames.append(item)
            frames = tuple(frames)
            self._frames[id(panel)] = frames
        return frames

    def _show_frames(self, panel, shown: bool) -> None:
        frames = self._frames.get(id(panel))
        for item in frames or ():
            item.setVisible(shown)

    def _draw(self) -> None:
        panel, canvas = self.panel, self.canvas
        if panel is None or canvas is None:
            return
        shown = canvas.hasFocus() and self.mode.on
        self.focus_frame.set_shown(shown)
        rect = QRectF(float(self.col), float(self.row), 1.0, 1.0)
        for item in self._frames_of(panel):
            item.setRect(rect)
            item.setVisible(shown)

    def _scroll_to(self) -> None:
        holder, canvas, panel = self._holder(), self.canvas, self.panel
        if holder is None or canvas is None or panel is None or not self.mode.on:
            return  # only a keyboard user's cursor scrolls: a click or a rebuild never does
        rect = cell_rect(canvas, panel, self.row, self.col)
        centre = canvas.mapFromGlobal(rect.center())
        holder.ensureVisible(centre.x(), centre.y(), rect.width() + 24, rect.height() + 24)

    # ----------------------------------------------------------------- keys --------
    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ShortcutOverride and cursor_key(event):
            event.accept()  # the cursor's key, not the window's shortcut
            return True
        if kind == QEvent.Type.KeyPress and cursor_key(event):
            self.mode.on = True
            if self._ensure_placed():
                self._key(event)
            return True
        shift_f10 = kind == QEvent.Type.KeyPress and event.key() == K.Key_F10
        if shift_f10 and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            if self._ensure_placed():
                self._menu()
            return True
        if kind == QEvent.Type.FocusIn:
            self.mode.focus_in(event.reason())
            if self._ensure_placed(follow=True):
                self._draw()
                self._scroll_to()
                # after Qt's own focus event for the canvas: the cell is what is spoken
                self.announce()
        elif kind == QEvent.Type.FocusOut:
            panel = self.panel
            if panel is not None:
                self._show_frames(panel, False)
            self.focus_frame.set_shown(False)
        return False

    def _key(self, event) -> None:
        key, ctrl = event.key(), bool(event.modifiers() & CTRL)
        panel = self.panel
        if key in MOVES:
            dr, dc = MOVES[key]
            if ctrl:
                self._next_panel(1 if dr + dc > 0 else -1)
            else:
                self.place(panel, self.row + dr, self.col + dc)
        elif key == K.Key_Home:
            self.place(panel, 0 if ctrl else self.row, 0)
        elif key == K.Key_End:
            self.place(panel, panel.rows - 1 if ctrl else self.row, panel.cols - 1)
        elif key == K.Key_PageUp:
            self.place(panel, 0, self.col)
        elif key == K.Key_PageDown:
            self.place(panel, panel.rows - 1, self.col)
        elif key in (K.Key_Return, K.Key_Enter):
            self.show_formula()
        elif key == K.Key_Space:
            if ctrl:
                panel.ctrl_clicked(self.row, self.col)
            else:
                panel.clicked(self.row, self.col)
            self._anchor = self.source.anchor()  # the user's own choice: the cursor stays
            self._draw()
            self.announce()
        elif key == K.Key_Menu:
            self._menu()

    def _next_panel(self, step: int) -> None:
        panels = self.source.panels()
        i = panels.index(self.panel)
        target = panels[(i + step) % len(panels)]
        self.place(target, self.row, self.col)

    def show_formula(self) -> str:
        """Enter: the cell's tooltip (its worked formula) shown beside the cell."""
        panel, canvas = self.panel, self.canvas
        if panel is None or canvas is None:
            return ""
        html = panel.tooltip_html(self.row, self.col)
        rect = cell_rect(canvas, panel, self.row, self.col)
        QToolTip.showText(rect.bottomRight(), html, canvas, rect)
        return html

    def _menu(self) -> None:
        panel, canvas = self.panel, self.canvas
        if panel is None or canvas is None:
            return
        rect = cell_rect(canvas, panel, self.row, self.col)
        panel.context_menu(rect.center(), (self.row, self.col))
