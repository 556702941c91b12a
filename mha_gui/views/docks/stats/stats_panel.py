"""Live statistics of the layer being edited: the numbers of `mha-gui info`, as a panel.

Parameters, FLOPs per stage (and how each grows with n), memory of the intermediates, the
K/V cache per token and h·n² — computed by engine/panels/stats.py `layer_stats` and printed with
the same number formats as the command line, so the panel and `mha-gui info` agree digit
for digit. It follows every configuration change (n, d_model, heads, biases …).
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser

from mha_gui import theme
from mha_gui.engine.layer.config import Config
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.panels.stats import flops_share, human, layer_stats
from mha_gui.views.docks.dock_width import widen_on_show
from mha_gui.views.window.registry import ViewSpec, register_view

BAR_CHARS = 16
BASE_PX = 13
WRAP_SHARE = 0.85  # a panel this much narrower than the columns: notes under their rows
KEEP = "white-space:nowrap;"  # a label, a number or a bar never breaks; the notes wrap


def _sub(text: str) -> str:
    """`d_model` → d<sub>model</sub> (HTML) for the few symbols the panel prints."""
    for name in ("model", "kv", "k", "v"):
        text = text.replace(f"d_{name}", f"d<sub>{name}</sub>").replace(
            f"h_{name}", f"h<sub>{name}</sub>"
        )
    return text


def stats_html(
    config: Config, theme_name: str = "light", px: int = BASE_PX, narrow: bool = False
) -> str:
    """The panel's rich text for `config` (numbers formatted as `mha-gui info` does).

    A row is a label, its number, and for a FLOP count a bar and its share, then a note
    (a size in bytes, how the count grows with n). `narrow`: the bar and the note on a
    line of their own under the label and the number (a 500 px dock at 150 %), instead
    of in columns beside them."""
    c = config
    st = layer_stats(c)
    pal = theme.palette(theme_name)
    share = flops_share(st)
    bar = theme.head_color(0)
    muted = f"color:{pal.muted}"

    def row(label: str, value: str, graph: str = "", note: str = "", bold: bool = False) -> str:
        weight = "font-weight:bold;" if bold else ""
        cells = (
            f"<td style='{weight}{KEEP}padding-right:14px'>{label}</td>"
            f"<td align='right' style='{weight}{KEEP}padding-right:10px'>{value}</td>"
        )
        if narrow:
            below = " ".join(t for t in (graph, f"<span style='{muted}'>{note}</span>") if t)
            under = (
                f"<tr><td colspan='2' style='padding-left:18px; padding-bottom:3px'>{below}</td></tr>"
                if graph or note
                else ""
            )
            return f"<tr>{cells}</tr>{under}"
        if graph:
            return (
                f"<tr>{cells}<td style='{KEEP}padding-right:10px'>{graph}</td>"
                f"<td style='{muted}'>{note}</td></tr>"
            )
        return f"<tr>{cells}<td colspan='2' style='{muted}'>{note}</td></tr>"

    def heading(text: str) -> str:
        return f"<tr><td colspan='{2 if narrow else 4}' style='padding-top:6px'>{text}</td></tr>"

    head = (
        f"<b>{c.variant}</b>: n = {c.n} tokens, {_sub('d_model')} = {c.d_model}, h = {c.h}, "
        f"{_sub('h_kv')} = {c.h_kv}, {_sub('d_k')} = {c.d_k}, {_sub('d_v')} = {c.d_v}"
        + (", biases" if c.bias else "")
    )
    flops = []
    for s in STAGES:
        value = st.flops[s.name]
        blocks = round(share[s.name] * BAR_CHARS)
        graph = (
            f"<span style='color:{bar}'>{'█' * blocks}</span> {100 * share[s.name]:.0f}%"
            if value
            else ""
        )
        short = f"({html.escape(human(value))}) " if value >= 1000 else ""
        note = f"{short}{s.growth}".strip()  # ∝ n², as the Stage says
        flops.append(row(f"&nbsp;&nbsp;{s.number} {s.name}", f"{value:,}", graph, note))
    total = st.total_flops
    kv_all = c.n * st.kv_cache_per_token
    rows = [
        row(
            "parameters",
            f"{st.parameters:,}",
            note="W<sup>Q</sup>, W<sup>K</sup>, W<sup>V</sup>, "
            "W<sub>O</sub>" + (" and biases" if c.bias else ""),
            bold=True,
        ),  # fmt: skip
        heading(f"<b>FLOPs per stage</b> <span style='{muted}'>(multiply-add = 2)</span>"),
        *flops,
        row("&nbsp;&nbsp;<b>total</b>", f"<b>{total:,}</b>", note=f"({html.escape(human(total))})"),
        heading("<b>Memory</b>"),
        row(
            "&nbsp;&nbsp;attention matrix entries h·n²",
            f"{st.attention_entries:,}",
            note="S and A each hold h·n² numbers",
        ),
        row(
            "&nbsp;&nbsp;all intermediates",
            f"{st.trace_values:,}",
            note=f"numbers: {html.escape(human(st.trace_values * 8, 'B'))} as float64, "
            f"{html.escape(human(st.trace_values * 4, 'B'))} as float32",
        ),
        row(
            "&nbsp;&nbsp;K/V cache per token h<sub>kv</sub>·(d<sub>k</sub>+d<sub>v</sub>)",
            f"{st.kv_cache_per_token:,}",
            note=f"numbers; for all {c.n} tokens: {kv_all:,} "
            f"({html.escape(human(kv_all * 2, 'B'))} in fp16)",
        ),
    ]
    return (
        f"<div style='color:{pal.text}; font-size:{px}px'>"
        f"<p style='margin-bottom:6px'>{head}</p>"
        f"<table cellspacing='0' cellpadding='1'>{''.join(rows)}</table></div>"
    )


class StatsPanel(QTextBrowser):
    """Read-only, selectable text: copy a number into a slide or a spreadsheet."""

    def __init__(self, document, settings=None, parent=None):
        super().__init__(parent)
        self.setOpenLinks(False)
        # in a narrow dock the notes wrap (labels, numbers and bars never break), so no
        # line is cut or needs a sideways scroll
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        # `doc`, not `document`: QTextEdit.document() is the panel's own QTextDocument
        self.doc = document
        self.theme_name = "light"
        self.zoom = 1.0
        self.setToolTip(
            "The numbers of `mha-gui info` for the layer being edited; they follow every "
            "change of n, d_model, the heads and the switches."
        )
        self._stale = False
        self._wide = 0  # the width the columns need (0: not measured yet)
        self.narrow = False  # bars and notes under their rows
        document.configChanged.connect(self._changed)  # also after every change of shape
        self.refresh()
        if settings is not None:
            settings.follow("theme", self.set_theme)
            settings.follow("zoom", self.set_zoom)

    def refresh(self, *_args) -> None:
        """The panel's text for the layer, in columns where they fit the panel's width,
        else each bar and note under its row (see stats_html)."""
        self._stale = False
        px = round(BASE_PX * self.zoom)
        bg = theme.palette(self.theme_name).background
        self.setStyleSheet(f"QTextBrowser {{ background: {bg}; }}")
        self.setHtml(stats_html(self.doc.config, self.theme_name, px))
        self._wide = self.wanted_width()
        self.narrow = self._too_narrow()
        if self.narrow:
            self.setHtml(stats_html(self.doc.config, self.theme_name, px, narrow=True))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._wide and self._too_narrow() != self.narrow:
            self.refresh()  # the columns fit now, or no longer

    def _too_narrow(self) -> bool:
        """Narrower than the columns' width, less what their notes can give by wrapping
        to two lines."""
        return self.width() < self._wide * WRAP_SHARE

    def _changed(self, *_args) -> None:
        """The numbers changed: shown now if the panel can be seen, else when it is
        (opening a layer refreshed this hidden panel twice, ~4 ms)."""
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()
        widen_on_show(self, lambda: self._wide)  # the dock opens as wide as the columns

    def wanted_width(self) -> int:
        """The width at which every line of the text shown reads unwrapped."""
        unwrapped = self.document().clone(self)
        unwrapped.setTextWidth(-1)
        width = unwrapped.idealWidth()
        unwrapped.deleteLater()
        return int(width) + 2 * self.frameWidth() + 4

    def text(self) -> str:
        """What the panel shows (or will show once visible), as plain text."""
        if self._stale:
            self.refresh()
        return self.toPlainText()

    def set_theme(self, name: str) -> None:
        theme.palette(name)
        if name != self.theme_name:
            self.theme_name = name
            self.refresh()

    def set_zoom(self, factor: float) -> None:
        if float(factor) != self.zoom:
            self.zoom = float(factor)
            self.refresh()


register_view(ViewSpec("stats", StatsPanel, "statsPanel", "Layer statistics"))
