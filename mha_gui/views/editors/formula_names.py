"""Dock tabs and menu entries named by a formula (W^Q, W_O) drawn typeset.

Qt draws a tab's or a menu item's text as plain text, and Unicode has no superscript Q,
so "W^Q" would show its caret. A proxy style draws such a label through
notation.rich_text — W with a raised Q — from the same plain title, which stays the
dock's window title (so View ▸ Panels, the tab and the dock all read one name); the
accessible name of a tab is said as words ("W Q"), never "W caret Q".
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QImage,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QMenu,
    QProxyStyle,
    QStyle,
    QStyleOptionMenuItem,
    QStyleOptionTab,
    QTabBar,
)

from mha_gui.engine.panels.notation import rich_text
from mha_gui.views.widgets.never_raises import never_raises

_MARKS = re.compile(r"[_^]")


def is_formula(text: str) -> bool:
    """A title with a script in it (W^Q, W_O): Qt's plain text would show the mark."""
    return bool(_MARKS.search(text))


def spoken(text: str) -> str:
    """What a screen reader says for a formula title: `W^Q` → "W Q", `W_O` → "W O"."""
    return re.sub(r"\s+", " ", _MARKS.sub(" ", text.replace("&", ""))).strip()


def _document(text: str, font) -> QTextDocument:
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    doc.setHtml(rich_text(text.replace("&", "")))
    return doc


def _draw(painter: QPainter, doc: QTextDocument, colour: QColor, x: float, y: float) -> None:
    context = QAbstractTextDocumentLayout.PaintContext()
    context.palette.setColor(QPalette.ColorRole.Text, colour)
    painter.save()
    painter.translate(x, y)
    doc.documentLayout().draw(painter, context)
    painter.restore()


class FormulaStyle(QProxyStyle):
    """The application's style, but a tab or menu item whose text is a formula is
    drawn with its text typeset (the rest of the control as the style draws it)."""

    def __init__(self):
        super().__init__()  # no base: the application's style, whichever it becomes
        self._menu_x: dict[tuple, float] = {}

    @never_raises()
    def drawControl(self, element, option, painter, widget=None) -> None:
        kinds = QStyle.ControlElement
        if element == kinds.CE_TabBarTabLabel and isinstance(option, QStyleOptionTab):
            if is_formula(option.text):
                return self._tab(option, painter, widget)
        elif (
            element == kinds.CE_MenuItem
            and isinstance(option, QStyleOptionMenuItem)
            and is_formula(option.text.split("\t")[0])
        ):
            return self._menu_item(option, painter, widget)
        super().drawControl(element, option, painter, widget)

    def _tab(self, option: QStyleOptionTab, painter, widget) -> None:
        text = option.text
        blank = QStyleOptionTab(option)
        blank.text = ""
        super().drawControl(QStyle.ControlElement.CE_TabBarTabLabel, blank, painter, widget)
        rect = self.subElementRect(QStyle.SubElement.SE_TabBarTabText, option, widget)
        font = widget.font() if widget is not None else painter.font()
        doc = _document(text, font)
        size = doc.size()
        colour = option.palette.color(
            QPalette.ColorRole.WindowText
            if option.state & QStyle.StateFlag.State_Enabled
            else QPalette.ColorRole.PlaceholderText
        )
        if widget is not None and isinstance(widget, QTabBar):
            tab_colour = widget.tabTextColor(widget.tabAt(option.rect.center()))
            if tab_colour.isValid():
                colour = tab_colour
        _draw(
            painter,
            doc,
            colour,
            rect.x() + (rect.width() - size.width()) / 2,
            rect.y() + (rect.height() - size.height()) / 2,
        )

    def _menu_item(self, option: QStyleOptionMenuItem, painter, widget) -> None:
        text, _, shortcut = option.text.partition("\t")
        blank = QStyleOptionMenuItem(option)
        blank.text = "\t" + shortcut if shortcut else ""
        super().drawControl(QStyle.ControlElement.CE_MenuItem, blank, painter, widget)
        doc = _document(text, option.font)
        selected = option.state & QStyle.StateFlag.State_Selected
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        if not option.state & QStyle.StateFlag.State_Enabled:
            role = QPalette.ColorRole.PlaceholderText
        rect = option.rect
        x = rect.x() + self._menu_text_x(option, widget)
        _draw(
            painter,
            doc,
            option.palette.color(role),
            x,
            rect.y() + (rect.height() - doc.size().height()) / 2,
        )

    def _menu_text_x(self, option: QStyleOptionMenuItem, widget) -> float:
        """Where the style starts a menu item's text: found once per item geometry by
        letting the style draw the item with and without a text "█" and finding the
        first column that differs (check mark and icon column are the same in both)."""
        key = (option.rect.width(), option.rect.height(), option.maxIconWidth, option.font.key())
        if key not in self._menu_x:
            images = [self._probe(option, widget, text) for text in ("", "█")]
            y = images[0].height() // 2
            self._menu_x[key] = float(
                next(
                    (
                        x
                        for x in range(images[0].width())
                        if images[0].pixel(x, y) != images[1].pixel(x, y)
                    ),
                    24,
                )
            )
        return self._menu_x[key]

    def _probe(self, option: QStyleOptionMenuItem, widget, text: str) -> QImage:
        probe = QStyleOptionMenuItem(option)
        probe.text = text
        probe.state = QStyle.StateFlag.State_Enabled
        probe.rect = option.rect.translated(-option.rect.topLeft())
        image = QImage(probe.rect.size(), QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        super().drawControl(QStyle.ControlElement.CE_MenuItem, probe, painter, widget)
        painter.end()
        return image


class _TabWatcher(QObject):
    """Gives the typesetting style to every tab bar the window makes (QMainWindow makes
    one when docks are first tabified, and more when they are dragged together)."""

    def __init__(self, window, style: FormulaStyle):
        super().__init__(window)
        self.style = style
        window.installEventFilter(self)
        for bar in window.findChildren(QTabBar):
            self.adopt(bar)

    def adopt(self, bar: QTabBar) -> None:
        if bar.style() is not self.style:
            bar.setStyle(self.style)
            bar.installEventFilter(self)
        name_tabs(bar)

    @never_raises(default=False)
    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ChildPolished and isinstance(event.child(), QTabBar):
            self.adopt(event.child())
        elif isinstance(obj, QTabBar) and kind in (QEvent.Type.Show, QEvent.Type.LayoutRequest):
            name_tabs(obj)
        return False


def name_tabs(bar: QTabBar) -> None:
    """Each formula tab's accessible name said as words (W^Q → "W Q")."""
    for i in range(bar.count()):
        text = bar.tabText(i)
        if is_formula(text) and bar.accessibleTabName(i) != spoken(text):
            bar.setAccessibleTabName(i, spoken(text))


def typeset_formula_names(window, menus: list[QMenu]) -> FormulaStyle:
    """Typeset the window's dock tabs and the given menus' formula entries."""
    style = FormulaStyle()
    style.setParent(window)
    _TabWatcher(window, style)  # a child of the window: it lives as long
    for menu in menus:
        menu.setStyle(style)
    return style
