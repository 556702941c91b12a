"""Exercises (issue 10): hide K cells of a stage, check a student's numbers, give hints.

The engine knows every number and where it came from, so it can grade. A stage's cells
are those of the panels the window shows at that stage (`stage_panels.describe_stage`),
minus the blocked score/weight cells (−∞ and 0 are given, not computed) and minus the
repeats of a K/V head shared by several query heads (GQA/MQA). Which cells are hidden
depends only on the session, the stage, the count and the seed: same seed, same cells.

An answer is right when it is within half a unit of the last decimal the window prints
for that stage (`NumberFormat`: 0.417 shown as "0.417" accepts 0.4165…0.4175) or within a
teacher's tolerance. A hint is the cell's hover explanation with its result replaced by
"?" — the formula with the numbers, as the tooltips give it.

    ex = make_exercise(session, "weights", blanks=4, seed=7)
    ex.cells[0].label            # "A_1[2,0]"
    ex.submit(0, "0.42")         # Verdict(correct=True, ...); bad text raises ValueError
    ex.hint(0), ex.reveal(0)     # the formula with numbers / the answer (counts as wrong)
    ex.solutions[0]              # the worked solution, result included
    ex.score.text                # "1 of 4"
    ex.is_hidden("A", 1, 2, 0)   # for the window: draw an empty box there
    ex.panel_blanks("A", 1)      # {(row, col): index} of one panel's hidden cells
"""

from __future__ import annotations

import html
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.layer.numbers import NumberFormat, num
from mha_gui.engine.layer.session import Session
from mha_gui.engine.layer.values import parse_value
from mha_gui.engine.panels.notation import rich_text, unicode_text
from mha_gui.engine.panels.panel_kinds import KINDS, panel_key
from mha_gui.engine.panels.stage_data import SessionData
from mha_gui.engine.panels.stage_panels import describe_stage
from mha_gui.engine.panels.stages import Stage, as_stage, formula_for
from mha_gui.engine.teaching.explain import explain_cell


@dataclass(frozen=True)
class Cell:
    """One cell a student can be asked: panel (kind, head) of the stage, row, column."""

    kind: str  # "Q", "S", "A", … (see stage_panels.KINDS)
    head: int | None  # the query head of the panel; None for X, H and Y
    row: int
    col: int
    symbol: str  # "A_1", "K_0", "Y"
    value: float
    row_name: str = ""  # the row's token ("cat"), as the panel's axis names it
    col_name: str = ""  # the column's token (a key) or feature number

    @property
    def label(self) -> str:
        """`A_1[2,0]`: the cell by its indices (stable; what a copied matrix says)."""
        return f"{self.symbol}[{self.row},{self.col}]"

    @property
    def name(self) -> str:
        """`A₀[cat, down]`: the cell as a person reads it — the symbol typeset in Unicode,
        rows and key columns by their tokens (feature columns keep their numbers)."""
        row = self.row_name or str(self.row)
        col = self.col_name or str(self.col)
        return f"{unicode_text(self.symbol)}[{row}, {col}]"

    @property
    def name_html(self) -> str:
        """`name` as Qt rich text: the symbol typeset, the tokens escaped (a token may
        hold `<`, `_` or `^` and is printed as it is)."""
        row = html.escape(self.row_name or str(self.row))
        col = html.escape(self.col_name or str(self.col))
        return f"{rich_text(self.symbol)}[{row}, {col}]"

    @property
    def key(self) -> tuple[str, int, int, int]:
        """(kind, head or LAYER_KEY, row, col): PanelView.key plus the cell."""
        return (*panel_key(self.kind, self.head), self.row, self.col)


