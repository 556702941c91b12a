"""Help ▸ Formulas and shapes: every stage's formula and the shapes of its operands, for
the current configuration (it follows configuration changes while open)."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from mha_gui.engine.panels.notation import rich_text
from mha_gui.engine.panels.stages import STAGES, formula_for, shapes_line


class FormulasDialog(QDialog):
    """Help ▸ Formulas and shapes: every stage's formula and operand shapes, for the
    current configuration."""

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("formulasDialog")
        self.setWindowTitle("Formulas and shapes — mha-gui")
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("formulasText")
        self.browser.setAccessibleName("Formulas")
        layout.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.resize(760, 520)
        document.configChanged.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        c = self.document.config
        rows = []
        for s in STAGES:
            rows.append(
                "<tr>"
                f"<td valign='top'><b>{html.escape(s.heading)}</b></td>"
                f"<td valign='top'><span style='white-space:pre; font-size:large'>"
                f"{rich_text(formula_for(s, c))}</span><br>"
                f"<span style='white-space:pre'>{rich_text(shapes_line(s, c))}</span><br>"
                f"<i>{rich_text(s.what)}</i></td></tr>"
            )
        summary = (
            f"n = {c.n} tokens, d_model = {c.d_model}, h = {c.h} query heads, "
            f"{c.h_kv} K/V head(s) ({c.variant}), d_k = {c.d_k}, d_v = {c.d_v}, "
            f"scale = {c.effective_scale:.4g}"
            + (" (1/√d_k)" if c.scale is None else " (custom)")
            + (", causal mask" if c.causal else "")
            + (", biases on" if c.bias else "")
        )
        self.browser.setHtml(
            f"<p>{rich_text(summary)}</p>"
            "<table cellspacing='0' cellpadding='6' border='0'>" + "".join(rows) + "</table>"
        )

    def text(self) -> str:
        return self.browser.toPlainText()
