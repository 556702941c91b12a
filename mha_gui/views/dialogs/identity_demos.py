"""Tools ▸ Identities: five small windows that check an identity on the numbers being edited.

Each window (a non-modal QDialog, objectName `identityDialog.<name>`) shows both sides as
a figure (export/figures/identities.py, also `mha-gui export --view identity-NAME`; Save
figure… writes it as PNG/SVG/PDF), the largest difference (0, or ~1e-16 from float64
rounding) and what the identity needs
(GQA groups, biases, RoPE, switched-off heads). They follow every edit. Only "Permute
heads" changes the document, as one undo step; the others work on copies. The arithmetic
is mha_gui/engine/teaching/identities.py.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from mha_gui.engine.panels.notation import unicode_text
from mha_gui.engine.teaching import identities as ids
from mha_gui.export.figures.difference import change_text
from mha_gui.export.figures.identities import identity_figure, identity_on
from mha_gui.export.figures.message import MessageDrawing
from mha_gui.export.text import rich_html
from mha_gui.views.widgets.drawing_widget import DrawingWidget, follow_numbers, save_drawing_as
from mha_gui.views.window.registry import ActionSpec, register_action

# name → (menu text, the sentence the window opens with)
DEMOS = {
    "packed": (
        "Identity: packed projection = per-head projections",
        "One product X·W^Q_packed, with the heads' W^Q_i side by side (d_model × h·d_k), "
        "gives every head's Q_i at once: column block i is Q_i.",
    ),
    "split": (
        "Identity: split, then concat, is the identity",
        "Splitting H into h blocks of d_v columns gives the heads' Z_i; concatenating "
        "them again gives H back, exactly.",
    ),
    "permute": (
        "Identity: permute heads (W_O's row blocks with them)…",
        "Renumbering the heads — each head's W^Q (and K/V), together with its row block of "
        "W_O — leaves the output Y unchanged. Apply it to the document as one undoable "
        "edit.",
    ),
    "scale": (
        "Identity: fold the scale into W^Q",
        "Multiplying W^Q by the scale and setting the scale to 1 gives the same scores and "
        "weights (computed on a copy: the document does not change).",
    ),
    "shift": (
        "Identity: softmax ignores a constant added to a row",
        "Adding the same constant c to every score of one query's row leaves that row's "
        "weights unchanged: e^c cancels between numerator and denominator.",
    ),
}


def apply_permutation(document, perm) -> float:
    """Permute the document's heads as ONE undo step ("Permute heads (…)").

    Returns max|Y_after − Y_before|; ValueError (nothing changes) for a permutation that
    is not one, splits a GQA group, or leaves every head in place."""
    perm = ids.check_permutation(document.config, perm)
    if perm == tuple(range(document.config.h)):
        raise ValueError("that permutation leaves every head in place: nothing to apply")
    before = np.array(document.trace().output, copy=True)
    new = ids.permute_heads(document.snapshot(), perm)
    label = f"Permute heads ({' '.join(str(p) for p in perm)})"
    stack = document.undo_stack
    stack.beginMacro(label)
    try:
        for name, value in new.params.as_dict().items():
            document.set_matrix(name, value, label)
        if new.config.ablate != document.config.ablate:
            document.set_config(ablate=new.config.ablate, label=label)
    finally:
        stack.endMacro()
    return float(np.max(np.abs(np.asarray(document.trace().output) - before)))


def parse_permutation(text: str) -> list[int]:
    """`3 2 1 0`, `3,2,1,0` or `[3, 2, 1, 0]` → [3, 2, 1, 0]; ValueError saying how."""
    cleaned = text.replace(",", " ").replace("[", " ").replace("]", " ").split()
    try:
        return [int(t) for t in cleaned]
    except ValueError:
        raise ValueError(
            f"{text.strip()!r} is not a list of head numbers: write e.g. 1 0 3 2"
        ) from None


class IdentityFigure(DrawingWidget):
    """The identity's two sides, drawn by the exported figure's code."""

    def __init__(self, dialog: IdentityDialog):
        super().__init__(dialog.document, dialog)
        self.dialog = dialog
        self.setObjectName("identityView")
        self.setMinimumSize(480, 300)

    def make_drawing(self):
        identity, problem = self.dialog.current()
        if identity is None:
            return MessageDrawing("Cannot show this identity", [problem])
        return identity_figure(identity, self.document.tokens)


class IdentityDialog(QDialog):
    """One identity, live on the document's numbers."""

    def __init__(self, name: str, document, parent=None, settings=None):
        super().__init__(parent)
        if name not in DEMOS:
            raise ValueError(f"unknown identity {name!r}; choose {', '.join(DEMOS)}")
        self.name = name
        self.document = document
        self.setObjectName(f"identityDialog.{name}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setModal(False)
        text, intro = DEMOS[name]
        title = text.removeprefix("Identity: ").rstrip("…")
        # capitalised without str.capitalize, which lowercased W^Q to w^q
        self.setWindowTitle(unicode_text(title[:1].upper() + title[1:]))
        self.resize(980, 720)
        layout = QVBoxLayout(self)
        self.intro = QLabel(rich_html(intro))
        self.intro.setWordWrap(True)
        self.intro.setObjectName("identity.intro")
        layout.addWidget(self.intro)
        self.controls = QHBoxLayout()
        layout.addLayout(self.controls)
        self._build_controls()
        self.figure = IdentityFigure(self)
        layout.addWidget(self.figure, 1)
        self.result = QLabel()
        self.result.setObjectName("identity.difference")
        self.result.setTextFormat(Qt.TextFormat.RichText)
        self.result.setWordWrap(True)
        layout.addWidget(self.result)
        if self.applied is not None:
            self.applied.hide()
            layout.addWidget(self.applied)
        self.notes = QLabel()
        self.notes.setObjectName("identity.notes")
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        self.notes.setWordWrap(True)
        layout.addWidget(self.notes)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        save = QPushButton("Save figure…")
        save.setObjectName("identity.save")
        save.clicked.connect(self.save_figure)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons.addWidget(save)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        follow_numbers(document, self.refresh)
        if settings is not None:
            for setting in ("theme", "colormap"):
                settings.follow(setting, getattr(self.figure, f"set_{setting}"))
        self.refresh()

    # ---------------------------------------------------------------- controls -----
    def _build_controls(self) -> None:
        c = self.document.config
        self.which = self.perm = self.head = self.query = self.constant = None
        self.applied = None
        if self.name == "packed":
            self.controls.addWidget(QLabel("projection:"))
            self.which = QComboBox()
            self.which.setObjectName("identity.which")
            self.which.addItems(["Q", "K", "V"])
            self.which.currentTextChanged.connect(self.refresh)
            self.controls.addWidget(self.which)
        elif self.name == "permute":
            self.controls.addWidget(QLabel("new head j is old head π(j), π ="))
            self.perm = QLineEdit(" ".join(str(p) for p in ids.default_permutation(c)))
            self.perm.setObjectName("identity.permutation")
            self.perm.setAccessibleName("Head permutation π")
            self.perm.setToolTip("head numbers separated by spaces, e.g. 1 0 3 2")
            self.perm.textChanged.connect(self.refresh)
            self.controls.addWidget(self.perm, 1)
            apply = QPushButton("Apply to the document (one undo step)")
            apply.setObjectName("identity.apply")
            apply.clicked.connect(self.apply)
            self.controls.addWidget(apply)
            self.applied = QLabel()
            self.applied.setObjectName("identity.applied")
            self.applied.setTextFormat(Qt.TextFormat.RichText)
            self.applied.setWordWrap(True)
        elif self.name == "shift":
            v = self.document.view
            self.head = self._spin("head", "identity.head", c.h - 1, v.head)
            self.query = self._spin("query row", "identity.query", c.n - 1, v.query)
            self.controls.addWidget(QLabel("constant c"))
            self.constant = QDoubleSpinBox()
            self.constant.setObjectName("identity.constant")
            self.constant.setAccessibleName("constant c")
            self.constant.setRange(-1000.0, 1000.0)
            self.constant.setDecimals(3)
            self.constant.setValue(5.0)
            self.controls.addWidget(self.constant)
            for box in (self.head, self.query, self.constant):
                box.valueChanged.connect(self.refresh)
        self.controls.addStretch(1)

    def _spin(self, label: str, name: str, top: int, value: int) -> QSpinBox:
        self.controls.addWidget(QLabel(label))
        box = QSpinBox()
        box.setObjectName(name)
        box.setAccessibleName(label)
        box.setRange(0, top)
        box.setValue(value)
        self.controls.addWidget(box)
        return box

    # ---------------------------------------------------------------- identity -----
    def current(self) -> tuple[ids.Identity | None, str]:
        """The identity on the document's numbers now, or (None, why not)."""
        doc = self.document
        session = doc.snapshot()
        trace = doc.trace()
        try:
            chosen = {"trace": trace}
            if self.name == "packed":
                chosen["which"] = self.which.currentText()
            elif self.name == "permute":
                chosen["perm"] = parse_permutation(self.perm.text())
            elif self.name == "shift":
                chosen.update(head=self.head.value(), query=self.query.value())
                chosen["c"] = self.constant.value()
            return identity_on(self.name, session, **chosen), ""
        except ValueError as exc:
            return None, str(exc)

    def refresh(self, *_args) -> None:
        if self.head is not None:  # the layer may have lost heads or tokens
            for box, top in (
                (self.head, self.document.config.h),
                (self.query, self.document.config.n),
            ):
                box.blockSignals(True)
                box.setMaximum(top - 1)
                box.blockSignals(False)
        identity, problem = self.current()
        self.identity = identity
        if identity is None:
            self.result.setText(f"<b>{rich_html(problem)}</b>")
            self.notes.setText("")
        else:
            self.result.setText(result_html(identity))
            self.notes.setText("<br>".join(f"• {rich_html(n)}" for n in identity.notes))
        self.figure.refresh()

    # ----------------------------------------------------------------- actions -----
    def apply(self) -> float | None:
        """Permute the document's heads (one undo step); max|Y_after − Y_before| or None."""
        try:
            diff = apply_permutation(self.document, parse_permutation(self.perm.text()))
        except ValueError as exc:
            self.applied.setText(f"<b>Not applied:</b> {rich_html(str(exc))}")
            self._show_applied()
            return None
        self.applied.setText(
            f"<b>Applied</b> as one undo step (Edit ▸ Undo restores it): "
            f"max|Y<sub>after</sub> − Y<sub>before</sub>| = <b>{_html(change_text(diff))}</b>"
        )
        self._show_applied()
        return diff

    def _show_applied(self) -> None:
        self.applied.show()

    def save_figure(self) -> str | None:
        """Save figure…: the identity's figure as PNG/SVG/PDF; the path written or None."""
        if self.identity is None:
            return None
        identity, tokens = self.identity, self.document.tokens
        return save_drawing_as(
            self,
            "Save the identity's figure",
            f"identity-{self.name}.png",
            lambda vector: identity_figure(identity, tokens, vector=vector),
            self.figure.theme_name,
            self.figure.colormap,
        )


def _html(text: str) -> str:
    return rich_html(text)


def result_html(identity: ids.Identity) -> str:
    """`Largest difference: 2.2×10⁻¹⁶ — equal up to float64 rounding` (+ each check)."""
    verdict = (
        "exactly equal"
        if identity.max_abs == 0
        else "equal up to float64 rounding (about 10<sup>−16</sup> of the values)"
        if identity.holds
        else "NOT equal"
    )
    lines = [
        f"<span style='font-size:large'>Largest difference: "
        f"<b>{_html(change_text(identity.max_abs))}</b> — {verdict}</span>"
    ]
    if len(identity.checks) > 1:
        lines += [
            f"{_html(c.what)}: max|left − right| = {_html(change_text(c.max_abs))}"
            for c in identity.checks
        ]
    return "<br>".join(lines)


def open_identity(window, name: str) -> IdentityDialog:
    """Show (or raise) the window of identity `name` beside the main window."""
    existing = window.findChild(IdentityDialog, f"identityDialog.{name}")
    if existing is not None:
        existing.refresh()
        existing.show()
        existing.raise_()
        return existing
    dialog = IdentityDialog(name, window.document, window, getattr(window, "display", None))
    dialog.show()
    return dialog


for _name, (_text, _intro) in DEMOS.items():
    register_action(
        ActionSpec(
            menu="Tools",
            text=_text,
            object_name=f"action.identity.{_name}",
            trigger=lambda window, n=_name: open_identity(window, n),
            tip=_intro,
        )
    )

__all__ = [
    "DEMOS",
    "IdentityDialog",
    "apply_permutation",
    "identity_on",
    "open_identity",
    "result_html",
]
