"""What each head adds to the output, token by token, and switches to turn heads off.

Rows are tokens; one column per head shows ‖C_i[t]‖ = ‖Z_i W_O^i‖ (the L2 norm over the
d_model features of head i's share of Y) as a bar in the head's colour with its number,
and a last column the size of the heads' sum, ‖Y − b_O‖ (= ‖Y‖ without biases). All bars
share one scale. A switched-off head's column is greyed, titled "off", and its bars are
hatched outlines of what the head *would* add (from its still-computed weights), so the
student sees what is lost.

The dock (`contributionView`) holds one check box per head, `ablate.0` … `ablate.{h-1}`:
**checked = head switched off** (ablated, Z_i = 0). Each click is one undo step through
`Document.set_ablated`; the boxes follow the document (undo unchecks them), never the
reverse. The same drawing is `mha-gui export --view contributions [--ablate 1,3]`. This
module is the dock and its registration; the figure is export/figures/contributions.py.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from mha_gui import theme
from mha_gui.engine.layer.numbers import sub
from mha_gui.export.drawing import FigureOptions
from mha_gui.export.figures.contributions import (
    MAX_WIDTH,
    Cell,
    ContributionDrawing,
    contribution_drawing,
)
from mha_gui.views.widgets.drawing_widget import DrawingWidget
from mha_gui.views.widgets.flow_layout import FlowLayout
from mha_gui.views.widgets.retire import retire
from mha_gui.views.window.registry import ViewSpec, register_view


# --------------------------------------------------------------------- widgets -------
class ContributionCanvas(DrawingWidget):
    """The bar table on screen; a click on a bar follows that token and inspects that head."""

    max_scale = 1.2
    min_scale = 0.0  # lays itself out for the dock's width instead of scrolling
    reflow = (240.0, MAX_WIDTH)

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.setObjectName("contributionCanvas")
        self.follow(
            ("traceChanged", "configChanged", "tokensChanged", "viewChanged"),
            settings,
        )
        self.hitClicked.connect(self._clicked)

    def make_drawing(self) -> ContributionDrawing:
        """Laid out for this widget's width (at the zoom), so a narrow dock stays legible."""
        v = self.document.view
        options = FigureOptions(head=v.head, query=v.query)
        return contribution_drawing(self.document, options, self.layout_width())

    def _clicked(self, item) -> None:
        if isinstance(item, Cell):
            self.document.set_query(item.token)
        if item.head is not None:
            self.document.set_head(item.head)


class ContributionView(QWidget):
    """The dock: switches `ablate.i` (checked = head i off) above the bar table. The
    switches follow the configuration whether the dock is shown or not: there is one per
    head of the layer, never one for a head it no longer has."""

    def __init__(self, document, settings=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.boxes: list[QCheckBox] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.bar = QWidget(self)
        self.bar.setObjectName("ablateBar")
        row = QHBoxLayout(self.bar)
        row.setContentsMargins(0, 0, 0, 0)
        self.switches_label = QLabel("Switch off:", self.bar)
        self.switches_label.setToolTip(
            "Check a head to switch it off (ablate it): its Z_i becomes 0, so it adds nothing "
            "to Y. Its attention weights are still computed and shown. Each switch is one "
            "undo step and is saved with the session."
        )
        row.addWidget(self.switches_label, 0, Qt.AlignmentFlag.AlignTop)
        self.flow_host = QWidget(self.bar)
        self.flow = FlowLayout(self.flow_host, h_spacing=10, v_spacing=2)
        row.addWidget(self.flow_host, 1)
        layout.addWidget(self.bar)
        self.canvas = ContributionCanvas(document, settings, self)
        layout.addWidget(self.canvas, 1)
        document.configChanged.connect(self.sync)  # also after every change of shape
        self.sync()

    # ------------------------------------------------------------------ switches ---
    def sync(self, *_args) -> None:
        """Make the boxes show the document: one per head, checked = switched off."""
        h = self.document.config.h
        if len(self.boxes) != h:
            self._rebuild_boxes(h)
        off = set(self.document.config.ablate)
        for i, box in enumerate(self.boxes):
            with QSignalBlocker(box):
                box.setChecked(i in off)
            box.setText(f"head {i}" + (" (off)" if i in off else ""))

    def _rebuild_boxes(self, h: int) -> None:
        """One box per head: the boxes of heads the layer lost are gone at once."""
        for box in self.boxes[h:]:
            self.flow.removeWidget(box)
            retire(box)
        self.boxes = self.boxes[:h]
        for i in range(len(self.boxes), h):
            box = QCheckBox(f"head {i}", self.flow_host)
            box.setObjectName(f"ablate.{i}")
            box.setToolTip(
                f"Checked: head {i} is switched off (ablated) — Z{sub(i)} = 0, so it adds "
                f"nothing to Y; its weights A{sub(i)} are still shown. Unchecked: head {i} "
                "is on. One undo step."
            )
            colour = theme.head_color(i)
            box.setStyleSheet(
                f"QCheckBox::indicator {{ border: 2px solid {colour}; width: 12px; height: 12px; }}"
                f"QCheckBox::indicator:checked {{ background: {colour}; }}"
            )
            box.clicked.connect(lambda checked, i=i: self._switch(i, checked))
            self.flow.addWidget(box)
            self.boxes.append(box)
        if self.boxes:  # the label sits on the first line of boxes
            self.switches_label.setFixedHeight(self.boxes[0].sizeHint().height())

    def _switch(self, head: int, off: bool) -> None:
        try:
            if head < self.document.config.h:  # a box is never older than the layer
                self.document.set_ablated(head, bool(off))
        finally:
            self.sync()  # the box shows what the document holds, whatever happened


register_view(
    ViewSpec(
        "contributions",
        ContributionView,
        "contributionView",
        "Head contributions",
        figure="contributions",
    )
)

__all__ = ["ContributionView"]