def stage_cells(session: Session, stage, trace=None) -> tuple[list[Cell], NumberFormat]:
    """Every cell of `stage` a student could be asked, in reading order (panel by panel,
    row by row), and the number format the window uses for the stage."""
    view = describe_stage(SessionData(session, trace), as_stage(stage))
    cells: list[Cell] = []
    seen: set[tuple[str, int, int]] = set()
    for panel in view.panels:
        sym = panel.symbol.text
        m = panel.matrix
        rows, cols = _axis_names(panel.row_labels), _axis_names(panel.col_labels)
        for r in range(m.shape[0]):
            for c in range(m.shape[1]):
                if panel.blocked is not None and panel.blocked[r, c]:
                    continue
                if not math.isfinite(m[r, c]) or (sym, r, c) in seen:
                    continue
                seen.add((sym, r, c))
                cell = Cell(panel.kind, panel.head, r, c, sym, float(m[r, c]), rows[r], cols[c])
                cells.append(cell)
    return cells, view.fmt


def _axis_names(labels: list[str]) -> list[str]:
    """An axis's labels as cell names: a token that occurs twice gets its position
    (`the@0`, `the@4`), so every name points at one cell."""
    seen = [str(x) for x in labels]
    return [x if seen.count(x) == 1 else f"{x}@{i}" for i, x in enumerate(seen)]


def shortcut_groups(cells: list[Cell], stage: Stage) -> dict[int, tuple]:
    """Cell index → its group: cells the stage's page ties by an identity a student can
    use instead of the formula — a row of weights sums to 1, and Y = Σ_i C_i at the
    output. A blank alone in its group can be read off the shown (rounded) neighbours."""
    if stage.name == "weights":
        return {i: ("A", c.head, c.row) for i, c in enumerate(cells)}
    if stage.name == "output":
        return {i: ("Y", c.row, c.col) for i, c in enumerate(cells)}
    return {}


def _shortcut_value(blank: Cell, others: list[Cell], stage: Stage, fmt: NumberFormat) -> float:
    """What the identity gives for `blank` from its group's shown, rounded cells."""

    def shown(c: Cell) -> float:  # the number as printed ("≈0": about 0), in real units
        text = fmt.plain(c.value)
        return 0.0 if text == "≈0" else parse_value(text) * 10.0**fmt.exponent

    if stage.name == "weights":
        return 1.0 - sum(shown(c) for c in others)
    parts = sum(shown(c) for c in others if c.kind == "C")
    if blank.kind == "Y":
        return parts + (blank.value - sum(c.value for c in others if c.kind == "C"))
    y = next((shown(c) for c in others if c.kind == "Y"), None)
    return blank.value if y is None else y - parts


def misleading(cells: list[Cell], chosen: set[int], stage: Stage, fmt: NumberFormat) -> list[int]:
    """The chosen blanks a shortcut answers wrongly: alone in their group, and the
    identity on the shown neighbours gives a number the key would mark wrong."""
    groups = shortcut_groups(cells, stage)
    tol = shown_tolerance(fmt)
    bad = []
    for i in chosen:
        if i not in groups:
            continue
        group = [j for j, g in groups.items() if g == groups[i]]
        if len(group) < 2 or any(j in chosen for j in group if j != i):
            continue
        others = [cells[j] for j in group if j != i]
        if abs(_shortcut_value(cells[i], others, stage, fmt) - cells[i].value) > tol + 1e-12:
            bad.append(i)
    return sorted(bad)


