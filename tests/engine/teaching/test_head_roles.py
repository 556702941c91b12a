"""Head-role scores: the vectorised scorer equals a deliberately naive loop of the formulas
on many random shapes and texts with repeats; the edge cases score NaN, not 0."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine.teaching.head_roles import (
    ROLES,
    HeadRoles,
    label_of,
    pair_scores,
    repeated_tokens_probe,
    role_scores,
)


def naive(a: np.ndarray, t: list[int]) -> dict[str, float]:
    """One head, loops only, straight from the definitions."""
    n = len(t)
    out = {}
    out["previous"] = sum(a[i][i - 1] for i in range(1, n)) / (n - 1) if n > 1 else math.nan
    out["first"] = sum(a[i][0] for i in range(1, n)) / (n - 1) if n > 1 else math.nan
    out["self"] = sum(a[i][i] for i in range(n)) / n
    rows = []
    for i in range(n):
        js = [j for j in range(i) if t[j] == t[i]]
        if js:
            rows.append(sum(a[i][j] for j in js))
    out["duplicate"] = sum(rows) / len(rows) if rows else math.nan
    rows = []
    for i in range(n):
        js = [j for j in range(i - 1) if t[j] == t[i]]
        if js:
            rows.append(sum(a[i][j + 1] for j in js))
    out["induction"] = sum(rows) / len(rows) if rows else math.nan
    return out


@st.composite
def heads_and_tokens(draw):
    layers = draw(st.integers(1, 3))
    heads = draw(st.integers(1, 4))
    n = draw(st.integers(1, 14))
    alphabet = draw(st.integers(1, 6))  # a small alphabet: many repeats
    tokens = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    raw = rng.random((layers, heads, n, n)) * np.tril(np.ones((n, n)))
    causal = draw(st.booleans())
    weights = raw if causal else rng.random((layers, heads, n, n))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights, tokens


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@settings(max_examples=300, deadline=None)
@given(heads_and_tokens())
def test_vectorised_scores_equal_the_naive_loops(case):
    weights, tokens = case
    scores = role_scores(weights, tokens)
    assert set(scores) == set(ROLES)
    layers, heads = weights.shape[:2]
    for role in ROLES:
        assert scores[role].shape == (layers, heads)
    for layer in range(layers):
        for head in range(heads):
            expected = naive(weights[layer, head], tokens)
            for role in ROLES:
                got = float(scores[role][layer, head])
                assert same(got, expected[role]), (role, got, expected[role])


@settings(max_examples=100, deadline=None)
@given(heads_and_tokens())
def test_one_head_and_any_leading_shape_give_the_same_numbers(case):
    weights, tokens = case
    whole = role_scores(weights, tokens)
    one = role_scores(weights[0, 0], tokens)
    for role in ROLES:
        assert one[role].shape == ()
        assert same(float(one[role]), float(whole[role][0, 0]))


def test_one_token_scores_only_self():
    scores = role_scores(np.ones((2, 3, 1, 1)), [5])
    assert np.all(scores["self"] == 1.0)
    for role in ("previous", "first", "duplicate", "induction"):
        assert np.all(np.isnan(scores[role])), role


def test_no_repeats_leave_duplicate_and_induction_unmeasured():
    n = 6
    a = np.tril(np.ones((n, n)))
    a /= a.sum(axis=1, keepdims=True)
    scores = role_scores(a[None, None], list(range(n)))
    assert np.isnan(scores["duplicate"]).all() and np.isnan(scores["induction"]).all()
    assert scores["first"][0, 0] == pytest.approx(np.mean([1 / (i + 1) for i in range(1, n)]))


def test_an_adjacent_repeat_is_a_duplicate_but_not_yet_induction():
    # t = a a: row 1 has j=0 < 1 with the same token (duplicate) but no j < 0 (induction)
    a = np.array([[1.0, 0.0], [0.3, 0.7]])
    scores = role_scores(a, [4, 4])
    assert scores["duplicate"] == pytest.approx(0.3)
    assert np.isnan(scores["induction"])


def test_a_perfect_induction_head_scores_one_on_the_probe():
    ids = repeated_tokens_probe(50, seed=3, span=7, prefix=[0], exclude=[0])
    n = len(ids)
    a = np.zeros((n, n))
    a[0, 0] = 1.0
    for i in range(1, n):
        earlier = [j for j in range(i - 1) if ids[j] == ids[i]]
        a[i, earlier[-1] + 1 if earlier else i - 1] = 1.0
    scores = role_scores(a, ids)
    assert scores["induction"] == pytest.approx(1.0)


def test_the_probe_is_distinct_random_tokens_repeated_and_fixed_by_its_seed():
    ids = repeated_tokens_probe(30, seed=1, span=20, prefix=[1], exclude=[0, 1])
    assert ids[0] == 1 and len(ids) == 41
    span = ids[1:21]
    assert ids[21:] == span and len(set(span)) == 20
    assert not {0, 1} & set(span)
    assert repeated_tokens_probe(30, seed=1, span=20, prefix=[1], exclude=[0, 1]) == ids
    assert repeated_tokens_probe(30, seed=2, span=20, prefix=[1], exclude=[0, 1]) != ids
    with pytest.raises(ValueError, match="at least 20"):
        repeated_tokens_probe(10, seed=0, span=20)


def test_pair_scores_average_the_named_cells():
    w = np.arange(2 * 3 * 3, dtype=float).reshape(2, 1, 3, 3)
    assert pair_scores(w, [(2, 0), (1, 1)]).tolist() == [[(6 + 4) / 2], [(15 + 13) / 2]]
    assert np.isnan(pair_scores(w, [])).all()


def test_strongest_role_labels_heads_from_the_threshold_up():
    scores = {r: np.full((1, 3), np.nan) for r in ROLES}
    scores["previous"][0] = [0.92, 0.2, 0.39]
    scores["induction"][0] = [0.5, 0.71, np.nan]
    roles = HeadRoles(scores, ["a", "b"], [0, 1], (0,))
    assert roles.labels() == [["prev 0.92", "induction 0.71", ""]]
    assert roles.strongest(0, 2) is None
    assert label_of("duplicate", 0.456) == "dup 0.46"
    data = roles.as_json()
    assert data["layers"] == 1 and data["heads"] == 3
    assert data["scores"]["first"] == [[None, None, None]]


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match=r"3 tokens need \(\.\.\., 3, 3\)"):
        role_scores(np.ones((2, 2)), [1, 2, 3])


@pytest.mark.parametrize(
    ("family", "prefix_token"), [("gpt2", None), ("bert", "[CLS]"), ("llama", "<s>")]
)
def test_head_roles_of_a_model_folder_use_the_apps_maps(tmp_path, family, prefix_token):
    from tokenizers import Tokenizer

    from mha_gui.engine.models import attention_maps, describe_model
    from mha_gui.engine.teaching.head_roles import head_roles, probe_frame
    from tests.engine.models.builders import build_model

    build_model(tmp_path, family)
    tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    prefix, special = probe_frame(tmp_path)
    assert prefix == ([] if prefix_token is None else [tok.token_to_id(prefix_token)])
    assert special and all(tok.id_to_token(i) is not None for i in special)

    roles = head_roles(tmp_path, seed=4, span=6)  # no text: the repeated-tokens probe
    info = describe_model(tmp_path)
    ids = repeated_tokens_probe(info.vocab_size, 4, 6, prefix=prefix, exclude=special)
    assert roles.token_ids == ids
    maps = attention_maps(tmp_path, token_ids=ids)
    expected = role_scores(maps.weights, ids)
    for role in ROLES:
        np.testing.assert_array_equal(roles.scores[role], expected[role])
    assert roles.shape == (info.n_layers, info.n_heads)

    text = head_roles(tmp_path, text="the cat sat on the mat")
    assert text.tokens == attention_maps(tmp_path, text="the cat sat on the mat").tokens
    with pytest.raises(ValueError, match="one of"):
        head_roles(tmp_path, text="the cat", probe="repeated")
    with pytest.raises(ValueError, match="unknown probe"):
        head_roles(tmp_path, probe="zigzag")
