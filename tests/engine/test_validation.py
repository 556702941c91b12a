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
