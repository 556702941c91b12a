"""Messages a student can act on, for every way the operands can disagree."""

import numpy as np
import pytest

from mha_gui.engine import Config, forward

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4))
WQ = rng.normal(size=(2, 4, 2))
WK = rng.normal(size=(2, 4, 2))
WV = rng.normal(size=(2, 4, 2))
WO = rng.normal(size=(4, 4))


def test_w_k_shape_message_names_dimensions():
    with pytest.raises(ValueError) as err:
        forward(X, WQ, rng.normal(size=(2, 4, 3)), WV, WO)
    assert str(err.value) == "W_K has shape (2, 4, 3) but d_model=4, d_k=2 needs (h_kv, 4, 2)"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(w_k=np.ones((3, 4, 2)), w_v=np.ones((3, 4, 2))), "divide"),
        (dict(w_o=np.ones((5, 4))), "W_O has shape (5, 4)"),
        (dict(w_v=np.ones((2, 5, 2))), "W_V has shape (2, 5, 2)"),
        (dict(x=np.ones(4)), "X must have 2 axes"),
        (dict(x=np.array([[np.nan] * 4] * 3)), "finite"),
        (dict(w_q=np.full((2, 4, 2), np.inf)), "finite"),
        (dict(mask=np.ones((3, 3))), "boolean"),
        (dict(mask=np.ones((2, 2), bool)), "mask has shape"),
        (dict(b_q=np.ones((2, 3))), "b_Q has shape"),
        (dict(scale=0.0), "scale"),
        (dict(scale=float("nan")), "scale"),
        (dict(x=np.array([["a"] * 4] * 3)), "numbers"),
    ],
)
def test_bad_operands_are_refused(kwargs, words):
    args = dict(x=X, w_q=WQ, w_k=WK, w_v=WV, w_o=WO)
    opts = {k: kwargs.pop(k) for k in list(kwargs) if k in ("mask", "scale", "b_q")}
    args.update(kwargs)
    with pytest.raises(ValueError, match=None) as err:
        forward(**args, **opts)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "changes, words",
    [
        (dict(h=4, h_kv=3), "must divide"),
        (dict(n=0), "between 1"),
        (dict(d_model=10**6), "between 1"),
        (dict(scale=-1.0), "positive"),
        (dict(causal="yes"), "true or false"),
        (dict(d_k=2.5), "whole number"),
    ],
)
def test_config_refuses_impossible_combinations(changes, words):
    with pytest.raises(ValueError) as err:
        Config(**changes)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "scale, words",
    [("0.5", "scale must be"), (np.array([0.5, 0.5]), "scale must be"), (1j, "scale must be")],
)
def test_scale_of_the_wrong_type_is_a_clear_value_error(scale, words):
    with pytest.raises(ValueError) as err:
        forward(X, WQ, WK, WV, WO, scale=scale)
    assert words in str(err.value)


def test_numpy_scalar_scale_is_accepted():
    t = forward(X, WQ, WK, WV, WO, scale=np.float32(0.5))
    assert t.scale == 0.5


def test_causal_must_be_true_or_false():
    with pytest.raises(ValueError, match="causal must be True or False"):
        forward(X, WQ, WK, WV, WO, causal="no")
    assert forward(X, WQ, WK, WV, WO, causal=np.bool_(True)).mask[0, 1]


@pytest.mark.parametrize(
    "x, words",
    [
        ([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]], "X must be a rectangular array of numbers"),
        (np.array([[1, None, 0, 0]] * 3, dtype=object), "X must hold numbers"),
    ],
)
def test_ragged_or_none_inputs_are_named(x, words):
    with pytest.raises(ValueError) as err:
        forward(x, WQ, WK, WV, WO)
    assert words in str(err.value)


@pytest.mark.parametrize("dtype, big", [(np.float64, 1e200), (np.float32, 1e30)])
def test_overflow_is_refused_not_returned_as_nan(dtype, big):
    args = [a.astype(dtype) for a in (X * big, WQ, WK, WV, WO)]
    with np.errstate(all="ignore"), pytest.raises(ValueError) as err:
        forward(*args)
    assert "too large" in str(err.value) and np.dtype(dtype).name in str(err.value)


def test_contributions_do_not_follow_later_edits_of_the_callers_w_o():
    w_o = WO.copy()
    t = forward(X, WQ, WK, WV, w_o)
    w_o[:] = 0.0
    np.testing.assert_allclose(t.contributions.sum(axis=0), t.output)


def test_config_too_large_for_memory_is_refused_before_any_allocation():
    """n=4096 with 128 heads passes every per-dimension limit but needs ~34 GB."""
    with pytest.raises(ValueError) as err:
        Config(n=4096, d_model=256, h=128, d_k=2, d_v=2)
    assert "GB" in str(err.value) and "h·n²" in str(err.value)
    Config(n=512, d_model=768, h=12, d_k=64, d_v=64)  # BERT-base at n=512 is fine


@pytest.mark.parametrize(
    "text, value", [("0,5", 0.5), ("-1,25", -1.25), (" 2 ", 2.0), ("1e-3", 0.001)]
)
def test_cell_text_is_parsed(text, value):
    from mha_gui.engine.layer.values import parse_value

    assert parse_value(text) == value


@pytest.mark.parametrize("text", ["1,000", "12,345,678", "1,2,3"])
def test_thousands_separators_are_refused_not_misread(text):
    from mha_gui.engine.layer.values import parse_value

    with pytest.raises(ValueError):
        parse_value(text)
