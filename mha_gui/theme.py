"""Colours shared by the window and every exported figure, so both look the same.

Pure data and NumPy (no Qt), so the figure renderer, the GUI and tests can all ask what
colour a value gets without a QApplication.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from mha_gui.engine.layer.numbers import LARGEST_PEAK, SMALLEST_PEAK, peak

# Okabe–Ito, colour-blind safe, then a few extra distinct hues for many-head presets.
HEAD_COLORS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#8C564B",
    "#7F7F7F",
    "#BCBD22",
    "#17BECF",
    "#9467BD",
    "#2CA02C",
)


def head_color(i: int) -> str:
    return HEAD_COLORS[i % len(HEAD_COLORS)]


def frame_color(i: int, theme_name: str = "light") -> str:
    """The frame of inspected head `i`: its colour, and on a high-contrast theme its
    colour mixed toward the text until it stands out of the background by 7:1 (the
    Okabe–Ito orange alone is 2.2:1 on white)."""
    if theme_name.startswith("high-contrast"):
        return head_text_color(i, theme_name)
    return head_color(i)


def head_text_color(i: int, theme_name: str = "light") -> str:
    """A head's colour for text on the theme's background: mixed toward black (light
    theme) or white (dark theme) just enough to read across a room — e.g. Okabe–Ito
    orange on white or blue on #1e1f22 alone are too faint for a title."""
    return _head_text_color(i % len(HEAD_COLORS), theme_name)


@functools.lru_cache(maxsize=64)
def _head_text_color(i: int, theme_name: str) -> str:
    """head_text_color, worked out once per colour and theme (six editors' head tabs
    ask for it on every change of the heads)."""
    rgb = _hex_rgb(head_color(i))
    dark = is_dark(theme_name)
    need = 7.0 if theme_name.startswith("high-contrast") else 4.0
    background = _hex_rgb(palette(theme_name).background)
    target = 255.0 if dark else 0.0
    for step in range(11):
        mixed = rgb + (target - rgb) * (0.1 * step)
        if contrast_ratio(mixed, background) >= need:
            break
    return "#" + "".join(f"{int(round(c)):02x}" for c in mixed)


def _hex_rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[k : k + 2], 16) for k in (1, 3, 5)], float)


