"""Taking a control away at once, not one event-loop turn later.

`deleteLater()` deletes a widget when control next returns to the event loop; until then
a removed check box is still a visible, clickable child with its objectName — a click on
"ablate.3" after h went from 4 to 2 reached Document.set_ablated(3) and raised. A retired
widget is hidden, disabled (a disabled button ignores clicks) and unnamed now, and
deleted later.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def retire(widget: QWidget) -> None:
    """Hide, disable and unname `widget` and its children now; delete it later."""
    for child in [widget, *widget.findChildren(QWidget)]:
        child.setObjectName("")
    widget.hide()
    widget.setEnabled(False)
    widget.deleteLater()
