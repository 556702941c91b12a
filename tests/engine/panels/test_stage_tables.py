"""Every table that reads the stages or the panel kinds covers every one of them.

Adding a stage is one entry in STAGES and adding a panel kind one entry in KINDS; these
tests fail when some consumer's table misses one, and check each stage's facts (its
operand shapes, its FLOPs and how they grow, which edits repaint a panel) against the
arrays of a real forward pass and an independent count.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import random_parameters
from mha_gui.engine.layer.session import Session, default_tokens
from mha_gui.engine.panels.info import info_text
from mha_gui.engine.panels.panel_kinds import (
    KINDS,
    LAYER_KEY,
    REACHES,
    key_head,
    panel_changed,
    panel_key,
)
from mha_gui.engine.panels.stage_panels import (
    SessionData,
    describe_stage,
    make_panel,
    panel_keys,
    shows_pairs,
)
from mha_gui.engine.panels.stages import (
    K_ROT,
    PLANS,
    Q_ROT,
    ROPE_ROWS,
    STAGE_NAMES,
    STAGES,
    Operands,
    operand_shapes,
    plan_for,
    shapes_line,
)
from mha_gui.engine.panels.stats import layer_stats


@st.composite
def configs(draw) -> Config:
    h_kv = draw(st.integers(1, 3))
    return Config(
        n=draw(st.integers(1, 6)),
        d_model=draw(st.integers(1, 6)),
        h=h_kv * draw(st.integers(1, 3)),
        h_kv=h_kv,
        d_k=2 * draw(st.integers(1, 3)),
        d_v=draw(st.integers(1, 4)),
        bias=draw(st.booleans()),
        causal=draw(st.booleans()),
        rope=draw(st.booleans()),
    )


def _session(config: Config, seed: int = 0) -> Session:
    return Session(config, default_tokens(config.n), random_parameters(config, seed))


def test_every_stage_carries_every_fact():
    c = Config(rope=True, bias=True)
    assert tuple(PLANS) == STAGE_NAMES == tuple(s.name for s in STAGES)
    assert [s.index for s in STAGES] == list(range(len(STAGES)))
    for s in STAGES:
        assert s.title and s.formula and s.latex and s.what
        assert s.plan.color in ("weights", "values") and s.plan.bar_label and s.plan.rows
        inputs, results = s.operands(Operands(c))
        assert results and all(isinstance(sym, str) for sym, _ in inputs + results)
        assert isinstance(s.flops(c), int) and s.flops(c) >= 0
        assert s.growth in ("", "∝ n", "∝ n²")


def test_every_kind_is_shown_somewhere_and_every_row_kind_exists():
    shown = {row.kind for s in STAGES for row in s.plan.rows} | {
        row.kind for row in ROPE_ROWS.values()
    }
    assert shown == set(KINDS)
    for kind in KINDS.values():
        assert kind.reach in REACHES and kind.per in (None, "head", "group")


def test_the_stage_consumers_cover_every_stage():
    config = Config(rope=True, bias=True, h_kv=1)
    assert set(layer_stats(config).flops) == set(STAGE_NAMES)
    text = info_text(_session(config))
    for s in STAGES:
        assert re.search(rf"^  {s.index} {s.name} ", text, re.MULTILINE)
    data = SessionData(_session(config))
    for s in STAGES:
        view = describe_stage(data, s)
        assert [p.key for p in view.panels] == panel_keys(s, config)


def _array_of(symbol: str, session: Session, t) -> np.ndarray:
    """The array a stage's operand symbol names, for query head 0 (and its K/V group 0)."""
    p = session.params
    layer = {"X": p.X, "W_O": p.W_O, "H": t.concat, "Y": t.output}
    if symbol in layer:
        return layer[symbol]
    if symbol.startswith("W_"):  # W_i^Q, W_g^K, W_g^V
        return getattr(p, f"W_{symbol[-1]}")[0]
    letter = symbol.split("_")[0].split(" × ")[-1]  # "K̃_g" → "K̃", "2 × Z_i" → "Z"
    per_head = {"Q": t.q, "K": t.k, "V": t.v, Q_ROT: t.q_rot, K_ROT: t.k_rot}
    per_head.update(S=t.scores, A=t.weights, Z=t.heads)
    return per_head[letter][0]


@settings(max_examples=60, deadline=None)
@given(configs())
def test_operand_shapes_are_the_shapes_of_the_real_arrays(config):
    session = _session(config)
    t = session.run()
    for s in STAGES:
        inputs, results = operand_shapes(s, config)
        for sym, shape in inputs + results:
            rows, cols = (int(v) for v in shape.split("×"))
            assert _array_of(sym, session, t).shape == (rows, cols), (s.name, sym)


def _named_shapes(side: str) -> list[tuple[str, str]]:
    """ "Q_i, K_i: 4×2, S_i: 4×4" → [(Q_i, 4×2), (K_i, 4×2), (S_i, 4×4)]."""
    pairs, names = [], []
    for part in side.split(", ") if side else []:
        name, _colon, shape = part.partition(": ")
        names.append(name)
        if shape:
            pairs += [(n, shape) for n in names]
            names = []
    assert not names, side  # every name is followed by its shape
    return pairs


