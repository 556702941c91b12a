"""What a lesson step points at, drawn over the window: outlined cells and token rows
inside the heatmap panels, a frame around a panel or a control, and a short callout.

Cells and token rows are graphics items added to the panels' own plots (they move and
zoom with the panel and never cover its numbers); panels and controls are framed by a
transparent widget laid over the whole window that lets every click through. Nothing here
changes the document. Panels are rebuilt when the stage or the shape changes, so the
marks are placed again after every such change (`refresh`).
"""

from __future__ import annotations

import contextlib

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QDockWidget, QGraphicsRectItem, QWidget

from mha_gui.engine.lessons.condition_syntax import CELL_KINDS
from mha_gui.engine.lessons.conditions import cell_position, token_position
from mha_gui.engine.lessons.lesson import Point
from mha_gui.views.widgets.drawing_widget import guarded_paint
from mha_gui.views.widgets.never_raises import never_raises

ACCENT = "#e65100"  # orange: distinct from the query outline and every colour map
CALLOUT_BG = "#fff3e0"


def panel_key(symbol: str, config) -> tuple[str, int] | None:
    """The attention view's key of panel `symbol` (`A_1` → ("A", 1), `Y` → ("Y", -1);
    `K_1` with GQA → the first query head reading K/V head 1)."""
    kind, _, index = symbol.partition("_")
    per = CELL_KINDS[kind][1]
    if per is None:
        return (kind, -1)
    i = int(index)
    if per == "group":
        heads = [h for h in range(config.h) if config.kv_group(h) == i]
        return (kind, heads[0]) if heads else None
    return (kind, i)