def contrast_ratio(a, b) -> float:
    """WCAG contrast ratio of two RGB colours (0–255 channels), from 1 to 21."""

    def lum(rgb) -> float:
        c = np.asarray(rgb, float)[:3] / 255.0
        c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return float(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@dataclass(frozen=True)
class Palette:
    name: str
    background: str
    panel: str
    text: str
    muted: str
    grid: str
    highlight: str  # inspected head frame / selected query row outline
    blocked: str  # fill of masked (blocked) score cells
    hatch: str  # hatch lines over blocked cells


LIGHT = Palette(
    "light", "#ffffff", "#f7f7f7", "#1a1a1a", "#5f5f5f", "#d0d0d0", "#111111", "#e4e4e4", "#9a9a9a"
)
DARK = Palette(
    "dark", "#1e1f22", "#2a2b2f", "#eeeeee", "#b0b0b0", "#4a4a4a", "#ffd54f", "#3a3a3a", "#777777"
)
# High contrast (View ▸ Theme): text ≥ 7:1 on its background, every line, frame and
# hatch ≥ 3:1 against what it is drawn on (tests/views/accessibility/test_contrast.py
# measures them; the README lists the figures of every theme).
HIGH_CONTRAST_LIGHT = Palette(
    "high-contrast-light",
    "#ffffff",
    "#ffffff",
    "#000000",
    "#333333",
    "#595959",
    "#0000c8",
    "#d4d4d4",
    "#000000",
)
HIGH_CONTRAST_DARK = Palette(
    "high-contrast-dark",
    "#000000",
    "#000000",
    "#ffffff",
    "#dddddd",
    "#a6a6a6",
    "#ffff00",
    "#3a3a3a",
    "#ffffff",
)
PALETTES = {
    "light": LIGHT,
    "dark": DARK,
    "high-contrast-light": HIGH_CONTRAST_LIGHT,
    "high-contrast-dark": HIGH_CONTRAST_DARK,
}
# the Qt palette's selection and link colours of each theme (text on a selection is
# white on the light themes' blue, black on the high-contrast dark theme's yellow)
SELECTION = {
    "light": ("#2f6fd0", "#ffffff", "#1a5fb4"),
    "dark": ("#4a8ef0", "#ffffff", "#8ab4f8"),
    "high-contrast-light": ("#0000c8", "#ffffff", "#0000c8"),
    "high-contrast-dark": ("#ffff00", "#000000", "#66ccff"),
}


def is_dark(name: str) -> bool:
    """Is theme `name` light text on a dark background?"""
    return contrast_ratio(_hex_rgb(palette(name).background), (0, 0, 0)) < 5.0


def contrast_pairs(name: str) -> dict[str, tuple[str, str, float]]:
    """What a theme draws on what, for the WCAG checks: label → (foreground,
    background, the ratio required: 4.5 for text, 3 for lines, frames and marks)."""
    p = palette(name)
    select, select_text, link = SELECTION[name]
    return {
        "text on background": (p.text, p.background, 4.5),
        "text on panels": (p.text, p.panel, 4.5),
        "muted text on panels": (p.muted, p.panel, 4.5),
        "selected text": (select_text, select, 4.5),
        "links": (link, p.background, 4.5),
        "query-row outline": (p.highlight, p.background, 3.0),
        "grid lines": (p.grid, p.background, 3.0),
        "hatch on blocked cells": (p.hatch, p.blocked, 3.0),
    }


def contrast_figures(name: str) -> dict[str, float]:
    """The measured ratio of each pair of `contrast_pairs(name)`, and the weakest of the
    inspected-head frames (one colour per head) against the background."""
    figures = {
        label: round(contrast_ratio(_hex_rgb(fg), _hex_rgb(bg)), 2)
        for label, (fg, bg, _need) in contrast_pairs(name).items()
    }
    background = _hex_rgb(palette(name).background)
    figures["inspected-head frame (weakest head)"] = round(
        min(
            contrast_ratio(_hex_rgb(frame_color(i, name)), background)
            for i in range(len(HEAD_COLORS))
        ),
        2,
    )
    return figures


# what each figure of contrast_figures needs (4.5:1 text, 3:1 lines and frames)
FRAME_NEED = 3.0


# The red of an error message or a wrong answer: readable on the light and dark backgrounds.
ERROR_RED = "#c62828"


def palette(name: str) -> Palette:
    try:
        return PALETTES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r}; choose {', '.join(PALETTES)}") from None


def _lut(stops: list[tuple[float, str]], size: int = 256) -> np.ndarray:
    """(size, 3) uint8 table interpolated linearly between hex colour stops."""
    pos = np.array([p for p, _ in stops])
    rgb = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for _, c in stops], float)
    x = np.linspace(0.0, 1.0, size)
    return (
        np.stack([np.interp(x, pos, rgb[:, k]) for k in range(3)], axis=1).round().astype(np.uint8)
    )


# Blue–white–red (ColorBrewer RdBu, reversed so positive is red): signed values.
DIVERGING = _lut(
    [(0.0, "#2166ac"), (0.25, "#92c5de"), (0.5, "#f7f7f7"), (0.75, "#f4a582"), (1.0, "#b2182b")]
)
# White to deep blue-violet: probabilities in [0, 1].
SEQUENTIAL = _lut([(0.0, "#f7fbff"), (0.35, "#9ecae1"), (0.7, "#3f7fbf"), (1.0, "#08306b")])
# Purple–green (ColorBrewer PRGn, green positive): diverging, red–green colour-blind safe.
PRGN = _lut(
    [(0.0, "#762a83"), (0.25, "#c2a5cf"), (0.5, "#f7f7f7"), (0.75, "#a6dba0"), (1.0, "#1b7837")]
)
# Greyscale for black-and-white printing: signed values dark (−) to light (+), zero mid-grey;
# probabilities white (0) to black (1).
GREY_SIGNED = _lut([(0.0, "#1a1a1a"), (0.5, "#9a9a9a"), (1.0, "#ffffff")])
GREY_SEQUENTIAL = _lut([(0.0, "#ffffff"), (1.0, "#1a1a1a")])

