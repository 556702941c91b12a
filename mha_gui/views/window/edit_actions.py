"""What the Edit menu does besides Undo/Redo: copy and paste in the focused matrix editor,
randomize the weights, reset the example, clear the extra mask.

`EditActions` is a mixin of the main window: it needs `self.document`,
`self.show_message(text)` and the `clear_mask_action` the menus build.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QInputDialog

from mha_gui.views.editors.matrix_table import MatrixTable


class EditActions:
    """Mixin for the main window."""

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
            self.show_message(f"{verb}: {hint}")
        else:
            act(table)

    def randomize(self) -> None:
        seed, ok = QInputDialog.getInt(
            self,
            "Randomize weights",
            "Seed (the same seed always gives the same weights; X is kept):",
            0,
            0,
            2**31 - 1,
        )
        if ok:
            self.document.randomize(seed)
            self.show_message(f"Weights randomized with seed {seed} (Undo brings them back)")

    def reset_example(self) -> None:
        self.document.reset_to_preset()
        self.show_message("Example reset (Undo brings your numbers back)")

    def clear_mask(self) -> None:
        """Edit ▸ Clear mask: drop the extra mask (one undo step); causal stays."""
        if not self._has_extra_mask():
            return
        self.document.set_mask(None, "Clear mask")
        self.show_message("Extra mask cleared (Undo brings it back)")

    def follow_mask(self) -> None:
        """Keep Edit ▸ Clear mask enabled exactly while there is an extra mask."""
        self.document.maskChanged.connect(self._update_clear_mask)
        self._update_clear_mask()

    def _has_extra_mask(self) -> bool:
        mask = self.document.mask
        return mask is not None and bool(mask.any())

    def _update_clear_mask(self, *_args) -> None:
        self.clear_mask_action.setEnabled(self._has_extra_mask())
