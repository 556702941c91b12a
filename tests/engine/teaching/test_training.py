"""Training one head (issue 10): the loss by its definition, analytic gradients against
central finite differences, the toy preset's goals, plateaus and every refusal."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Config, Parameters, Session, load_preset, random_parameters
from mha_gui.engine.layer.session import default_tokens
from mha_gui.engine.teaching.training import (
    PLATEAU_HINT,
    Trainer,
    TrainingDiverged,
    attention_loss,
    check_target,
    default_lr,
    is_plateau,
    load_target,
    make_target,
    reinitialise_head,
    session_blocked,
    target_floor,
    train_steps,
    with_parameters,
)


def loss_by_definition(session, head, target):
    """The issue's formula, straight from the forward pass's weights."""
    a = session.run().weights[head]
    t = np.asarray(target, float)
    rows = t.sum(axis=1) > 0
    t_hat = t[rows] / t[rows].sum(axis=1, keepdims=True)
    logs = np.log(np.where(t_hat > 0, a[rows], 1.0))
    return -(t_hat * logs).sum() / rows.sum()


@st.composite
def problems(draw):
    """A random layer (MHA/GQA/MQA, causal, mask, biases, RoPE), a head and a target."""
    n = draw(st.integers(1, 6))
    d_model = draw(st.integers(1, 5))
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    use_rope = draw(st.booleans())
    d_k = draw(st.sampled_from([2, 4] if use_rope else [1, 2, 3]))
    config = Config(
        n=n,
        d_model=d_model,
        h=h,
        h_kv=h_kv,
        d_k=d_k,
        d_v=draw(st.integers(1, 3)),
        causal=draw(st.booleans()),
        bias=draw(st.booleans()),
        scale=draw(st.sampled_from([None, 0.3, 1.7])),
        rope=use_rope,
        rope_theta=draw(st.sampled_from([10000.0, 3.0])),
    )
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    params = random_parameters(config, seed=seed, std=draw(st.sampled_from([0.5, 1.0, 2.0])))
    mask = rng.random((n, n)) < 0.25 if draw(st.booleans()) else None
    session = Session(config, default_tokens(n), params, mask=mask)
    blocked = session_blocked(session)
    target = rng.random((n, n)) * ~blocked * (rng.random((n, 1)) < 0.8)
    if not (target > 0).any():
        free = np.argwhere(~blocked)
        if not len(free):
            target = None
        else:
            target[tuple(free[0])] = 1.0
    head = draw(st.integers(0, h - 1))
    return session, head, target


def numeric_gradient(session, head, target, name, eps=1e-6):
    base = getattr(session.params, name)
    grad = np.zeros_like(base)
    for index in np.ndindex(base.shape):
        losses = []
        for sign in (1, -1):
            arr = base.copy()
            arr[index] += sign * eps
            losses.append(attention_loss(with_parameters(session, {name: arr}), head, target)[0])
        grad[index] = (losses[0] - losses[1]) / (2 * eps)
    return grad


@settings(max_examples=80, deadline=None)
@given(problems())
def test_gradients_match_central_finite_differences(problem):
    session, head, target = problem
    if target is None:  # every pair blocked: nothing can be asked
        with pytest.raises(ValueError, match="all zeros"):
            attention_loss(session, head, np.zeros((session.config.n,) * 2))
        return
    loss, grads = attention_loss(session, head, target)
    assert loss == pytest.approx(loss_by_definition(session, head, target), rel=1e-9, abs=1e-12)
    c = session.config
    expected = {"W_Q", "W_K"} | ({"b_Q", "b_K"} if c.bias else set())
    assert set(grads) == expected
    g = c.kv_group(head)
    for name, grad in grads.items():
        full = getattr(session.params, name)
        assert grad.shape == full.shape
        own = head if name.endswith("Q") else g
        others = np.delete(grad, own, axis=0)
        assert not others.any(), f"{name} has gradient outside head {head} / group {g}"
        numeric = numeric_gradient(session, head, target, name)
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6, err_msg=name)
    if c.bias and not c.rope:
        # softmax ignores a constant added to a whole row: b^K adds q_j·b^K to row j
        assert np.abs(grads["b_K"]).max() < 1e-12


def test_key_bias_gets_zero_gradient_unless_rope_rotates_it():
    config = Config(n=5, d_model=4, h=2, d_k=2, d_v=2, bias=True)
    session = Session(config, default_tokens(5), random_parameters(config, seed=3))
    target = make_target("previous", 5)
    _, grads = attention_loss(session, 1, target)
    assert np.abs(grads["b_Q"]).max() > 1e-3  # the query bias matters...
    assert np.abs(grads["b_K"]).max() < 1e-12  # ...the key bias never does
    roped = Session(config.with_changes(rope=True, rope_theta=3.0), session.tokens, session.params)
    _, grads = attention_loss(roped, 1, target)
    assert np.abs(grads["b_K"]).max() > 1e-4  # rotated per position: no longer a row constant


def test_toy_loss_by_hand_and_the_weights_the_trainer_sees():
    s = load_preset("toy")
    target = make_target("previous", 4)
    loss, _ = attention_loss(s, 1, target)
    assert loss == pytest.approx(loss_by_definition(s, 1, target), rel=1e-12)
    trainer = Trainer(s, 1, target)
    np.testing.assert_allclose(trainer.weights, s.run().weights[1], atol=1e-12)
    assert trainer.loss == loss and trainer.floor == 0.0
    assert target_floor(make_target("uniform", 4)) == pytest.approx(np.log(4))


def test_toy_head1_previous_token_default_optimizer_reaches_the_goal():
    s = load_preset("toy")
    before = s.copy()
    result = train_steps(s, 1, make_target("previous", 4, session_blocked(s)), steps=300)
    assert result.losses[-1] < 0.1 * result.losses[0]
    assert not result.plateau
    trained = with_parameters(s, result.changed)
    weights = trained.run().weights[1]
    assert list(weights.argmax(axis=1)) == [0, 0, 1, 2]  # row 0 on itself
    # only head 1's W^Q and its group's W^K moved; the session given is untouched
    for name in ("X", "W_V", "W_O"):
        np.testing.assert_array_equal(getattr(trained.params, name), getattr(s.params, name))
    np.testing.assert_array_equal(trained.params.W_Q[0], s.params.W_Q[0])
    np.testing.assert_array_equal(trained.params.W_K[0], s.params.W_K[0])
    assert not np.array_equal(trained.params.W_Q[1], s.params.W_Q[1])
    np.testing.assert_array_equal(s.params.W_Q, before.params.W_Q)


def test_toy_head0_plateau_is_reported_and_a_reinitialised_head_escapes():
    s = load_preset("toy")
    target = make_target("previous", 4)
    trainer = Trainer(s, 0, target)
    trainer.step(300)
    losses = trainer.losses
    assert 0.1 * losses[0] < losses[-1] < 0.3 * losses[0]  # stalls near 20 %
    assert trainer.plateau and "Re-initialise" in PLATEAU_HINT
    fresh = reinitialise_head(s, 0, seed=0)
    assert set(fresh) == {"W_Q", "W_K"}
    np.testing.assert_array_equal(fresh["W_Q"][1], s.params.W_Q[1])
    np.testing.assert_array_equal(fresh["W_K"][1], s.params.W_K[1])
    again = train_steps(with_parameters(s, fresh), 0, target, steps=300)
    assert again.losses[-1] < 0.1 * again.losses[0] and not again.plateau
    np.testing.assert_array_equal(reinitialise_head(s, 0, 0)["W_Q"], fresh["W_Q"])
    assert not np.array_equal(reinitialise_head(s, 0, 1)["W_Q"], fresh["W_Q"])


def test_reinitialise_with_biases_and_gqa_touches_only_head_and_group():
    s = load_preset("gqa")
    c = s.config.with_changes(bias=True)
    s = Session(c, s.tokens, random_parameters(c, seed=1))
    fresh = reinitialise_head(s, 3, seed=5)
    g = c.kv_group(3)
    assert set(fresh) == {"W_Q", "W_K", "b_Q", "b_K"}
    for name, own in (("W_Q", 3), ("b_Q", 3), ("W_K", g), ("b_K", g)):
        keep = np.delete(fresh[name], own, axis=0)
        np.testing.assert_array_equal(keep, np.delete(getattr(s.params, name), own, axis=0))
    with pytest.raises(ValueError, match="seed"):
        reinitialise_head(s, 0, -1)


def test_stepping_in_ticks_equals_one_run_and_changed_applies_in_one_go():
    s = load_preset("toy")
    target = make_target("previous", 4)
    ticks = Trainer(s, 1, target)
    for _ in range(30):
        assert len(ticks.step(10)) == 10
    whole = train_steps(s, 1, target, steps=300)
    assert ticks.losses == whole.losses and ticks.steps_done == 300
    for name in ("W_Q", "W_K"):
        np.testing.assert_array_equal(ticks.changed()[name], whole.changed[name])
    np.testing.assert_array_equal(ticks.session().params.W_Q, whole.changed["W_Q"])


def test_sgd_also_learns_and_the_lr_default_shrinks_for_wide_layers():
    s = load_preset("toy")
    result = train_steps(s, 1, make_target("previous", 4), steps=300, optimizer="sgd")
    assert result.losses[-1] < 0.1 * result.losses[0]
    assert default_lr(s.config) == 0.05 and default_lr(s.config, "sgd") == 0.5
    assert default_lr(load_preset("bert-base").config) < 0.01


def test_divergence_keeps_the_last_good_parameters():
    s = load_preset("toy")
    trainer = Trainer(s, 1, make_target("previous", 4), lr=1e9, optimizer="sgd")
    with pytest.raises(TrainingDiverged, match="smaller learning rate"):
        trainer.step(5)
    assert np.isfinite(trainer.changed()["W_Q"]).all()


def test_targets_of_every_kind():
    blocked = np.triu(np.ones((4, 4), bool), 1)  # causal
    np.testing.assert_array_equal(make_target("previous", 4, blocked).argmax(1), [0, 0, 1, 2])
    np.testing.assert_array_equal(make_target("first", 4, blocked)[:, 0], 1)
    np.testing.assert_array_equal(make_target("self", 4, blocked), np.eye(4))
    uniform = make_target("uniform", 4, blocked)
    np.testing.assert_array_equal(uniform, (~blocked).astype(float))
    token = make_target("token", 4, blocked, token=2)
    np.testing.assert_array_equal(token.sum(1), [0, 0, 1, 1])  # queries 0, 1 cannot see it
    assert make_target("token", 4, token=3)[:, 3].sum() == 4
    mask = np.zeros((4, 4), bool)
    mask[2, 1] = True
    with pytest.raises(ValueError, match=r"target\[2,1\].*cannot see key 1"):
        make_target("previous", 4, mask)


@pytest.mark.parametrize(
    "kind, kw, message",
    [
        ("next", {}, "unknown target 'next'"),
        ("token", {}, "needs the index"),
        ("token", {"token": 4}, "out of range"),
    ],
)
def test_make_target_refusals(kind, kw, message):
    with pytest.raises(ValueError, match=message):
        make_target(kind, 4, **kw)


def test_check_target_refusals_name_the_entry():
    free = np.zeros((3, 3), bool)
    with pytest.raises(ValueError, match=r"shape \(2, 2\).*n=3"):
        check_target(np.ones((2, 2)), free)
    bad = np.ones((3, 3))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"target\[1,2\] is nan"):
        check_target(bad, free)
    bad[1, 2] = -1
    with pytest.raises(ValueError, match=r"target\[1,2\] is -1.*negative"):
        check_target(bad, free)
    with pytest.raises(ValueError, match="all zeros"):
        check_target(np.zeros((3, 3)), free)
    with pytest.raises(ValueError, match=r"target\[0,1\]"):
        check_target(np.ones((3, 3)), np.triu(np.ones((3, 3), bool), 1))


def test_load_target_files(tmp_path):
    good = tmp_path / "t.npy"
    np.save(good, np.eye(4))
    np.testing.assert_array_equal(load_target(good, 4), np.eye(4))
    cases = {
        "shape.npy": np.eye(3),
        "neg.npy": -np.eye(4),
        "inf.npy": np.full((4, 4), np.inf),
        "text.npy": np.array([["a"] * 4] * 4),
        "object.npy": np.array([[None] * 4] * 4, dtype=object),
    }
    messages = {
        "shape.npy": "shape",
        "neg.npy": "negative",
        "inf.npy": "finite",
        "text.npy": "numbers",
        "object.npy": "not a readable .npy",
    }
    for name, arr in cases.items():
        np.save(tmp_path / name, arr, allow_pickle=True)
        with pytest.raises(ValueError, match=messages[name]):
            load_target(tmp_path / name, 4)
    (tmp_path / "junk.npy").write_text("not numpy")
    with pytest.raises(ValueError, match="not a readable"):
        load_target(tmp_path / "junk.npy", 4)
    with pytest.raises(ValueError, match="does not exist"):
        load_target(tmp_path / "missing.npy", 4)
    np.save(good, np.ones((4, 4)))
    with pytest.raises(ValueError, match="t.npy: target\\[0,1\\]"):
        load_target(good, 4, np.triu(np.ones((4, 4), bool), 1))


def test_bad_head_lr_steps_optimizer():
    s = load_preset("toy")
    t = make_target("self", 4)
    with pytest.raises(ValueError, match="head 2 is out of range"):
        attention_loss(s, 2, t)
    for lr in (0, -1, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="learning rate"):
            Trainer(s, 0, t, lr=lr)
    with pytest.raises(ValueError, match="unknown optimizer"):
        Trainer(s, 0, t, optimizer="lbfgs")
    for steps in (0, -3, 1.5):
        with pytest.raises(ValueError, match="steps"):
            train_steps(s, 0, t, steps=steps)


def test_plateau_rule():
    assert not is_plateau([2.0] * 10, 0.0)  # too short to tell
    assert is_plateau([2.0] + [0.5] * 60, 0.0)  # flat at 25 %
    assert not is_plateau([2.0] + [0.05] * 60, 0.0)  # flat but reached
    assert not is_plateau([2.0] + [0.5, 1.5] * 30, 0.0)  # oscillating: lr too large
    assert not is_plateau([2.0] + list(np.linspace(1.5, 0.5, 60)), 0.0)  # still falling


def test_with_parameters_validates():
    s = load_preset("toy")
    with pytest.raises(ValueError, match="W_Q"):
        with_parameters(s, {"W_Q": np.ones((3, 4, 2))})
    assert isinstance(with_parameters(s, {}).params, Parameters)
