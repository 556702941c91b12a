"""The stage bar's text: the title, the typeset formula and the one-line captions.

Every formula and caption is written once, in plain text with TeX-like scripts (the
stage description, engine/panels/stages.py), and typeset here through notation.rich_text, so
the bar never shows "W_i^Q" or "S_i" as typed. The labels keep one height whatever the
stage, so the bar never reflows during Play: the formula shrinks (down to the bar's own
font size) instead of wrapping when the widest formula does not fit, and a caption ends
in … instead of taking a second line (its full text is its tooltip).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QFont, QPalette, QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from mha_gui.engine.panels.notation import rich_text, unicode_text
from mha_gui.engine.panels.stages import STAGES
from mha_gui.views.widgets.drawing_widget import guarded_paint

ELLIPSIS = " …"


def stage_title(stage) -> str:
    """ "Stage 4 of 7 · Attention weights": Stage.number, the numbering people see."""
    return f"Stage {stage.number} of {len(STAGES)} · {stage.title}"


_DOCS: dict[tuple[str, str], QTextDocument] = {}


def _typeset(html: str, font: QFont) -> QTextDocument:
    """html laid out in font (kept: the bar measures the same few texts at every stage)."""
    key = (html, font.key())
    doc = _DOCS.get(key)
    if doc is None:
        if len(_DOCS) > 512:
            _DOCS.clear()
        doc = _DOCS[key] = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(font)
        doc.setHtml(html)
    return doc


def typeset_width(text: str, font: QFont) -> float:
    """The width of formula text typeset in font (its scripts set smaller)."""
    return _typeset(rich_text(text), font).idealWidth()


def _draw(painter, doc: QTextDocument, colour, x: float, y: float, scale: float = 1.0):
    context = QAbstractTextDocumentLayout.PaintContext()
    context.palette.setColor(QPalette.ColorRole.Text, colour)
    painter.save()
    painter.translate(x, y)
    painter.scale(scale, scale)
    doc.documentLayout().draw(painter, context)
    painter.restore()


class ElidedLabel(QLabel):
    """One line of formula text, typeset, that ends in … (at a word) when narrower than it.

    `text()` stays the plain full text and the accessible name reads it with Unicode
    scripts (Sᵢ, not S_i); the layout may shrink the label to nothing.
    """

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setAccessibleName(unicode_text(text))
        self.update()

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.fontMetrics().height())

    def sizeHint(self) -> QSize:
        width = typeset_width(self.text(), self.font())
        return QSize(int(width) + 4, self.fontMetrics().height())

    def shown_text(self, width: float | None = None) -> str:
        """The words that fit in width (the label's own by default), … if some do not."""
        width = self.contentsRect().width() if width is None else width
        text, font = self.text(), self.font()
        if typeset_width(text, font) <= width:
            return text
        words = text.split(" ")
        lo, hi = 0, len(words) - 1  # the most words that fit with the ellipsis
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if typeset_width(" ".join(words[:mid]) + ELLIPSIS, font) <= width:
                lo = mid
            else:
                hi = mid - 1
        return (" ".join(words[:lo]) + ELLIPSIS).strip()

    def paintEvent(self, event) -> None:
        with guarded_paint(self) as painter:
            rect = self.contentsRect()
            doc = _typeset(rich_text(self.shown_text(rect.width())), self.font())
            y = rect.y() + (rect.height() - doc.size().height()) / 2
            painter.setClipRect(rect)
            _draw(painter, doc, self.palette().color(self.foregroundRole()), rect.x(), y)


class FormulaLabel(QLabel):
    """A stage's formula, typeset large; narrower than it, it is drawn smaller (down to
    `1 / grow` of its font, the bar's own size) instead of wrapping, so its height — and
    the bar's — is the same at every stage. `text()` is the rich text shown."""

    def __init__(self, grow: float, parent=None):
        super().__init__(parent)
        self.grow = grow
        self.widest = 0.0  # the width the widest formula of the stages needs
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def set_formula(self, text: str) -> None:
        self.setText(rich_text(text))
        self.setAccessibleName(unicode_text(text))
        self.updateGeometry()

    def _doc(self) -> QTextDocument:
        return _typeset(self.text(), self.font())

    def line_height(self) -> int:
        return int(_typeset("Xg", self.font()).size().height()) + 2

    def set_widest(self, width: float) -> None:
        """Ask for the room of the widest formula at every stage (what follows never moves)."""
        self.widest = width
        self.updateGeometry()

    def _need(self) -> float:
        return max(self.widest, self._doc().idealWidth())

    def sizeHint(self) -> QSize:
        return QSize(int(self._need()) + 4, self.line_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(int(self._need() / self.grow) + 4, self.line_height())

    def drawn_scale(self) -> float:
        """How much the formula is drawn at (1: its own size; 1 / grow at the least)."""
        need = self._doc().idealWidth()
        room = self.contentsRect().width() - 2
        return 1.0 if need <= room else max(1 / self.grow, room / need)

    def paintEvent(self, event) -> None:
        with guarded_paint(self) as painter:
            rect = self.contentsRect()
            doc, scale = self._doc(), self.drawn_scale()
            y = rect.y() + (rect.height() - doc.size().height() * scale) / 2
            painter.setClipRect(rect)
            _draw(painter, doc, self.palette().color(self.foregroundRole()), rect.x(), y, scale)


class FormulaLine(QWidget):
    """The formula and, beside it, the shapes over the sentence: one unit of the flow
    that asks only for the room the formula needs at its smallest and takes the rest."""

    def __init__(self, formula: FormulaLabel, shapes: ElidedLabel, what: ElidedLabel):
        super().__init__()
        self.formula = formula
        captions = QWidget()
        column = QVBoxLayout(captions)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(shapes)
        column.addWidget(what)
        captions.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(16)
        row.addWidget(formula)
        row.addWidget(captions, 1)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def minimumSizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(self.formula.minimumSizeHint().width() + 16, hint.height())