class PointerOverlay(QWidget):
    """A transparent layer over the main window that frames the pointed panel or control
    and shows the callout; `targets` says what was found (the tests read it)."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setObjectName("lessonOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.window_ = window
        self.point = Point()
        self.document = None
        self.items: list[tuple[object, QGraphicsRectItem]] = []  # (plot, item)
        self.targets: dict[str, object] = {}
        self._frames: list[QRect] = []
        self._callout_at: QPoint | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        window.installEventFilter(self)
        self.hide()

    # ------------------------------------------------------------------ public ----
    def show_point(self, point: Point, document) -> None:
        self.point = point
        self.document = document
        self.refresh()

    def clear(self) -> None:
        self.show_point(Point(), self.document)

    def schedule(self, *_args) -> None:
        self._timer.start()

    def refresh(self) -> None:
        """Place every mark again on the panels and widgets as they are now."""
        self._remove_items()
        self.targets = {}
        self._frames = []
        self._callout_at = None
        p, doc = self.point, self.document
        if doc is None or p.empty:
            self.hide()
            return
        view = self.window_.findChild(QWidget, "attentionView")
        if view is not None:
            self._mark_cells(view, p, doc)
        if p.panel is not None and view is not None:
            key = panel_key(p.panel, doc.config)
            panel = view.panels.get(key) if key else None
            if panel is not None:
                rect = self._plot_rect(view, panel)
                if rect is not None:
                    self.targets["panel"] = panel
                    self._frames.append(rect)
        if p.control is not None:
            widget = self.window_.findChild(QWidget, p.control)
            if widget is not None:
                _raise_dock(widget)
            if widget is not None and widget.isVisible():
                self.targets["control"] = widget
                top_left = widget.mapTo(self.window_, QPoint(0, 0))
                self._frames.append(QRect(top_left, widget.size()).adjusted(-3, -3, 3, 3))
        anchor = self._frames[0] if self._frames else self._first_cell_rect(view)
        if p.callout:
            self.targets["callout"] = p.callout
            if anchor is None:
                lesson = self.window_.findChild(QWidget, "lessonPanel")
                if lesson is not None and lesson.isVisible():
                    anchor = QRect(lesson.mapTo(self.window_, QPoint(0, 0)), lesson.size())
            self._callout_at = anchor.bottomLeft() + QPoint(0, 6) if anchor else QPoint(12, 40)
        self.setGeometry(self.window_.rect())
        self.show()
        self.raise_()
        self.update()

    # ----------------------------------------------------------------- cells -------
    def _mark_cells(self, view, p: Point, doc) -> None:
        from mha_gui.engine.lessons.check import situation

        here = situation(doc.session, doc.view)
        marked = []
        for cell in p.cells:
            try:
                row, col, _head = cell_position(cell, here)
            except ValueError:
                continue  # the student renamed a token or changed a shape
            key = panel_key(cell.symbol, doc.config)
            panel = view.panels.get(key) if key else None
            if panel is None:
                continue  # not a panel of the stage on screen
            self._add_rect(panel.plot, QRectF(col, row, 1, 1), 3.5)
            marked.append(cell)
        if marked:
            self.targets["cells"] = marked
        rows = []
        for ref in p.tokens:
            try:
                rows.append(token_position(ref, here.tokens, "token"))
            except ValueError:
                continue
        if rows:
            self.targets["tokens"] = rows
            for (_kind, _head), panel in view.panels.items():
                if not panel.query_rows:
                    continue
                for r in rows:
                    self._add_rect(panel.plot, QRectF(0, r, panel.cols, 1), 2.0, dash=True)

    def _add_rect(self, plot, rect: QRectF, width: float, dash: bool = False) -> None:
        item = QGraphicsRectItem(rect)
        pen = QPen(QColor(ACCENT))
        pen.setCosmetic(True)
        pen.setWidthF(width)
        if dash:
            pen.setStyle(Qt.PenStyle.DashLine)
        item.setPen(pen)
        item.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        item.setZValue(4)  # above the query outline (3)
        plot.addItem(item, ignoreBounds=True)
        self.items.append((plot, item))

    def _remove_items(self) -> None:
        for plot, item in self.items:
            # the panel may have been rebuilt: its plot and our item are gone with it
            with contextlib.suppress(RuntimeError, ValueError):
                plot.removeItem(item)
        self.items = []

    def _first_cell_rect(self, view) -> QRect | None:
        for _plot, item in self.items:
            rect = self._scene_rect(view, item.mapRectToScene(item.rect()))
            if rect is not None:
                return rect
        return None

    def _plot_rect(self, view, panel) -> QRect | None:
        return self._scene_rect(view, panel.plot.getViewBox().sceneBoundingRect())

    def _scene_rect(self, view, scene_rect: QRectF) -> QRect | None:
        canvas = view.canvas
        try:
            local = canvas.mapFromScene(scene_rect).boundingRect()
        except RuntimeError:
            return None
        return QRect(canvas.mapTo(self.window_, local.topLeft()), local.size())

    # ---------------------------------------------------------------- painting -----
    @never_raises(default=False)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window_ and event.type() in (
            QEvent.Type.Resize,
            QEvent.Type.LayoutRequest,
        ):
            self.schedule()
        return False

    def paintEvent(self, _event) -> None:
        with guarded_paint(self, Qt.GlobalColor.transparent) as painter:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            pen = QPen(QColor(ACCENT))
            pen.setWidthF(3.0)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for rect in self._frames:
                painter.drawRoundedRect(QRectF(rect), 6, 6)
            if self._callout_at is not None and self.point.callout:
                self._paint_callout(painter, self._callout_at, self.point.callout)

    def _paint_callout(self, painter: QPainter, at: QPoint, text: str) -> None:
        font = QFont(self.font())
        font.setBold(True)
        painter.setFont(font)
        fm = QFontMetrics(font)
        width = min(fm.horizontalAdvance(text) + 20, max(120, self.width() - at.x() - 8))
        box = fm.boundingRect(QRect(0, 0, width - 20, 400), Qt.TextFlag.TextWordWrap, text)
        rect = QRect(at.x(), at.y(), width, box.height() + 12)
        if rect.right() > self.width() - 4:
            rect.moveRight(self.width() - 4)
        if rect.bottom() > self.height() - 4:
            rect.moveBottom(at.y() - 12)
        painter.setBrush(QColor(CALLOUT_BG))
        painter.setPen(QPen(QColor(ACCENT), 2.0))
        painter.drawRoundedRect(QRectF(rect), 6, 6)
        painter.setPen(QColor("#3e2723"))
        painter.drawText(rect.adjusted(10, 6, -10, -6), Qt.TextFlag.TextWordWrap, text)


def _raise_dock(widget: QWidget) -> None:
    """A control inside a tabbed dock that is not on top: bring its tab to the front."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QDockWidget):
        parent = parent.parentWidget()
    if parent is not None and parent.isVisible() and not widget.isVisible():
        parent.raise_()