@settings(max_examples=60, deadline=None)
@given(configs())
def test_the_shapes_line_names_every_operand_with_its_shape_once(config):
    for s in STAGES:
        inputs, results = operand_shapes(s, config)
        line = shapes_line(s, config)
        left, _arrow, right = line.rpartition(" → ")
        assert _named_shapes(left) == inputs and _named_shapes(right) == results, line
        for side in (left, right):  # neighbours of one shape are named before it once
            found = re.findall(r"\d+×\d+", side)
            assert all(a != b for a, b in itertools.pairwise(found)), line


def _reference_flops(c: Config) -> dict[str, int]:
    """FLOPs counted per head and per product, a multiply-add as 2, written afresh."""
    n = c.n
    proj = sum(2 * n * c.d_model * c.d_k for _ in range(c.h))
    proj += sum(2 * n * c.d_model * (c.d_k + c.d_v) for _ in range(c.h_kv))
    if c.bias:
        proj += n * (c.h * c.d_k + c.h_kv * (c.d_k + c.d_v))
    out = 2 * n * (c.h * c.d_v) * c.d_model + (n * c.d_model if c.bias else 0)
    return {
        "input": 0,
        "projections": proj,
        "scores": sum(n * c.d_k + 2 * n * n * c.d_k for _ in range(c.h)),
        "weights": sum(5 * n * n for _ in range(c.h)),
        "mixing": sum(2 * n * n * c.d_v for _ in range(c.h)),
        "concat": 0,
        "output": out,
    }


@settings(max_examples=60, deadline=None)
@given(configs())
def test_flops_match_an_independent_count_and_grow_as_each_stage_says(config):
    assert layer_stats(config).flops == _reference_flops(config)
    longer = replace(config, n=2 * config.n)
    for s in STAGES:
        now, then = s.flops(config), s.flops(longer)
        if s.growth == "":
            assert now == then == 0
        elif s.growth == "∝ n":
            assert then == 2 * now
        else:  # n² dominates: more than linear, at most quadratic
            assert 2 * now < then <= 4 * now


# An edit of one parameter, and what it reaches from first principles: the query heads
# whose Z_i changes, and the heads whose contribution C_i changes.
def _reach(config: Config, name: str, index: int) -> tuple[set[int], set[int]]:
    c = config
    if name == "W_Q":
        heads = {index}
    elif name in ("W_K", "W_V"):
        heads = {i for i in range(c.h) if c.kv_group(i) == index}
    else:  # W_O row `index`: only that row's head's contribution
        return set(), {index // c.d_v}
    return heads, set(heads)


@settings(max_examples=60, deadline=None)
@given(configs(), st.sampled_from(["W_Q", "W_K", "W_V", "W_O"]), st.data())
def test_a_panel_that_changes_is_one_its_kind_says_repaints(config, name, data):
    """The dependence rule on the panel kind, against the numbers of a real edit: every
    panel whose matrix moved must be reported as changed (and X never is)."""
    before = _session(config, seed=1)
    params = before.params.copy()
    array = getattr(params, name)
    index = data.draw(st.integers(0, array.shape[0] - 1))
    array[index] += 0.5 + np.arange(array[index].size).reshape(array[index].shape) % 3
    after = Session(config, before.tokens, params)
    heads, contributions = _reach(config, name, index)
    old, new = SessionData(before), SessionData(after)
    for s in STAGES:
        for kind, head in panel_keys(s, config):
            one = key_head(head)
            moved = not np.array_equal(
                make_panel(old, kind, one).matrix, make_panel(new, kind, one).matrix
            )
            says = panel_changed(kind, head, heads, contributions)
            assert says or not moved, (s.name, kind, head, name, index)
            if kind == "X":
                assert not says


def test_a_layer_wide_panel_is_keyed_with_layer_key_and_named_with_none():
    c = Config()
    assert panel_key("Y", None) == panel_key("Y", 3) == ("Y", LAYER_KEY)
    assert panel_key("S", 1) == ("S", 1)
    assert key_head(LAYER_KEY) is None and key_head(None) is None and key_head(1) == 1
    view = describe_stage(SessionData(_session(c)), "output")
    assert [p.head for p in view.rows[0].panels] == [None]
    assert view.rows[0].panels[0].key == ("Y", LAYER_KEY)


@pytest.mark.parametrize("rope", [False, True])
def test_the_rows_of_every_stage_follow_the_config(rope):
    c = Config(rope=rope)
    kinds = [row.kind for row in plan_for("projections", c).rows]
    assert kinds == (["Q", "QR", "K", "KR", "V"] if rope else ["Q", "K", "V"])


def test_the_stages_whose_cells_are_query_key_pairs():
    assert [s.name for s in STAGES if shows_pairs(s)] == ["scores", "weights"]
    for s in STAGES:  # a pair stage's panels are n×n: one column per key
        c = Config(n=3, d_model=5)
        square = all(
            make_panel(SessionData(_session(c)), k, key_head(h)).matrix.shape == (3, 3)
            for k, h in panel_keys(s, c)
        )
        assert shows_pairs(s) == square
