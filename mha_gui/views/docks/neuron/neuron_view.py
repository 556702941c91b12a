"""The neuron view: why the followed query attends to a key, one dimension at a time.

For the inspected head i, the followed query j and a key k (click one; by default the key
with the largest weight), it shows q_j and k_k (rotated when RoPE is on), their
elementwise product q_j ⊙ k_k as coloured cells and as a running sum that climbs to
Σ = q_j · k_k, then × scale = S_i[j, k]; below, every key's score and softmax weight for
query j as bars, the blocked keys hatched and the chosen key highlighted.

The figure is a Drawing (export/drawing.py): the same object paints the dock widget and
`mha-gui export --view neuron --head I --query J [--key K]`. This module is the dock and
its registration; the layout is export/figures/neuron_layout.py, the painting (and the
figure's builder) export/figures/neuron.py.
"""

from __future__ import annotations

from mha_gui.engine.panels.stage_panels import check_weights_range
from mha_gui.export.figures.neuron import NeuronDrawing
from mha_gui.export.figures.neuron_layout import MIN_WIDTH, WIDTH
from mha_gui.views.docks.dock_width import widen_on_show
from mha_gui.views.widgets.drawing_widget import FIGURE_SETTINGS, NUMBER_SIGNALS, DrawingWidget
from mha_gui.views.window.registry import ViewSpec, register_view


class NeuronView(DrawingWidget):
    """The dock: follows the document's head, query and numbers; a click on a key takes
    that key's score apart (a click on the chosen key goes back to the strongest key).
    The chosen key is view state, not an undo step; it is kept when the head changes
    (compare heads on one pair) and reset when the query changes. Follows View ▸ Weights
    range. Laid out for the dock's width at full size (narrower: wrapped texts, the two
    key charts stacked); taller than the dock, it scrolls."""

    reflow = (MIN_WIDTH, WIDTH)
    min_scale = 1.0

    def __init__(self, document, settings=None, parent=None):
        super().__init__(document, parent)
        self.key: int | None = None
        self.weights_range = "fixed"
        self._query = document.view.query
        self.follow(NUMBER_SIGNALS, settings, (*FIGURE_SETTINGS, "weights_range"))
        document.viewChanged.connect(self._view_changed)
        self.hitClicked.connect(self._clicked)

    def set_key(self, key: int | None) -> None:
        """Take key `key` apart (None: the strongest key of the query)."""
        if key is not None and not 0 <= int(key) < self.document.config.n:
            raise ValueError(f"key {key} is out of range: tokens 0..{self.document.config.n - 1}")
        self.key = None if key is None else int(key)
        self.refresh()

    def set_weights_range(self, name: str) -> None:
        self.weights_range = check_weights_range(name)
        self.refresh()

    def _view_changed(self) -> None:
        if self.document.view.query != self._query:
            self._query = self.document.view.query
            self.key = None
        self.refresh()

    def _clicked(self, item) -> None:
        kind, index = item
        if kind == "key":
            self.set_key(None if index == self.key else index)

    def make_drawing(self, interactive: bool = True, width: float | None = None) -> NeuronDrawing:
        doc = self.document
        if self.key is not None and self.key >= doc.config.n:
            self.key = None  # fewer tokens now
        view = doc.view
        return NeuronDrawing(
            doc, view.head, view.query, self.key, self.weights_range, interactive=interactive,
            width=self.layout_width() if width is None else width,
        )  # fmt: skip

    def showEvent(self, event) -> None:
        super().showEvent(event)
        widen_on_show(self, lambda: WIDTH * self.zoom)  # as wide as the figure, if it may

    def export_drawing(self, vector: bool) -> NeuronDrawing:
        """The figure on paper: at its own width, without "click a key below…" (a file
        has no mouse)."""
        return self.make_drawing(interactive=False, width=WIDTH)


register_view(ViewSpec("neuron", NeuronView, "neuronView", "Neuron view", figure="neuron"))

__all__ = ["NeuronView"]