def _pick(cells: list[Cell], stage: Stage, blanks, seed, fmt: NumberFormat) -> list[Cell]:
    """`blanks` cells chosen by `seed` (same seed, same cells); at the weights and output
    stages, never a blank whose shortcut (1 − the row's other shown weights; Y = Σ_i C_i)
    gives a number its key marks wrong (see `misleading`)."""
    if isinstance(blanks, bool) or not isinstance(blanks, numbers.Integral) or blanks < 1:
        raise ValueError(f"the number of blanks must be a whole number ≥ 1, got {blanks!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"the seed must be a whole number ≥ 0, got {seed!r}")
    if blanks > len(cells):
        raise ValueError(
            f"{blanks} blanks asked but stage {stage.name!r} has only {len(cells)} cells "
            f"to fill in this layer"
        )
    chosen = np.random.default_rng(int(seed)).choice(len(cells), size=int(blanks), replace=False)
    picked = {int(i) for i in chosen}
    if shortcut_groups(cells, stage) and misleading(cells, picked, stage, fmt):
        picked = _pick_without_shortcuts(cells, stage, int(blanks), int(seed), fmt)
    return [cells[i] for i in sorted(picked)]


def _pick_without_shortcuts(
    cells: list[Cell], stage: Stage, blanks: int, seed: int, fmt: NumberFormat
) -> set[int]:
    """`blanks` cells in the seed's order where no blank is a lone cell of its group
    that the identity (row sums to 1, Y = Σ C_i) would answer differently from the key:
    such a cell comes with a second blank of its group, or is passed over."""
    groups = shortcut_groups(cells, stage)
    order = [int(i) for i in np.random.default_rng(seed).permutation(len(cells))]
    picked: set[int] = set()
    for i in order:
        if len(picked) == blanks:
            break
        if i in picked:
            continue
        if not misleading(cells, picked | {i}, stage, fmt):
            picked.add(i)
            continue
        partner = next(
            (j for j in order if j not in picked and j != i and groups[j] == groups[i]), None
        )
        if partner is not None and blanks - len(picked) >= 2:
            picked |= {i, partner}
    if len(picked) < blanks:
        raise ValueError(
            f"stage {stage.name!r} cannot hide {blanks} cells so that none can be read off "
            f"its row's other (rounded) numbers with a different answer; "
            f"hide {len(picked)} or more cells of one row"
        )
    return picked


def shown_tolerance(fmt: NumberFormat) -> float:
    """Half a unit of the last decimal the stage shows (in real units, not ×10^k)."""
    return 0.5 * 10.0 ** (fmt.exponent - fmt.decimals)


def check_answer(answer, value: float, tolerance: float) -> bool:
    """True when `answer` (a number or text such as "0,42" or "−1.5") is within
    `tolerance` of `value`. Text that is not a number raises ValueError (say why)."""
    given = parse_value(answer)
    slack = 1e-9 * max(1.0, abs(value))  # 0.4165 typed for 0.4165000001 stays right
    return abs(given - value) <= tolerance + slack


def answer_text(cell: Cell, fmt: NumberFormat) -> str:
    """The answer as the window would print it, the cell named by its tokens:
    `A₁[cat, the] = 0.42`."""
    text = fmt.plain(cell.value)
    return f"{cell.name} = {text}" + (f" ×10^{fmt.exponent}" if fmt.exponent else "")


def worked_text(session: Session, cell: Cell, trace=None) -> str:
    """The worked solution: the cell's hover explanation, result included."""
    return explain_cell(
        cell.kind,
        cell.head,
        cell.row,
        cell.col,
        trace=trace if trace is not None else session.run(),
        params=session.params,
        config=session.config,
        tokens=session.tokens,
    )


def hint_text(session: Session, cell: Cell, trace=None, stage=None) -> str:
    """The stage's formula, then the cell's explanation with its result replaced by "?"."""
    explained = worked_text(session, cell, trace)
    first, newline, rest = explained.partition("\n")
    main, gap, note = first.partition("   (")
    result = f"= {num(cell.value)}"
    if main.rstrip().endswith(result):
        main = main.rstrip()[: -len(result)] + "= ?"
    text = main + gap + note + newline + rest
    if stage is None:
        return text
    return f"{formula_for(as_stage(stage), session.config)}\n{text}"


@dataclass(frozen=True)
class Score:
    correct: int
    answered: int
    total: int

    @property
    def text(self) -> str:
        return f"{self.correct} of {self.total}"


@dataclass(frozen=True)
class Verdict:
    correct: bool
    message: str  # "A_1[2,0]: right (0.42)" / "… not 0.41: try again or ask for a hint"


@dataclass
class Exercise:
    """K hidden cells of one stage and what the student did with them (no Qt).

    Everything the window needs is computed once when the exercise is made: the cells,
    their true values, hints and answers. `answers`/`results` map a cell's index to the
    last number typed and whether it was right; `revealed` holds cells whose answer was
    shown (they never count as right). `reset()` clears the student's work.
    """

    stage: Stage
    seed: int
    cells: list[Cell]
    fmt: NumberFormat
    tolerance: float
    hints: list[str]
    solutions: list[str]  # worked solutions (the explanation with its result)
    answers: dict[int, float] = field(default_factory=dict)
    results: dict[int, bool] = field(default_factory=dict)
    revealed: set[int] = field(default_factory=set)
    group_size: int = 1  # query heads per K/V head (config.group_size)

    def _shows(self, cell: Cell, kind: str, head: int | None) -> bool:
        """Whether panel (kind, head) shows `cell`: the K/V panels (K, V and, with RoPE,
        K̃) of every query head of a group show that group's matrix."""
        if cell.kind != kind:
            return False
        if cell.head == head:
            return True
        per = self.group_size
        shared = KINDS[kind].per == "group" and head is not None and cell.head is not None
        return shared and cell.head // per == head // per

    def index(self, kind: str, head: int | None, row: int, col: int) -> int | None:
        """The index of the hidden cell at (kind, head, row, col), or None if it shows."""
        for i, cell in enumerate(self.cells):
            if cell.row == row and cell.col == col and self._shows(cell, kind, head):
                return i
        return None

    def is_hidden(self, kind: str, head: int | None, row: int, col: int) -> bool:
        return self.index(kind, head, row, col) is not None

    def panel_blanks(self, kind: str, head: int | None) -> dict[tuple[int, int], int]:
        """{(row, col): cell index} of the hidden cells of one panel (PanelView.kind and
        .head), so a view can blank its cells in one pass."""
        return {
            (cell.row, cell.col): i
            for i, cell in enumerate(self.cells)
            if self._shows(cell, kind, head)
        }

    def submit(self, i: int, answer) -> Verdict:
        """Check the student's answer to cell `i` and remember it. Text that is not a
        number raises ValueError and changes nothing."""
        cell = self.cells[i]
        given = parse_value(answer)
        right = check_answer(given, cell.value, self.tolerance)
        self.answers[i] = given
        self.results[i] = right and i not in self.revealed
        if right:
            return Verdict(True, f"{cell.name}: right ({num(given)})")
        return Verdict(False, f"{cell.name}: not {num(given)}; try again or ask for a hint")

    def hint(self, i: int) -> str:
        return self.hints[i]

    def reveal(self, i: int) -> str:
        """The answer of cell `i`; from now on that cell does not count as right."""
        self.revealed.add(i)
        self.results[i] = False
        return answer_text(self.cells[i], self.fmt)

    @property
    def score(self) -> Score:
        return Score(sum(self.results.values()), len(self.results), len(self.cells))

    def reset(self) -> None:
        self.answers.clear()
        self.results.clear()
        self.revealed.clear()


def make_exercise(
    session: Session,
    stage,
    blanks: int,
    seed: int,
    *,
    tolerance: float | None = None,
    trace=None,
) -> Exercise:
    """Hide `blanks` cells of `stage` chosen by `seed`. `tolerance=None` accepts answers
    at the precision the stage shows; a number ≥ 0 is the teacher's own tolerance."""
    s = as_stage(stage)
    t = trace if trace is not None else session.run()
    cells, fmt = stage_cells(session, s, t)
    chosen = _pick(cells, s, blanks, seed, fmt)
    if tolerance is None:
        tol = shown_tolerance(fmt)
    elif (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, numbers.Real)
        or not math.isfinite(tolerance)
        or tolerance < 0
    ):
        raise ValueError(f"the tolerance must be a finite number ≥ 0, got {tolerance!r}")
    else:
        tol = float(tolerance)
    hints = [hint_text(session, cell, t, s) for cell in chosen]
    solutions = [worked_text(session, cell, t) for cell in chosen]
    return Exercise(
        s, int(seed), chosen, fmt, tol, hints, solutions, group_size=session.config.group_size
    )
