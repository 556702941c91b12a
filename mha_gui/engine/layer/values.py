"""Turning what a user types or pastes into numbers, with a reason when it cannot.

The C locale is used on purpose: a teacher's slide says 0.5, whatever the desktop's
language; a comma is accepted as a decimal point only when no other reading exists.
"""

from __future__ import annotations

import math
import re

import numpy as np

from mha_gui.engine.layer.parameters import VALUE_LIMIT


def parse_value(text) -> float:
    """A finite float within ±VALUE_LIMIT, or ValueError saying what is wrong."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
        raw = repr(text)
    else:
        raw = str(text).strip()
        if not raw:
            raise ValueError("empty cell: type a number")
        cleaned = raw.replace("−", "-")
        if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+", cleaned):
            raise ValueError(f"{raw!r} is ambiguous: write {cleaned.replace(',', '')} or use a dot")
        if cleaned.count(",") == 1 and "." not in cleaned:
            cleaned = cleaned.replace(",", ".")
        if cleaned.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ValueError(f"{raw!r} is not a finite number")
        try:
            value = float(cleaned)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number")
    if abs(value) > VALUE_LIMIT:
        raise ValueError(f"{raw} is beyond ±{VALUE_LIMIT:g}")
    return value


def parse_block(text: str) -> np.ndarray:
    """A rectangular block from spreadsheet text (tabs, or commas/spaces, between cells)."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise ValueError("the clipboard holds no numbers")
    whole = "\n".join(lines)
    sep = "\t" if "\t" in whole else ("," if "," in whole else None)
    rows = []
    for r, line in enumerate(lines):
        cells = line.split(sep) if sep else line.split()
        try:
            rows.append([parse_value(c) for c in cells])
        except ValueError as exc:
            raise ValueError(f"row {r + 1}: {exc}") from None
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(f"rows have different lengths ({sorted(widths)}): paste a rectangle")
    return np.array(rows, dtype=np.float64)


def format_value(value: float, decimals: int = 3) -> str:
    """Short text for a cell: integers without decimals, others rounded, no '-0'."""
    if not math.isfinite(value):
        return "−∞" if value < 0 else ("∞" if value > 0 else "NaN")
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def to_tsv(block: np.ndarray) -> str:
    """Tab-separated rows that round-trip exactly through `parse_block`."""
    return "\n".join("\t".join(repr(float(v)) for v in row) for row in np.atleast_2d(block))
