"""Titles and highlights of the attention view's panels: the inspected head framed and
its title marked ▶, the query row outlined, layer panels named with their shape. A mixin
of AttentionView (reads `self.scene`, `self.document`, `self._theme`, `self._zoom`).

A title is set only when its text changes and its room is reserved for the inspected
style once, so selecting another head repaints two titles instead of relaying the grid.
"""

from __future__ import annotations

from mha_gui import theme
from mha_gui.engine.stage_panels import LAYER_TITLES, symbol
from mha_gui.views.stage.stage_scene import group_is_layer


class StageTitles:
    def _update_highlights(self) -> None:
        doc = self.document
        c = doc.config
        pal = theme.palette(self._theme)
        scene = self.scene
        inspected, query = doc.view.head, doc.view.query
        for group in self._groups():
            head = group.head
            if head not in scene.titles:
                continue
            if group_is_layer(group):
                kind = group.kinds[0]
                shape = f"<span style='color:{pal.muted}'>{self._shape_text(kind)}</span>"
                text = self._fit_title(LAYER_TITLES.get(kind, kind), shape, 11, True, "  ")
                self._set_title(head, text, pal.text, 11, True)
                continue
            colour = theme.head_text_color(head, self._theme)
            if len(group.kinds) == 1:
                detail = symbol(group.kinds[0], head, c).html
            elif c.variant != "MHA":
                detail = f"K/V group {c.kv_group(head)}"
            else:
                detail = ""

            def title(marked: bool, head=head, detail=detail) -> tuple[str, int]:
                mark, size = ("▶ ", 12) if marked else ("", 11)
                if detail:
                    return self._fit_title(f"{mark}head {head}", detail, size, True, " · "), size
                return f"{mark}head {head}", size

            if head not in scene.primed:
                # the title's room is the inspected style's: selecting a head then
                # never relays the grid out (TitleLabel only grows)
                scene.primed.add(head)
                scene.titles_set.pop(head, None)
                text, size = title(True)
                scene.titles[head].setText(text, color=colour, size=self._pt(size), bold=True)
            text, size = title(head == inspected)
            self._set_title(head, text, colour, size, head == inspected)
        for (_kind, head), panel in self.panels.items():
            on = head >= 0 and head == inspected
            panel.set_frame(theme.head_color(head) if on else None)
            panel.set_query(query)
        for i, outline in scene.band_outline.items():
            outline.setVisible(i == inspected)

    def _set_title(self, head: int, text: str, colour: str, size: float, bold: bool) -> None:
        """Set a title only if it changed: a new title relays the whole grid out."""
        args = (text, colour, size, bold)
        if self.scene.titles_set.get(head) != args:
            self.scene.titles_set[head] = args
            self.titles[head].setText(text, color=colour, size=self._pt(size), bold=bold)

    def _fit_title(self, first: str, second: str, size: float, bold: bool, sep: str) -> str:
        cols = max(1, self.scene.grid_cols)
        bar = 90 * self._zoom  # the colour bar and its labels
        room = (max(self.width(), 320) - bar) / cols - 16
        return self._titles.fit(first, second, size * self._zoom, bold, sep, room, self.font())

    def _shape_text(self, kind: str) -> str:
        panel = next(p for (k, _h), p in self.panels.items() if k == kind)
        return f"{panel.rows}×{panel.cols}"
