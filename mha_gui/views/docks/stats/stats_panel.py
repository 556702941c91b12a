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
KEEP = "white-space:nowrap;"  # a label, a number or a bar never breaks; the notes wrap


def _sub(text: str) -> str:
    """`d_model` → d<sub>model</sub> (HTML) for the few symbols the panel prints."""
    for name in ("model", "kv", "k", "v"):
        text = text.replace(f"d_{name}", f"d<sub>{name}</sub>").replace(
            f"h_{name}", f"h<sub>{name}</sub>"
        )
    return text


def stats_html(config: Config, theme_name: str = "light", px: int = BASE_PX) -> str:
    """The panel's rich text for `config` (numbers formatted as `mha-gui info` does)."""
    c = config
    st = layer_stats(c)
    pal = theme.palette(theme_name)
    share = flops_share(st)
    bar = theme.head_color(0)

    def row(label: str, value: str, note: str = "", bold: bool = False) -> str:
        weight = "font-weight:bold;" if bold else ""
        return (
            f"<tr><td style='{weight}{KEEP}padding-right:14px'>{label}</td>"
            f"<td align='right' style='{weight}{KEEP}padding-right:10px'>{value}</td>"
            f"<td colspan='2' style='color:{pal.muted}'>{note}</td></tr>"
        )

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
        flops.append(
            f"<tr><td style='{KEEP}padding-right:14px'>&nbsp;&nbsp;{s.number} {s.name}</td>"
            f"<td align='right' style='{KEEP}padding-right:10px'>{value:,}</td>"
            f"<td style='{KEEP}padding-right:10px'>{graph}</td>"
            f"<td style='color:{pal.muted}'>{note}</td></tr>"
        )
    total = st.total_flops
    kv_all = c.n * st.kv_cache_per_token
    rows = [
        row(
            "parameters",
            f"{st.parameters:,}",
            "W<sup>Q</sup>, W<sup>K</sup>, W<sup>V</sup>, "
            "W<sub>O</sub>" + (" and biases" if c.bias else ""),
            bold=True,
        ),  # fmt: skip
        "<tr><td colspan='4' style='padding-top:6px'><b>FLOPs per stage</b> "
        f"<span style='color:{pal.muted}'>(multiply-add = 2)</span></td></tr>",
        *flops,
        f"<tr><td style='padding-right:14px'>&nbsp;&nbsp;<b>total</b></td>"
        f"<td align='right' style='padding-right:10px'><b>{total:,}</b></td>"
        f"<td></td><td style='color:{pal.muted}'>({html.escape(human(total))})</td></tr>",
        "<tr><td colspan='4' style='padding-top:6px'><b>Memory</b></td></tr>",
        row(
            "&nbsp;&nbsp;attention matrix entries h·n²",
            f"{st.attention_entries:,}",
            "S and A each hold h·n² numbers",
        ),
        row(
            "&nbsp;&nbsp;all intermediates",
            f"{st.trace_values:,}",
            f"numbers: {html.escape(human(st.trace_values * 8, 'B'))} as float64, "
            f"{html.escape(human(st.trace_values * 4, 'B'))} as float32",
        ),
        row(
            "&nbsp;&nbsp;K/V cache per token h<sub>kv</sub>·(d<sub>k</sub>+d<sub>v</sub>)",
            f"{st.kv_cache_per_token:,}",
            f"numbers; for all {c.n} tokens: {kv_all:,} "
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
        document.configChanged.connect(self._changed)  # also after every change of shape
        self.refresh()
        if settings is not None:
            settings.follow("theme", self.set_theme)
            settings.follow("zoom", self.set_zoom)

    def refresh(self, *_args) -> None:
        self._stale = False
        px = round(BASE_PX * self.zoom)
        bg = theme.palette(self.theme_name).background
        self.setStyleSheet(f"QTextBrowser {{ background: {bg}; }}")
        self.setHtml(stats_html(self.doc.config, self.theme_name, px))

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
        widen_on_show(self, self.wanted_width)  # the dock opens as wide as the table

    def wanted_width(self) -> int:
        """The width at which every line reads unwrapped."""
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
