"""What an identity demonstration returns (engine/teaching/identities.py), and the reshapes it uses.

An `Identity` is a statement, the matrices of both sides grouped in `PartRow`s for a
figure (export/figures/identities.py paints them) and its `Check`s: the largest |left − right|
of each comparison (`compare`). No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.layer.numbers import peak

NAMES = ("packed", "split", "permute", "scale", "shift")


@dataclass(frozen=True)
class Part:
    """One matrix of a side, with its name (Unicode, as a figure prints it)."""

    label: str
    matrix: np.ndarray
    head: int | None = None  # the query head it belongs to (colours a figure's swatch)
    blocked: np.ndarray | None = None  # −∞ cells (masked scores)
    blocks: int = 0  # > 0: the columns are that many equal blocks, one per head
    block_symbol: str = "Z"  # what the blocks are called (Z₀ …, Q₀ …)


@dataclass(frozen=True)
class PartRow:
    caption: str
    parts: tuple[Part, ...]
    kind: str = "values"  # colour class: "values" (signed) or "weights" (0..1)
    scale_group: str = ""  # rows with one group share one colour scale ("" = own scale)


@dataclass(frozen=True)
class Check:
    """One comparison: the largest |left − right| and the size of what was compared."""

    what: str  # e.g. "X·W^Q_packed vs Q_i"
    max_abs: float
    size: float  # max |entry| of both sides (finite entries)

    @property
    def relative(self) -> float:
        return self.max_abs / self.size if self.size > 0 else self.max_abs


@dataclass(frozen=True)
class Identity:
    name: str  # one of NAMES
    title: str
    statement: str  # the equation, Unicode
    rows: tuple[PartRow, ...]
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = field(default=())  # conditions, what RoPE/GQA/ablation change
    shapes: str = ""  # the operands' shapes, one line

    @property
    def max_abs(self) -> float:
        """The largest difference of every comparison (what the dialog prints)."""
        return max((c.max_abs for c in self.checks), default=0.0)

    @property
    def relative(self) -> float:
        return max((c.relative for c in self.checks), default=0.0)

    @property
    def holds(self) -> bool:
        """True when every difference is float64 rounding (≤ 1e-12 relative)."""
        return self.relative <= 1e-12


def compare(what: str, left: np.ndarray, right: np.ndarray) -> Check:
    """Largest |left − right|; equal infinities (blocked scores) count as equal."""
    left, right = np.asarray(left, float), np.asarray(right, float)
    if left.shape != right.shape:
        raise ValueError(f"{what}: shapes {left.shape} and {right.shape} differ")
    same = (left == right) | (np.isnan(left) & np.isnan(right))
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, np.abs(left - right))
    max_abs = float(diff.max()) if diff.size else 0.0
    return Check(what, max_abs, max(peak(left), peak(right)))


# ------------------------------------------------------------------ reshapes -----
def packed(w: np.ndarray) -> np.ndarray:
    """(heads, d_model, d) → d_model × heads·d: the heads' matrices side by side."""
    heads, d_model, d = w.shape
    return w.transpose(1, 0, 2).reshape(d_model, heads * d)


def side_by_side(stack: np.ndarray) -> np.ndarray:
    """(heads, n, d) → n × heads·d, head 0 first (what Concat does)."""
    heads, n, d = stack.shape
    return stack.transpose(1, 0, 2).reshape(n, heads * d)


def split(matrix: np.ndarray, heads: int) -> np.ndarray:
    """n × heads·d → (heads, n, d): blocks of d columns, head 0 first."""
    n, width = matrix.shape
    if width % heads:
        raise ValueError(f"{width} columns do not split into {heads} equal blocks")
    return matrix.reshape(n, heads, width // heads).transpose(1, 0, 2)
