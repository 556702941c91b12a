"""A table header whose size Qt does not measure label by label through Python.

QHeaderView's own size hint asks the model for up to 200 sections' labels, fonts,
alignments and icons, each through a Python `headerData()` call, and styles every one
(~40 µs a section). It forgets that hint whenever the model resets or a header label
changes — opening an n = 2048 layer, renaming a token, the W_O rows' head colours on a
head switch — and every editor's two headers then measured again: 50–60 ms of the UI
thread for the five editors of a BERT-sized layer.

`LabelHeader` asks for the same sections' display texts only, measures them with one
font metrics object (bold, an upper bound for a bold label), and has Qt size only the
widest few exactly (`sectionSizeFromContents`), so the hint is the one Qt would give.
It is remembered until the model's labels, the font or the style change.
"""

from __future__ import annotations

import heapq

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QHeaderView, QWidget

from mha_gui.views.widgets.never_raises import never_raises

# Qt's QHeaderView::sizeHint looks at the first and the last this many visible sections.
SAMPLED = 100
# Sections sized exactly by Qt: the widest labels by the bold upper bound.
EXACT = 3


class LabelHeader(QHeaderView):
    """A QHeaderView set up as QTableView sets up its own (clickable, highlighting),
    with a cheap size hint. Call `follow(model)` once the table has its model."""

    def __init__(self, orientation: Qt.Orientation, parent: QWidget | None = None):
        super().__init__(orientation, parent)
        self.setSectionsClickable(True)
        self.setHighlightSections(True)
        self._hint: QSize | None = None

    def follow(self, model) -> None:
        """Forget the hint whenever `model`'s labels or shape change."""
        for signal in (
            model.headerDataChanged,
            model.modelReset,
            model.layoutChanged,
            model.rowsInserted,
            model.rowsRemoved,
            model.columnsInserted,
            model.columnsRemoved,
        ):
            signal.connect(self.forget_hint)

    def forget_hint(self, *_args) -> None:
        self._hint = None

    def _sampled(self) -> list[int]:
        """The visible sections Qt's own hint looks at: the first and last SAMPLED."""
        count = self.count()
        first: list[int] = []
        i = 0
        while i < count and len(first) < SAMPLED:
            if not self.isSectionHidden(i):
                first.append(i)
            i += 1
        last: list[int] = []
        j = count - 1
        while j >= i and len(last) < SAMPLED:
            if not self.isSectionHidden(j):
                last.append(j)
            j -= 1
        return first + last

    @never_raises(default=QSize())
    def sizeHint(self) -> QSize:
        if self._hint is not None:
            return QSize(self._hint)
        model = self.model()
        sections = self._sampled()
        if model is None or not sections:
            return super().sizeHint()
        bold = QFont(self.font())
        bold.setBold(True)
        fm = QFontMetricsF(bold)
        orientation = self.orientation()
        display = Qt.ItemDataRole.DisplayRole

        def width(section: int) -> float:
            text = model.headerData(section, orientation, display)
            return fm.horizontalAdvance("" if text is None else str(text))

        widest = heapq.nlargest(EXACT, sections, key=width)
        hint = QSize(0, 0)
        for section in widest:
            hint = hint.expandedTo(self.sectionSizeFromContents(section))
        self._hint = hint
        return QSize(hint)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._hint = None
        super().changeEvent(event)
