"""The stage bar's text: the title, the typeset formula and the one-line captions.

Every formula and caption is written once, in plain text with TeX-like scripts (the
stage description, engine/panels/stages.py), and typeset here through notation.rich_text, so
the bar never shows "W_i^Q" or "S_i" as typed. The labels keep one height whatever the
stage, so the bar never reflows during Play: the formula shrinks (down to the bar's own
font size) instead of wrapping when the widest formula does not fit, and a caption ends
in … instead of taking more lines than it has (its full text is its tooltip).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QFont, QPalette, QTextDocument
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

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
    """Formula text, typeset, on at most `lines` lines (broken at words), ending in …
    (at a word) when it needs more.

    `text()` stays the plain full text and the accessible name reads it with Unicode
    scripts (Sᵢ, not S_i); the layout may shrink the label to nothing.
    """

    def __init__(self, text: str = "", parent=None, lines: int = 1):
        super().__init__(text, parent)
        self.lines = lines
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setAccessibleName(unicode_text(text))
        self.update()

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.fontMetrics().height() * self.lines)

    def sizeHint(self) -> QSize:
        width = typeset_width(self.text(), self.font())
        return QSize(int(width) + 4, self.fontMetrics().height() * self.lines)

    def shown_lines(self, width: float | None = None) -> list[str]:
        """The words that fit in width (the label's own by default) on its lines, the
        last ending in … if some do not."""
        width = self.contentsRect().width() if width is None else width
        font, words, shown = self.font(), self.text().split(" "), []
        while words and len(shown) < self.lines - 1:
            taken = _fitting(words, width, font, "")
            if taken == 0 or taken == len(words):
                break
            shown.append(" ".join(words[:taken]))
            words = words[taken:]
        rest = " ".join(words)
        if rest and typeset_width(rest, font) > width:
            rest = (" ".join(words[: _fitting(words, width, font, ELLIPSIS)]) + ELLIPSIS).strip()
        return [*shown, rest]

    def shown_text(self, width: float | None = None) -> str:
        """What is drawn, its lines joined by spaces."""
        return " ".join(self.shown_lines(width))

    def paintEvent(self, event) -> None:
        with guarded_paint(self) as painter:
            rect = self.contentsRect()
            html = "<br>".join(rich_text(line) for line in self.shown_lines(rect.width()))
            doc = _typeset(html, self.font())
            y = rect.y() + (rect.height() - doc.size().height()) / 2
            painter.setClipRect(rect)
            _draw(painter, doc, self.palette().color(self.foregroundRole()), rect.x(), y)


def _fitting(words: list[str], width: float, font: QFont, tail: str) -> int:
    """How many of `words`, joined by spaces and followed by `tail`, fit in `width`."""
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if typeset_width(" ".join(words[:mid]) + tail, font) <= width:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
    """The formula and the sentence: one unit of the flow that asks only for the room the
    formula needs at its smallest and takes the rest.

    The sentence stands beside the formula on two lines while that leaves it at least
    BESIDE_LEAST average characters a line; narrower (150 % at 1280 px left it ~100 px:
    "Softmax …"), it goes on one line under the formula, as wide as the whole unit.
    The choice depends on widths only, never on the stage's text, so the bar keeps one
    shape at every stage.
    """

    BESIDE_LEAST = 24  # average characters a line of the sentence beside the formula

    def __init__(self, formula: FormulaLabel, what: ElidedLabel):
        super().__init__()
        self.formula, self.what = formula, what
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setHorizontalSpacing(16)
        self.grid.setVerticalSpacing(0)
        self.grid.addWidget(formula, 0, 0)
        self.beside = None
        self._place(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def _place(self, beside: bool) -> None:
        if beside == self.beside:
            return
        self.beside = beside
        self.grid.removeWidget(self.what)
        if beside:
            self.what.lines = 2
            self.grid.addWidget(self.what, 0, 1)
            self.grid.setColumnStretch(1, 1)
        else:
            self.what.lines = 1
            self.grid.addWidget(self.what, 1, 0, 1, 2, Qt.AlignmentFlag.AlignLeft)
            self.grid.setColumnStretch(1, 0)
        self.what.updateGeometry()
        self.updateGeometry()

    def fits_beside(self, width: int) -> bool:
        """Does the sentence keep BESIDE_LEAST characters a line beside the formula?"""
        room = width - self.formula.sizeHint().width() - self.grid.horizontalSpacing()
        return room >= self.what.fontMetrics().averageCharWidth() * self.BESIDE_LEAST

    def resizeEvent(self, event) -> None:
        self._place(self.fits_beside(event.size().width()))
        super().resizeEvent(event)

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def minimumSizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(self.formula.minimumSizeHint().width() + 16, hint.height())


def title_column(title: QLabel, shapes: ElidedLabel) -> QWidget:
    """The stage's title over its shapes (Sᵢ: 4×4 → Aᵢ: 4×4), as wide as the title (the
    bar fixes both widths to the widest title's): the
    shapes keep that room whatever the formula takes (beside the formula, at 150 % they
    were cut to "Sᵢ: 4×4 → …")."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    column.addWidget(title)
    column.addWidget(shapes)
    return box
