"""The task-condition grammar against a straightforward evaluation: random conditions
are written out as text, parsed by engine/lessons/condition_parser.py and evaluated (conditions.py), and
compared with the same condition computed directly in Python from the trace. Any text
at all is either a condition or a ValueError (hypothesis), never another exception."""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.lessons.condition_parser import parse_condition
from mha_gui.engine.lessons.condition_syntax import describe
from mha_gui.engine.lessons.conditions import Situation, check_condition, evaluate
from mha_gui.engine.panels.stages import STAGE_NAMES

ARRAYS = {"Q": "q", "K": "k", "V": "v", "S": "scores", "A": "weights", "Z": "heads"}
OPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@pytest.fixture(scope="module")
def world():
    session = load_preset("causal-6x16")
    trace = session.run()
    s = Situation(session.config, list(session.tokens), trace, session.params.X, 3, 2, 4)
    return session, trace, s


def random_operand(rng, session, trace, s):
    """(text, value) of a random number-valued operand."""
    c, tokens = session.config, session.tokens
    pick = rng.random()
    if pick < 0.45:
        kind = rng.choice([*ARRAYS, "X", "Y", "H"])
        row = rng.randrange(c.n)
        row_text = str(row) if rng.random() < 0.5 else f"'{tokens[row]}'"
        if kind in ("S", "A"):
            col = rng.randrange(c.n)
            col_text = str(col) if rng.random() < 0.5 else f"'{tokens[col]}'"
        else:
            width = {"X": c.d_model, "Y": c.d_model, "H": c.h * c.d_v}.get(kind, c.d_k)
            col = rng.randrange(width)
            col_text = str(col)
        if kind == "X":
            return f"X[{row_text}, {col_text}]", float(session.params.X[row, col])
        if kind == "Y":
            return f"Y[{row_text},{col_text}]", float(trace.output[row, col])
        if kind == "H":
            return f"H[{row_text} ,{col_text}]", float(trace.concat[row, col])
        head = rng.randrange(c.h_kv if kind in ("K", "V") else c.h)
        value = float(getattr(trace, ARRAYS[kind])[head, row, col])
        return f"{kind}_{head}[{row_text}, {col_text}]", value
    if pick < 0.65:
        name = rng.choice(["n", "d_model", "h", "h_kv", "d_k", "d_v", "scale"])
        value = c.effective_scale if name == "scale" else getattr(c, name)
        return f"config.{name}", float(value)
    if pick < 0.75:
        return "head", float(s.head)
    value = round(rng.uniform(-3, 3), rng.choice([0, 1, 3]))
    return (repr(value) if value >= 0 or rng.random() < 0.5 else f"-{abs(value)!r}"), value


def random_condition(rng, session, trace, s, depth=0):
    """(text, expected truth) of a random condition."""
    pick = rng.random()
    if depth >= 3 or pick < 0.4:
        choice = rng.random()
        if choice < 0.1:
            return "causal", bool(session.config.causal)
        if choice < 0.15:
            head = rng.randrange(session.config.h)
            return f"ablated contains {head}", head in session.config.ablate
        if choice < 0.2:
            name = rng.choice(["input", "scores", "weights", "output"])
            return f"stage == {name}", STAGE_NAMES.index(name) == s.stage
        if choice < 0.25:
            j = rng.randrange(session.config.n)
            return f"query != '{session.tokens[j]}'", s.query != j
        (lt, lv), (rt, rv) = (random_operand(rng, session, trace, s) for _ in range(2))
        op = rng.choice(list(OPS))
        return f"{lt} {op} {rt}", OPS[op](lv, rv)
    if pick < 0.55:
        text, value = random_condition(rng, session, trace, s, depth + 1)
        return f"not ({text})", not value
    if pick < 0.7:
        text, value = random_condition(rng, session, trace, s, depth + 1)
        return f"( {text} )", value
    op = rng.choice(["and", "or"])
    parts = [random_condition(rng, session, trace, s, depth + 1) for _ in range(rng.randint(2, 3))]
    text = f" {op} ".join(f"({t})" for t, _ in parts)
    values = [v for _, v in parts]
    return text, all(values) if op == "and" else any(values)


def test_random_conditions_agree_with_a_direct_evaluation(world):
    session, trace, s = world
    rng = random.Random(20240611)
    truths = []
    for _ in range(1500):
        text, expected = random_condition(rng, session, trace, s)
        tree = parse_condition(text)
        check_condition(tree, s)
        assert evaluate(tree, s) == expected, text
        # written back in the grammar's own spelling, it means the same
        assert evaluate(parse_condition(describe(tree)), s) == expected, text
        truths.append(expected)
    assert 0.2 < np.mean(truths) < 0.8  # both outcomes are exercised


def test_precedence_not_binds_tighter_than_and_than_or(world):
    _session, _trace, s = world
    assert evaluate(parse_condition("config.h == 4 or config.h == 1 and config.h == 2"), s)
    assert not evaluate(parse_condition("(config.h == 4 or config.h == 1) and config.h == 2"), s)
    assert evaluate(parse_condition("not config.h == 1 and config.h == 4"), s)
    assert evaluate(parse_condition("S_0[0, 1] == -inf"), s)  # causal: blocked is −∞
    assert evaluate(parse_condition("mask[0, 1] and not mask[1, 0]"), s)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="AS_0123[], .'\"<>=!-()andortcusflgehiqkvX", max_size=60))
def test_any_text_is_a_condition_or_a_value_error(text):
    session = load_preset("toy")
    s = Situation(session.config, list(session.tokens), session.run(), session.params.X)
    try:
        tree = parse_condition(text)
        check_condition(tree, s)
        evaluate(tree, s)
    except ValueError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_unicode_is_a_condition_or_a_value_error(text):
    session = load_preset("toy")
    s = Situation(session.config, list(session.tokens), session.run(), session.params.X)
    with contextlib.suppress(ValueError):
        evaluate(parse_condition(text), s)