# View ▸ Colormap: name → (menu label, values LUT, weights LUT).
COLORMAP_CHOICES = {
    "diverging": ("Blue–white–red (diverging)", DIVERGING, SEQUENTIAL),
    "prgn": ("Purple–green (PRGn, colour-blind safe)", PRGN, SEQUENTIAL),
    "grey": ("Greyscale (for printing)", GREY_SIGNED, GREY_SEQUENTIAL),
}
DEFAULT_COLORMAP = "diverging"


def check_colormap(name: str) -> str:
    if name not in COLORMAP_CHOICES:
        raise ValueError(f"unknown colormap {name!r}; choose {', '.join(COLORMAP_CHOICES)}")
    return name


# The two colour classes of every heatmap: "values" (signed numbers, a diverging map on
# symmetric levels) and "weights" (probabilities, a sequential map on 0..1).
COLOR_KINDS = ("values", "weights")
_KIND_ALIASES = {"signed": "values"}  # the older name, still accepted


def color_kind(kind: str) -> str:
    """The colour kind: "values" or "weights" ("signed" means "values"); else ValueError."""
    kind = _KIND_ALIASES.get(kind, kind)
    if kind not in COLOR_KINDS:
        raise ValueError(f"unknown colour kind {kind!r}; choose values or weights")
    return kind


def colormap_for(kind: str, colormap: str = DEFAULT_COLORMAP) -> np.ndarray:
    """The LUT of a colour kind: sequential for "weights", diverging for "values".

    `colormap` picks one of COLORMAP_CHOICES (default: blue–white–red).
    """
    _label, values, weights = COLORMAP_CHOICES[check_colormap(colormap)]
    return weights if color_kind(kind) == "weights" else values


def levels_for(kind: str, *arrays: np.ndarray) -> tuple[float, float]:
    """Fixed colour levels: 0..1 for "weights", symmetric ±max|finite| for "values".

    Never auto-levels: a constant matrix or a row of -inf must still get sane levels.
    """
    if color_kind(kind) == "weights":
        return (0.0, 1.0)
    return symmetric_levels(max((peak(np.asarray(a)) for a in arrays), default=0.0))


def symmetric_levels(top: float) -> tuple[float, float]:
    """±top, never a subnormal range nor one whose span overflows (±SMALLEST_PEAK …
    ±LARGEST_PEAK); ±1 when there is nothing to scale (0 or NaN)."""
    top = min(max(top, SMALLEST_PEAK), LARGEST_PEAK) if top > 0 else 1.0
    return (-top, top)


def colour_index(values, levels: tuple[float, float], size: int) -> np.ndarray:
    """The entry of a `size`-entry colour map each value takes on `levels` (rounded,
    clipped at both ends); a non-finite value, or any value on non-finite levels, takes
    the middle entry. Computed in halves: the span of ±1e308 overflows, and the halves of
    ±5e-324 are 0 (an empty span counts as 1)."""
    lo, hi = levels
    half_span = hi / 2 - lo / 2
    if not half_span > 0:
        half_span = 0.5
    middle = (size - 1) / 2
    v = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        position = (np.where(np.isfinite(v), v, lo / 2 + hi / 2) / 2 - lo / 2) / half_span
        position = np.nan_to_num(position * (size - 1), nan=middle, posinf=middle, neginf=middle)
    return np.clip(position.round(), 0, size - 1).astype(int)


def colors_for(values: np.ndarray, levels: tuple[float, float], lut: np.ndarray) -> np.ndarray:
    """RGB (…, 3) uint8 for each value; non-finite values map to the middle colour."""
    return lut[colour_index(values, levels, len(lut))]


def text_color_on(rgb) -> str:
    """Black or white, whichever reads better on a cell of colour `rgb` (relative luminance)."""
    r, g, b = (float(c) / 255.0 for c in rgb[:3])
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if lum > 0.5 else "#ffffff"
