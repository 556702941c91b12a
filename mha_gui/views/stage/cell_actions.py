"""What a user does with one cell of the attention view: hover it for where its number
came from, Ctrl+click a score or weight to block or open that query→key pair, copy the
matrix of the panel a context menu came from.

A part of AttentionView, given the document, where to say what it did (the view's
`message` signal's emit) and what an exercise hides (a callable giving the view's cell
filter, or None).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mha_gui.engine.panels.stage_panels import KINDS, symbol
from mha_gui.engine.panels.stages import stage_by_name
from mha_gui.engine.teaching.explain import blocked_reason, explain_cell
from mha_gui.engine.teaching.quoted_cells import quotes_hidden
from mha_gui.views.stage.stage_scene import stage_groups


class CellActions:
    """Tooltips, mask toggling and panel matrices of the attention view."""

    def __init__(self, document, say: Callable[[str], None], hidden: Callable):
        self.document = document
        self._say = say
        self._hidden = hidden  # () -> the cell filter of an exercise, or None

    def cell_tooltip(self, kind: str, head: int | None, row: int, col: int) -> str:
        """The hover text of a cell: kind is X Q K V S A Z H Y C, head the query head."""
        doc = self.document
        if doc.busy:
            return "computing… (the explanation appears when the new numbers are ready)"
        hidden = self._hidden()
        if hidden is not None and quotes_hidden(kind, head, row, col, doc.config, hidden):
            label = f"{symbol(kind, head, doc.config).text}[{row},{col}]"
            return (
                f"{label}: its worked formula would show a cell the exercise hides, so it "
                "comes back when the exercise ends"
            )
        trace = doc.trace()
        text = explain_cell(
            kind,
            head,
            row,
            col,
            trace=trace,
            params=doc.parameters,
            config=doc.config,
            tokens=doc.tokens,
        )
        if KINDS[kind].masked and trace.mask is not None and trace.mask[row, col]:
            text = self._blocked_hint(text, row, col)
        return text

    def _blocked_hint(self, text: str, row: int, col: int) -> str:
        """A blocked cell's tooltip says which mask blocks it and how to open it."""
        doc = self.document
        if self.causal_blocks(row, col):
            return text + " — turn off 'causal mask' to open it"
        tokens = doc.tokens
        hint = (
            f'blocked by the mask (Ctrl+click to open): key "{tokens[col]}" '
            f'for query "{tokens[row]}"'
        )
        reason = "blocked: " + blocked_reason(row, col, doc.config, tokens)
        if text.endswith(reason):
            return text[: len(text) - len(reason)] + hint
        return f"{text}   {hint}"  # explain's wording changed: still say how to open it

    def causal_blocks(self, query: int, key: int) -> bool:
        return bool(self.document.config.causal and key > query)

    def toggle_blocked(self, query: int, key: int) -> bool:
        """Ctrl+click / the panel menu: block or open (query, key) in the extra mask (one
        undo step, every head). A pair the causal mask blocks is refused with a message."""
        doc = self.document
        tokens = doc.tokens
        pair = f'"{tokens[query]}" → "{tokens[key]}"'
        if self.causal_blocks(query, key):
            self._say(f"{pair} is blocked by the causal mask — turn off 'causal mask' to open it")
            return False
        doc.toggle_blocked(query, key)
        mask = doc.mask
        if mask is not None and mask[query, key]:
            text = f"Blocked {pair} in every head (Ctrl+click it again or Undo to open it)"
            if bool(doc.trace().mask[query].all()):
                text += f' — query "{tokens[query]}" now sees no key: its weights are all 0'
        else:
            text = f"Opened {pair} in every head"
        self._say(text)
        return True

    def panel_matrix(self, stage_name: str, head: int, part: str | None = None):
        """(matrix, row_labels, col_labels, symbol) of the panel a context menu came from.

        head -1 means the stage's layer-wide panel (X, H, Y). At `projections` a head has
        three panels; `part` picks "Q", "K" or "V", default all three side by side.
        """
        doc = self.document
        c, tokens = doc.config, doc.tokens
        kinds = [k for k, h in self._keys(stage_name) if h == head]
        if part is None and len(kinds) > 1:
            mats = [KINDS[k].source(doc, head) for k in kinds]
            cols = [
                f"{k.lower()}{j}"
                for k, m in zip(kinds, mats, strict=True)
                for j in range(m.shape[1])
            ]
            names = " | ".join(symbol(k, head, c).text for k in kinds)
            return np.hstack(mats).copy(), tokens, cols, f"[{names}]"
        kind = part or kinds[0]
        h = None if head < 0 else head
        matrix = KINDS[kind].source(doc, h).copy()
        return matrix, tokens, KINDS[kind].columns(c, tokens), symbol(kind, h, c).text

    def _keys(self, stage_name: str) -> list[tuple[str, int]]:
        groups = stage_groups(stage_by_name(stage_name).index, self.document.config)
        return [(kind, group.head) for group in groups for kind in group.kinds]
