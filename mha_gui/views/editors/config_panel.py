"""The configuration panel: dimensions, K/V sharing, causal mask, biases, RoPE and scale.

Each change is one undo step (`Document.set_config`). An impossible combination (K/V
heads not dividing the query heads, …) changes nothing: the panel says why and the
widget goes back to the current value.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from mha_gui.engine.layer.config import MAX_HEADS, MAX_TOKENS, MAX_WIDTH
from mha_gui.engine.layer.values import format_value, parse_value
from mha_gui.engine.panels.notation import rich_text, unicode_text
from mha_gui.theme import ERROR_RED
from mha_gui.views.editors.formula_names import spoken


def typeset_tip(text: str) -> str:
    """A tooltip with formula text (b^Q, √d_k), typeset as the stage bar sets it."""
    return f"<qt>{rich_text(text)}</qt>"


FIELDS = (
    ("n", "tokens n", MAX_TOKENS, "Number of tokens (rows of X)"),
    ("d_model", "d_model", MAX_WIDTH, "Width of each token vector (columns of X)"),
    ("h", "heads h", MAX_HEADS, "Number of query heads"),
    (
        "h_kv",
        "K/V heads",
        MAX_HEADS,
        "Key/value heads: h = MHA, 1 = MQA, a divisor of h in between = GQA",
    ),
    ("d_k", "d_k", MAX_WIDTH, "Width of each head's queries and keys"),
    ("d_v", "d_v", MAX_WIDTH, "Width of each head's values"),
)


def variant_text(config) -> str:
    if config.variant == "MHA":
        return "MHA: every head has its own K and V"
    if config.variant == "MQA":
        return "MQA: all heads share one K/V head"
    return f"GQA: {config.group_size} query heads share each K/V head"


class ConfigPanel(QWidget):
    message = Signal(str)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("configPanel")
        self.setAccessibleName("Configuration")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        # a big zoom in a narrow dock: a long field goes under its label, never clipped
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        outer.addLayout(form)

        self.spins: dict[str, QSpinBox] = {}
        for key, label, top, tip in FIELDS:
            spin = QSpinBox(self)
            spin.setObjectName(f"config.{key}")
            spin.setRange(1, top)
            spin.setKeyboardTracking(False)  # typed digits apply on Enter / focus out
            spin.setAccelerated(True)
            spin.setToolTip(tip)
            spin.valueChanged.connect(lambda value, k=key: self.apply(k, value))
            self.spins[key] = spin
            # d_model, d_k typeset (the one notation); said as words by a screen reader
            name = QLabel(rich_text(label), self)
            name.setBuddy(spin)
            spin.setAccessibleName(spoken(label))
            form.addRow(name, spin)
            if key == "h_kv":
                self.variant_label = QLabel(self)
                self.variant_label.setObjectName("variantLabel")
                self.variant_label.setWordWrap(True)
                form.addRow(self.variant_label)

        self.causal = QCheckBox("causal mask", self)
        self.causal.setToolTip("A query sees only its own and earlier tokens")
        self.causal.setObjectName("causalToggle")
        self.causal.toggled.connect(self._on_causal)
        form.addRow(self.causal)
        # the extra mask right under the causal switch, lined up with its text
        mask_row = QHBoxLayout()
        mask_row.setSpacing(8)
        style = self.style()
        mask_row.setContentsMargins(
            style.pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth)
            + style.pixelMetric(QStyle.PixelMetric.PM_CheckBoxLabelSpacing),
            0,
            0,
            0,
        )
        self.mask_label = QLabel(self)
        self.mask_label.setObjectName("maskIndicator")
        self.mask_label.setToolTip(
            "Pairs blocked on top of the causal mask, in every head: Ctrl+click a cell "
            "at the scores or weights stage to block or open one"
        )
        mask_row.addWidget(self.mask_label)
        self.mask_clear = QLabel("<a href='clear'>clear</a>", self)
        self.mask_clear.setObjectName("maskClear")
        self.mask_clear.setToolTip("Open every pair of the extra mask (one undo step)")
        self.mask_clear.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.mask_clear.linkActivated.connect(lambda _link: self.clear_mask())
        mask_row.addWidget(self.mask_clear)
        mask_row.addStretch(1)
        form.addRow(mask_row)

        self.bias = QCheckBox("biases", self)
        self.bias.setToolTip(typeset_tip("Add b^Q, b^K, b^V and b_O (off in the textbook form)"))
        self.bias.setObjectName("biasToggle")
        self.bias.toggled.connect(self._on_bias)
        form.addRow(self.bias)

        rope_row = QHBoxLayout()
        self.rope = QCheckBox("RoPE", self)
        self.rope.setObjectName("ropeToggle")
        self.rope.setToolTip(
            "Rotary position embeddings: rotate Q and K by each token's position before the "
            "scores (the projections stage then shows Q̃ and K̃ beside Q and K); needs an even d_k"
        )
        self.rope.toggled.connect(self._on_rope)
        self.rope_theta = QLineEdit(self)
        self.rope_theta.setObjectName("ropeTheta")
        self.rope_theta.setAccessibleName("RoPE base theta")
        self.rope_theta.setAccessibleDescription(
            "RoPE's base θ: pair j turns by position · θ^(−2j/d_k)"
        )
        self.rope_theta.setToolTip(
            typeset_tip("RoPE's base θ: pair j turns by position · θ^(−2j/d_k)")
        )
        self.rope_theta.setFixedWidth(self.fontMetrics().horizontalAdvance("5000000.0") + 16)
        self.rope_theta.editingFinished.connect(self._on_theta_edited)
        rope_row.addWidget(self.rope)
        rope_row.addWidget(QLabel("θ", self))
        rope_row.addWidget(self.rope_theta)
        rope_row.addStretch(1)
        form.addRow(rope_row)

        scale_row = QHBoxLayout()
        self.default_scale = QCheckBox(unicode_text("1/√d_k"), self)  # a check box: plain text only
        self.default_scale.setObjectName("defaultScale")
        self.default_scale.setToolTip(
            typeset_tip("Scale scores by 1/√d_k (untick to type your own)")
        )
        self.default_scale.toggled.connect(self._on_default_scale)
        self.scale_edit = QLineEdit(self)
        self.scale_edit.setObjectName("scaleEdit")
        self.scale_edit.setAccessibleName("Custom score scale")
        self.scale_edit.setAccessibleDescription("A positive factor multiplying Q Kᵀ")
        self.scale_edit.setToolTip("Custom factor multiplying Q Kᵀ (a positive number)")
        self._fit_scale_edit()
        self.scale_edit.editingFinished.connect(self._on_scale_edited)
        scale_row.addWidget(self.default_scale)
        scale_row.addWidget(self.scale_edit)
        scale_row.addStretch(1)
        form.addRow("scale", scale_row)

        self.message_label = QLabel(self)
        self.message_label.setObjectName("configMessage")
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet(f"color: {ERROR_RED};")
        outer.addWidget(self.message_label)
        outer.addStretch(1)

        document.configChanged.connect(self.sync)
        document.maskChanged.connect(self.sync_mask)
        self.sync()

    def _fit_scale_edit(self) -> None:
        self.scale_edit.setFixedWidth(self.fontMetrics().horizontalAdvance("0.0000000") + 16)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_scale_edit()

    # ------------------------------------------------------------------ sync --------
    def sync(self) -> None:
        """Show the document's config (without sending anything back)."""
        c = self.document.config
        for key, spin in self.spins.items():
            spin.blockSignals(True)
            spin.setValue(getattr(c, key))
            spin.blockSignals(False)
        self.variant_label.setText(variant_text(c))
        for box, value in ((self.causal, c.causal), (self.bias, c.bias)):
            box.blockSignals(True)
            box.setChecked(value)
            box.blockSignals(False)
        self.rope.blockSignals(True)
        self.rope.setChecked(c.rope)
        self.rope.blockSignals(False)
        self.rope_theta.setEnabled(c.rope)
        self.rope_theta.setText(f"{c.rope_theta:g}")
        self.default_scale.blockSignals(True)
        self.default_scale.setChecked(c.scale is None)
        self.default_scale.blockSignals(False)
        self.scale_edit.setEnabled(c.scale is not None)
        self.scale_edit.setText(format_value(c.effective_scale, 6))
        self.sync_mask()

    def sync_mask(self, *_args) -> None:
        """The extra mask indicator: "extra mask: k blocked pairs" and a clear link."""
        mask = self.document.mask
        count = 0 if mask is None else int(np.count_nonzero(mask))
        if count:
            self.mask_label.setText(f"extra mask: {count} blocked pair{'s' * (count != 1)}")
        else:
            self.mask_label.setText("no extra mask")
        self.mask_label.setEnabled(count > 0)  # muted when there is none
        self.mask_clear.setVisible(count > 0)

    def clear_mask(self) -> None:
        self.document.set_mask(None, "Clear mask")

    def _refuse(self, text: str) -> None:
        self.message_label.setText(text)
        self.message.emit(text)
        self.sync()

    def _change(self, label: str, **changes) -> bool:
        try:
            self.document.set_config(label=label, **changes)
        except ValueError as exc:
            self._refuse(f"Not changed: {exc}")
            return False
        self.message_label.clear()
        return True

    # --------------------------------------------------------------- editing --------
    def apply(self, key: str, value: int) -> bool:
        """Set one dimension. Changing h keeps MHA as MHA (K/V heads follow)."""
        c = self.document.config
        if getattr(c, key) == value:
            return True
        changes = {key: int(value)}
        if key == "h" and c.variant == "MHA":
            changes["h_kv"] = int(value)
        elif key == "h" and value % c.h_kv:
            self._refuse(
                f"Not changed: {value} query heads cannot be shared evenly by {c.h_kv} "
                f"K/V heads (h must be a multiple of h_kv)"
            )
            return False
        names = {"n": "tokens", "h": "heads", "h_kv": "K/V heads"}
        return self._change(f"Set {names.get(key, key)} to {value}", **changes)

    def _on_causal(self, on: bool) -> None:
        self.document.set_causal(on)
        self.message_label.clear()

    def _on_bias(self, on: bool) -> None:
        self._change("Biases on" if on else "Biases off", bias=bool(on))

    def _on_rope(self, on: bool) -> None:
        try:
            self.document.set_rope(on)
        except ValueError as exc:
            self._refuse(f"RoPE not turned {'on' if on else 'off'}: {exc}")
            return
        self.message_label.clear()

    def _on_theta_edited(self) -> None:
        text = self.rope_theta.text()
        try:
            value = parse_value(text)
        except ValueError as exc:
            self._refuse(f"θ not changed: {exc}")
            return
        if value != self.document.config.rope_theta:
            self._change(f"RoPE θ = {value:g}", rope_theta=value)

    def _on_default_scale(self, on: bool) -> None:
        if on:
            self._change("Scale 1/√d_k", scale=None)
        else:
            self.scale_edit.setEnabled(True)
            self.scale_edit.setFocus(Qt.FocusReason.OtherFocusReason)
            self._on_scale_edited()

    def _on_scale_edited(self) -> None:
        if self.default_scale.isChecked():
            return
        text = self.scale_edit.text()
        try:
            value = parse_value(text)
            if value <= 0 or not math.isfinite(value):
                raise ValueError(f"{text!r} is not a positive number")
        except ValueError as exc:
            self._refuse(f"Scale not changed: {exc}")
            return
        self._change(f"Scale {value:g}", scale=value)
