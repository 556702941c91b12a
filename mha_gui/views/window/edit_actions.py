"""What the Edit menu does besides Undo/Redo: copy and paste in the focused matrix editor,
randomize the weights, reset the example, clear the extra mask.

The main window makes one `EditActions(window, document, say)` (`window`: the parent of
its dialogs; `say(text)`: the status bar) and hands it Edit ▸ Clear mask once the menus
have made it (`follow_mask`).
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QInputDialog

from mha_gui.views.editors.matrix_table import MatrixTable


class EditActions:
    def __init__(self, window, document, say):
        self.window = window
        self.document = document
        self.say = say
        self.clear_mask_action = None  # Edit ▸ Clear mask, given by follow_mask

    def focused_table(self) -> MatrixTable | None:
        widget = QApplication.focusWidget()
        while widget is not None and not isinstance(widget, MatrixTable):
            widget = widget.parentWidget()
        return widget

    def copy(self) -> None:
        self._in_focused_table(
            "Copy", MatrixTable.copy_selection, "click a cell of a matrix editor first"
        )

    def paste(self) -> None:
        self._in_focused_table(
            "Paste", MatrixTable.paste, "click the cell of a matrix editor to paste at"
        )

    def _in_focused_table(self, verb: str, act, hint: str) -> None:
        table = self.focused_table()
        if table is None:
            self.say(f"{verb}: {hint}")
        else:
            act(table)

    def randomize(self) -> None:
        seed, ok = QInputDialog.getInt(
            self.window,
            "Randomize weights",
            "Seed (the same seed always gives the same weights; X is kept):",
            0,
            0,
            2**31 - 1,
        )
        if ok:
            self.document.randomize(seed)
            self.say(f"Weights randomized with seed {seed} (Undo brings them back)")

    def reset_example(self) -> None:
        self.document.reset_to_preset()
        self.say("Example reset (Undo brings your numbers back)")

    def clear_mask(self) -> None:
        """Edit ▸ Clear mask: drop the extra mask (one undo step); causal stays."""
        if not self._has_extra_mask():
            return
        self.document.set_mask(None, "Clear mask")
        self.say("Extra mask cleared (Undo brings it back)")

    def follow_mask(self, action) -> None:
        """Keep Edit ▸ Clear mask (`action`) enabled exactly while there is an extra mask."""
        self.clear_mask_action = action
        self.document.maskChanged.connect(self._update_clear_mask)
        self._update_clear_mask()

    def _has_extra_mask(self) -> bool:
        mask = self.document.mask
        return mask is not None and bool(mask.any())

    def _update_clear_mask(self, *_args) -> None:
        self.clear_mask_action.setEnabled(self._has_extra_mask())
