"""A widget that shows a Drawing (export/drawing.py) scaled to fit: the view on screen and
its exported figure are then one picture, painted by one piece of code.

A view subclasses `DrawingWidget` and implements `make_drawing()` from its document; the
widget rebuilds on `refresh()` (coalesced: one rebuild per event-loop turn however many
signals arrive), follows the display settings (theme, colour map, zoom) and maps mouse
positions to drawing coordinates for hit-testing (`drawing.hit(x, y)` when the drawing
has one).

A drawing is never used after the document it was made from changed: `refresh()` marks
it stale, and a paint, a click or a hover that comes before the rebuild (a dock shown
again, an expose on the same turn) rebuilds it first — a stale drawing could name a
token or a head the layer no longer has. A drawing that cannot be made or painted never
raises out of the widget: the widget shows "cannot draw this: <reason>" instead and
reports the exception once (logging, which prints to stderr when nothing else is set up).

Every other custom paintEvent of the views paints through `guarded_paint(widget)` the
same way: a painter that always ends with its saved states restored, and instead of an
exception escaping the paint (Qt would then warn "endPaint() called with active
painter" on every later paint) the plain placeholder, reported once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QPointF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QPainter
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMenu,
    QMessageBox,
    QToolTip,
    QWidget,
)

from mha_gui import theme
from mha_gui.engine.layer.session import atomic_write
from mha_gui.export.drawing import FIGURE_SUFFIXES, WRITERS, render_drawing
from mha_gui.export.painter import painter_on, saved
from mha_gui.export.text import make_font, qcolor
from mha_gui.views.settings.display_options import bind_display

log = logging.getLogger(__name__)

# The document's signals after which a view's numbers may differ.
NUMBER_SIGNALS = ("traceChanged", "tokensChanged", "shapeChanged", "configChanged", "maskChanged")
# The display settings a figure follows (a figure prints its numbers whenever there is
# room, so "show values" is not one of them).
FIGURE_SETTINGS = ("theme", "colormap", "zoom")
PLACEHOLDER_PX = 14


def follow_numbers(document, slot, signals: tuple[str, ...] = NUMBER_SIGNALS) -> None:
    """Call `slot` after each of the document's `signals` (names; by default every change
    of a number, the config, the tokens or the mask)."""
    for name in signals:
        getattr(document, name).connect(slot)


def failure_text(exc: BaseException) -> str:
    """`IndexError: list index out of range` (the exception's type and message)."""
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def paint_placeholder(painter, rect, text: str, colour) -> None:
    """Plain text, nothing that could fail in turn (no rich text, no figure code)."""
    painter.setFont(make_font(PLACEHOLDER_PX))
    painter.setPen(colour)
    flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
    painter.drawText(rect.adjusted(12, 12, -12, -12), flags, text)


def report_failure(widget: QWidget, exc: Exception) -> str:
    """The text "cannot draw this: <reason>" for `widget`, logged the first time it comes
    (again only after a paint that worked: `clear_failure`), not on every repaint."""
    text = f"cannot draw this: {failure_text(exc)}"
    if getattr(widget, "_paint_failure", None) != text:
        widget._paint_failure = text
        name = widget.objectName() or type(widget).__name__
        log.error("%s: %s", name, text, exc_info=exc)
    return text


def clear_failure(widget: QWidget) -> None:
    widget._paint_failure = None


@contextmanager
def guarded_paint(widget: QWidget, background=None) -> Iterator:
    """`with guarded_paint(self) as painter:` in a paintEvent: the painter on `widget`,
    its state saved and restored and the painter ended whichever way the block is left;
    an exception in the block is not raised out of the paint: the widget is cleared
    (to `background`, default its window colour) and shows "cannot draw this: <reason>",
    reported once."""
    from mha_gui.export.painter import painter_on

    with painter_on(widget) as painter:
        try:
            with saved(painter):
                yield painter
        except Exception as exc:  # a paint never raises: the placeholder instead
            text = report_failure(widget, exc)
            pal = widget.palette()
            fill = background if background is not None else pal.color(pal.ColorRole.Window)
            painter.fillRect(widget.rect(), fill)
            paint_placeholder(painter, widget.rect(), text, pal.color(pal.ColorRole.WindowText))
        else:
            clear_failure(widget)


class DrawingWidget(QWidget):
    """Paints `self.drawing` centred and scaled to the widget (never above `max_scale`)."""

    hitClicked = Signal(object)
    max_scale = 1.0
    min_scale = 0.5  # of the drawing's size: below it, the dock's scroll area scrolls
    # A view whose figure can lay itself out for a width sets (narrowest, widest) in
    # drawing units: its make_drawing lays the figure out for `layout_width()` (the
    # widget's width at full size), laid out again when that changes. With min_scale 1
    # it is painted at full size (never below 100 % when zoomed in a narrower dock) and
    # what is taller than the dock scrolls vertically:
    # a side dock at 1280×720 is ~530 px wide, and a 1120-unit figure fitted into it
    # would print its 15-unit notes at 7 px.
    reflow: tuple[float, float] | None = None

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.drawing = None
        self.failure: str | None = None  # why the drawing could not be made or painted
        self._dirty = True  # the drawing (if any) is older than the document
        self.theme_name = "light"
        self.colormap = theme.DEFAULT_COLORMAP
        self.zoom = 1.0
        self.rebuild_count = 0
        self._laid_out_for = -1.0  # the layout_width() of the drawing (reflowing views)
        self.setMouseTracking(True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._rebuild)

    # ------------------------------------------------------------ subclass API ----
    def make_drawing(self):
        """The Drawing of what this view shows now (subclasses implement it)."""
        raise NotImplementedError

    def refresh(self, *_args) -> None:
        """The document changed: the drawing is stale. Rebuilt on the next turn, or at
        the latest before it is next painted or hit; in a window's hidden dock nothing
        is built until the dock is shown (a 2048-token layer's drawing costs ~0.5 s,
        which a hidden view has no reason to spend)."""
        self._dirty = True
        if not self._in_hidden_dock():
            self._timer.start()

    def _in_hidden_dock(self) -> bool:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        return parent is not None and parent.isHidden()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dirty:
            self._timer.start()

    def follow(
        self, signals: tuple[str, ...], settings=None, display: tuple[str, ...] = FIGURE_SETTINGS
    ) -> None:
        """Rebuild after each of the document's `signals` (names, e.g. NUMBER_SIGNALS) and
        follow the display settings `display` through this widget's `set_<name>`
        methods (settings may be None, e.g. in tests)."""
        follow_numbers(self.document, self.refresh, signals)
        if settings is not None:
            bind_display(self, settings, display)

    # ---------------------------------------------------------- display settings --
    def set_theme(self, name: str) -> None:
        theme.palette(name)
        self.theme_name = name
        self.update()

    def set_colormap(self, name: str) -> None:
        self.colormap = theme.check_colormap(name)
        self.update()

    def set_zoom(self, factor: float) -> None:
        self.zoom = float(factor)
        self.refresh()

    # ----------------------------------------------------------------- painting ---
    def _rebuild(self) -> None:
        """The coalesced rebuild (the timer's slot)."""
        if not self._in_hidden_dock():  # hidden in a dock meanwhile: built when shown
            self._build()

    def current_drawing(self, repaint: bool = True):
        """The drawing of the document as it is now: rebuilt first when stale (also in a
        hidden dock: whoever asks — a paint, a grab, a click — needs it now)."""
        if self._dirty:
            self._build(repaint)
        return self.drawing

    def _build(self, repaint: bool = True) -> None:
        self._timer.stop()
        self._dirty = False
        self.rebuild_count += 1
        before = None if self.drawing is None else (self.drawing.width, self.drawing.height)
        if self.reflow is not None:
            self._laid_out_for = self.layout_width()
        try:
            self.drawing = self.make_drawing()
        except Exception as exc:  # a slot and a paint never raise: say so in the widget
            self.drawing = None
            self._failed(exc)
        else:
            self.failure = None
        after = None if self.drawing is None else (self.drawing.width, self.drawing.height)
        if after != before:
            self.updateGeometry()  # a new minimum size: the dock's scroll area follows
        if repaint:
            self.update()

    def layout_width(self) -> float:
        """The width (drawing units) a reflowing view lays its drawing out for: the
        widget's width at full size, within `reflow`."""
        narrowest, widest = self.reflow
        return max(narrowest, min(widest, self.width() / self.zoom))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.reflow is not None and abs(self.layout_width() - self._laid_out_for) > 0.5:
            self.refresh()  # laid out again for the new width, on the next turn

    def transform(self) -> tuple[float, float, float]:
        """(scale, x offset, y offset) that fit the drawing into the widget."""
        d = self.drawing
        if d is None or d.width <= 0 or d.height <= 0:
            return 1.0, 0.0, 0.0
        scale = min(self.width() / d.width, self.height() / d.height, self.max_scale * self.zoom)
        return scale, (self.width() - d.width * scale) / 2, (self.height() - d.height * scale) / 2

    def paintEvent(self, _event):
        drawing = self.current_drawing(repaint=False)  # this paint shows it
        background = qcolor(theme.palette(self.theme_name).background)
        with painter_on(self) as painter:
            painter.fillRect(self.rect(), background)
            if drawing is not None:
                try:
                    with saved(painter):
                        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                        scale, dx, dy = self.transform()
                        painter.translate(dx, dy)
                        painter.scale(scale, scale)
                        drawing.paint(painter, self.theme_name, self.colormap)
                except Exception as exc:  # the placeholder instead of a half-drawn figure
                    self._failed(exc)
                    painter.fillRect(self.rect(), background)
                else:
                    self.failure = None
                    clear_failure(self)
            if self.failure is not None:
                self._paint_placeholder(painter)

    def placeholder_text(self) -> str:
        return f"cannot draw this: {self.failure}"

    def _paint_placeholder(self, painter) -> None:
        colour = qcolor(theme.palette(self.theme_name).muted)
        paint_placeholder(painter, self.rect(), self.placeholder_text(), colour)

    def _failed(self, exc: Exception) -> None:
        """Remember why, and report it the first time (not on every repaint)."""
        self.failure = failure_text(exc)
        report_failure(self, exc)

    def sizeHint(self) -> QSize:
        if self.drawing is None:
            return QSize(360, 260)
        return QSize(int(self.drawing.width * 0.6), int(self.drawing.height * 0.6))

    def minimumSizeHint(self) -> QSize:
        """Never draw text smaller than `min_scale` of its size (about 7 px for 14-unit
        labels): in a narrow dock the view scrolls rather than shrink out of reading."""
        if self.drawing is None:
            return QSize(160, 120)
        scale = self.min_scale * self.zoom
        if self.reflow is not None:
            # its narrowest layout at 100 % (its own width would never shrink; zoomed,
            # a dock too narrow for it at the zoom shows it a little smaller, not cut),
            # and as tall as it is drawn at this width
            if self.min_scale <= 0:  # it shrinks into any room (the contributions)
                return QSize(0, 0)
            drawn = min(self.width() / self.drawing.width, self.max_scale * self.zoom)
            height = self.drawing.height * max(drawn, self.min_scale)
            return QSize(int(self.reflow[0] * self.min_scale), int(height) + 1)
        return QSize(int(self.drawing.width * scale), int(self.drawing.height * scale))

    # -------------------------------------------------------------------- mouse ---
    def to_drawing(self, pos) -> QPointF:
        scale, dx, dy = self.transform()
        return QPointF((pos.x() - dx) / scale, (pos.y() - dy) / scale)

    def hit(self, pos):
        """What the drawing of the document as it is now has at a widget position (None
        without a drawing or a `hit` method)."""
        drawing = self.current_drawing()
        if drawing is None or not hasattr(drawing, "hit"):
            return None
        p = self.to_drawing(pos)
        return drawing.hit(p.x(), p.y())

    def mousePressEvent(self, event):
        if event.button() == Qt.MouseButton.LeftButton:
            found = self.hit(event.position())
            if found is not None:
                self.hitClicked.emit(found)
                return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event):
        found = self.hit(event.position())
        tip = getattr(self.drawing, "tooltip", None)
        text = tip(found) if (tip is not None and found is not None) else ""
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), text, self)
        else:
            QToolTip.hideText()
        self.hovered(found)
        super().mouseMoveEvent(event)

    def hovered(self, found) -> None:
        """Subclasses react to the item under the mouse (e.g. show one token's lines)."""

    # ------------------------------------------------------------------- export ---
    def export_drawing(self, vector: bool):
        """What "Export figure" writes: by default the drawing on screen (a view that lays
        itself out for a narrow dock returns its full-size drawing here)."""
        return self.make_drawing()

    def contextMenuEvent(self, event):
        self.export_menu().exec(event.globalPos())

    def export_menu(self) -> QMenu:
        """Right-click: export the figure as PNG/SVG/PDF, or copy it as an image."""
        menu = QMenu(self)
        name = self.objectName() or "view"
        export = menu.addAction("Export figure (PNG, SVG, PDF)…")
        export.setObjectName(f"{name}.export")
        export.triggered.connect(self.export_figure)
        copy = menu.addAction("Copy figure")
        copy.setObjectName(f"{name}.copy")
        copy.triggered.connect(self.copy_figure)
        return menu

    def export_figure(self) -> str | None:
        name = (self.objectName() or "view").removesuffix("View") + ".png"
        return save_drawing_as(
            self, "Export figure", name, self.export_drawing, self.theme_name, self.colormap
        )

    def copy_figure(self) -> None:
        try:
            drawing = self.export_drawing(False)
            image = render_drawing(drawing, None, self.theme_name, self.colormap)
        except Exception as exc:  # said, never raised out of the menu's slot
            self._failed(exc)
            QMessageBox.critical(self, "Copy failed", f"cannot draw this: {failure_text(exc)}")
            return
        QGuiApplication.clipboard().setImage(image)


def save_drawing_as(parent, title: str, name: str, make, theme_name: str, colormap: str):
    """Ask for a .png/.svg/.pdf name (QFileDialog) and write `make(vector)` there, atomically;
    the path written, or None (cancelled, or the error shown in a message box)."""
    path, _ = QFileDialog.getSaveFileName(
        parent, title, name, "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"
    )
    if not path:
        return None
    if Path(path).suffix.lower() not in FIGURE_SUFFIXES:
        path += ".png"
    suffix = Path(path).suffix.lower()
    try:
        drawing = make(suffix != ".png")
        atomic_write(
            Path(path),
            lambda tmp: WRITERS[suffix](tmp, drawing, theme_name=theme_name, colormap=colormap),
        )
    except (OSError, ValueError) as exc:  # a file that cannot be written, a bad choice
        QMessageBox.critical(parent, "Export failed", str(exc))
        return None
    except Exception as exc:  # a figure that cannot be drawn: said, never raised
        log.error("%s: cannot draw this: %s", title, failure_text(exc), exc_info=exc)
        QMessageBox.critical(parent, "Export failed", f"cannot draw this: {failure_text(exc)}")
        return None
    return path
