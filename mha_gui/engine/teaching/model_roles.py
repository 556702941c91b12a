"""Each head of a model's grid labelled by its role, for the model view and its figure.

The model view draws every layer × head on the user's sentence; this module says what
each of those heads does, with the scores of engine/teaching/head_roles.py:

- previous, first and self on the sentence itself (the maps the view draws);
- duplicate and induction on the sentence when it repeats enough tokens to measure them
  (`MIN_REPEATED_ROWS` rows with an earlier copy: one repeated "the" is one row, and one
  row's weight is noise, not a role), else on the repeated-tokens probe — the figure
  says which;
- for the built-in classroom model also agreement and antecedent, measured on the
  classroom language's evaluation sentences (the 100 of each its model card reports),
  so a class sees all four of its roles labelled whatever sentence it typed.

No Qt. The grammar scores do not depend on the sentence, so they are computed once per
model file and process (about 3 s for the built-in model on two cores).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mha_gui.engine.teaching.head_roles import (
    THRESHOLD,
    HeadRoles,
    label_of,
    probe_frame,
    repeated_tokens_probe,
    role_masks,
    role_scores,
    sentence_scores,
)

GRAMMAR_ROLES = ("agreement", "antecedent")
#: the order roles are offered in (the textbook's four first)
ROLE_ORDER = ("previous", "induction", "agreement", "antecedent", "first", "self", "duplicate")
REPEAT_ROLES = ("duplicate", "induction")
MIN_REPEATED_ROWS = 4
PROBE_SPAN = 20  # as `head_roles`' probe: 20 random tokens, then the same 20
GRAMMAR_SENTENCES = 100  # as in the built-in model's card
CHUNK = 10  # grammar sentences between two progress reports (and chances to cancel)

Progress = Callable[[int, int], None] | None

_grammar_cache: dict[tuple, dict[str, np.ndarray]] = {}


@dataclass(frozen=True, eq=False)
class GridRoles:
    """Role scores of every head of a grid (rows index `roles.layers`)."""

    roles: HeadRoles
    repeats_on: str  # "text" or "probe": where duplicate and induction were measured
    grammar: bool  # agreement and antecedent were measured (the built-in model)

    @property
    def measured(self) -> tuple[str, ...]:
        """The roles with scores, in `ROLE_ORDER`."""
        return tuple(r for r in ROLE_ORDER if r in self.roles.scores)

    def score(self, role: str, row: int, head: int) -> float:
        return float(self.roles.scores[role][row, head])

    def label(self, row: int, head: int, role: str | None = None) -> str:
        """The head's strongest role from the threshold up ("prev 0.92"), or with `role`
        that role's score when it reaches the threshold; "" otherwise."""
        if role is None:
            return self.roles.label(row, head)
        return label_of(role, self.score(role, row, head)) if self.plays(role, row, head) else ""

    def plays(self, role: str, row: int, head: int) -> bool:
        """Does the head score at least the threshold on `role`?"""
        value = self.score(role, row, head)
        return not np.isnan(value) and value >= self.roles.threshold

    def count(self, role: str) -> int:
        """How many heads play `role`."""
        values = self.roles.scores[role]
        return int(np.sum(~np.isnan(values) & (values >= self.roles.threshold)))

    def summary(self, row: int, head: int, top: int = 3) -> str:
        """The head's best scores, "agreement 1.00 · previous 0.57 · self 0.25"."""
        pairs = [(self.score(r, row, head), r) for r in self.measured]
        pairs = sorted(((v, r) for v, r in pairs if not np.isnan(v)), reverse=True)[:top]
        return " · ".join(f"{r} {v:.2f}" for v, r in pairs)

    def note(self) -> str:
        """Where each role was measured, one sentence for the figure."""
        where = (
            "this text"
            if self.repeats_on == "text"
            else ("a repeated-tokens probe (this text repeats too few tokens)")
        )
        parts = [f"previous, first and self on this text; duplicate and induction on {where}"]
        if self.grammar:
            parts.append(
                f"agreement and antecedent on {GRAMMAR_SENTENCES} classroom sentences each"
            )
        return (
            f"each map is labelled with its head's strongest role from "
            f"{self.roles.threshold:.2f} up — " + "; ".join(parts)
        )


def repeated_rows(token_ids) -> int:
    """How many rows of a text the induction score would average over."""
    return int(role_masks(token_ids)[1].any(axis=1).sum())


def is_builtin(path) -> bool:
    from mha_gui.engine.models.builtin import builtin_model_path

    try:
        return Path(path).resolve() == builtin_model_path().resolve()
    except OSError:
        return False


def grid_roles(
    maps, path, *, seed: int = 0, progress: Progress = None, grammar: bool | None = None
) -> GridRoles:
    """The role scores of every head of `maps` (an engine ModelAttention of `path`).

    `grammar` None: the agreement and antecedent roles for the built-in model only.
    `progress(done, total)` is called between steps; raising from it stops the work.
    """
    from mha_gui.engine.models.loader import attention_maps

    grammar = is_builtin(path) if grammar is None else grammar
    rows = list(maps.layers)
    scores = role_scores(maps.weights, maps.token_ids)
    probe = repeated_rows(maps.token_ids) < MIN_REPEATED_ROWS
    fresh = grammar and _file_key(path) not in _grammar_cache
    steps = int(probe) + (len(GRAMMAR_ROLES) * -(-GRAMMAR_SENTENCES // CHUNK) if fresh else 0)
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, max(steps, 1))

    if probe:
        prefix, special = probe_frame(path)
        room = (maps.info.max_positions - len(prefix)) // 2  # a small model's few positions
        ids = repeated_tokens_probe(
            maps.info.vocab_size, seed, min(PROBE_SPAN, room), prefix=prefix, exclude=special
        )
        probed = attention_maps(path, token_ids=ids, layers=rows)
        probe_scores = role_scores(probed.weights, probed.token_ids)
        for role in REPEAT_ROLES:
            scores[role] = probe_scores[role]
        step()
    if grammar:
        for role, values in grammar_scores(path, step).items():
            scores[role] = values[rows]
    roles = HeadRoles(scores, list(maps.tokens), list(maps.token_ids), maps.layers, THRESHOLD)
    return GridRoles(roles, "probe" if probe else "text", grammar)


def _file_key(path) -> tuple:
    folder = Path(path).resolve()
    stamps = []
    for name in ("model.safetensors", "config.json"):
        try:
            st = (folder / name).stat()
            stamps.append((st.st_mtime_ns, st.st_size))
        except OSError:
            stamps.append(None)
    return (str(folder), *stamps)


def grammar_scores(path, step: Callable[[], None] = lambda: None) -> dict[str, np.ndarray]:
    """{"agreement", "antecedent"}: (layers, heads) mean weights from the position that
    must choose to the key it needs, over the classroom evaluation sentences (cached)."""
    from mha_gui.engine.teaching import classroom

    key = _file_key(path)
    if key not in _grammar_cache:
        makers = {
            "agreement": classroom.agreement_sentences,
            "antecedent": classroom.antecedent_sentences,
        }
        out = {}
        for role, make in makers.items():
            sentences = make(GRAMMAR_SENTENCES, 0)
            total = 0.0
            for start in range(0, len(sentences), CHUNK):
                part = sentences[start : start + CHUNK]
                total = total + sentence_scores(path, part) * len(part)
                step()
            out[role] = total / len(sentences)
        _grammar_cache[key] = out
    return {role: values.copy() for role, values in _grammar_cache[key].items()}
