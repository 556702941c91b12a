"""Titles and highlights of the attention view's panels: the inspected head framed and
its title marked ▶, the query row outlined, layer panels named with their shape.

A part of AttentionView, given the view: it reads the view's document, its shown scene
and its display options, and its width (a title goes on two lines when one is too
wide). A title is set only when its text changes and its room is reserved for the
inspected style once, so selecting another head repaints two titles instead of
relaying the grid.
"""

from __future__ import annotations

from mha_gui import theme
from mha_gui.engine.panels.stage_panels import LAYER_TITLES, symbol
from mha_gui.engine.panels.stages import stage_by_name
from mha_gui.views.stage.stage_scene import TitleFitter, group_is_layer, stage_groups


class StageTitles:
    def __init__(self, view):
        self.view = view
        self.fitter = TitleFitter()  # text widths, cached across builds

    def update(self) -> None:
        """Every title, frame, query outline and concat outline of the shown scene."""
        view = self.view
        doc = view.document
        c = doc.config
        options = view.options
        scene = view.scene
        inspected, query = doc.view.head, doc.view.query
        pal = options.palette
        # a switched-off head is marked at every stage after the weights (its Z is 0)
        after_weights = scene.stage > stage_by_name("weights").index
        off = set(c.ablate) if after_weights else set()
        places = scene.geometry.places if scene.geometry is not None else {}
        for group in stage_groups(scene.stage, c):
            head = group.head
            if head not in scene.titles:
                continue
            if group_is_layer(group):
                kind = group.kinds[0]
                shape = f"<span style='color:{pal.muted}'>{self._shape_text(kind)}</span>"
                text = self._fit(LAYER_TITLES.get(kind, kind), shape, 11, True, "  ", head)
                self._set(head, text, pal.text, 11, True)
                continue
            colour = theme.head_text_color(head, options.theme)
            thumb = head in places and places[head].thumb
            if thumb:  # a thumbnail: its head's name, small (a click inspects it)
                text = f"head {head}" + (" · off" if head in off else "")
                self._set(head, text, colour, 9, head == inspected)
                continue
            if len(group.kinds) == 1:
                detail = symbol(group.kinds[0], head, c).html
            elif c.variant != "MHA":
                detail = f"K/V group {c.kv_group(head)}"
            else:
                detail = ""
            if head in off:
                detail = f"{detail} · off" if detail else "off"

            def title(marked: bool, head=head, detail=detail) -> tuple[str, int]:
                mark, size = ("▶ ", 12) if marked else ("", 11)
                if detail:
                    return self._fit(f"{mark}head {head}", detail, size, True, " · ", head), size
                return f"{mark}head {head}", size

            if head not in scene.primed:
                # the title's room is the inspected style's: selecting a head then
                # never relays the grid out (TitleLabel only grows)
                scene.primed.add(head)
                scene.titles_set.pop(head, None)
                text, size = title(True)
                scene.titles[head].setText(text, color=colour, size=options.pt(size), bold=True)
            text, size = title(head == inspected)
            self._set(head, text, colour, size, head == inspected)
        for (_kind, head), panel in scene.panels.items():
            on = head >= 0 and head == inspected
            panel.set_frame(theme.frame_color(head, options.theme) if on else None)
            panel.set_query(query)
            panel.set_off(head in off)
        if scene.bands is not None:
            scene.bands.show(inspected)
            scene.bands.set_off(off)

    def refit(self) -> None:
        """The grid was resized: titles fit their new room (one or two lines)."""
        scene = self.view.scene
        for title in scene.titles.values():
            title.fit()
        scene.primed = set()
        self.update()

    def _set(self, head: int, text: str, colour: str, size: float, bold: bool) -> None:
        """Set a title only if it changed: a new title relays the whole grid out."""
        scene = self.view.scene
        args = (text, colour, size, bold)
        if scene.titles_set.get(head) != args:
            scene.titles_set[head] = args
            pt = self.view.options.pt(size)
            scene.titles[head].setText(text, color=colour, size=pt, bold=bold)

    def _fit(self, first: str, second: str, size: float, bold: bool, sep: str, head: int) -> str:
        view = self.view
        zoom = view.options.zoom
        geometry = view.scene.geometry
        # the room is the group's panels' width (a title never widens its column much)
        room = sum(p.left_w + p.width for (_k, h), p in geometry.sizes.items() if h == head)
        room = max(room, 120.0 * zoom)
        return self.fitter.fit(first, second, size * zoom, bold, sep, room, view.font())

    def _shape_text(self, kind: str) -> str:
        panels = self.view.scene.panels
        panel = next(p for (k, _h), p in panels.items() if k == kind)
        return f"{panel.rows}×{panel.cols}"
