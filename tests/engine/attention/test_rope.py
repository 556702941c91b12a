"""RoPE: forward() against a per-pair 2×2 rotation written from the formula, and its laws."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Config, Session, forward, load_preset, random_parameters
from mha_gui.engine.attention import rope as rope_mod
from mha_gui.engine.layer.session import (
    default_tokens,
    load_session,
    save_npz,
    save_session,
    session_from_dict,
    session_to_dict,
)
from tests.engine.attention.test_forward_properties import layers
from tests.engine.reference import reference_forward, reference_inv_freq, reference_rotate

FIELDS = ("q", "k", "v", "q_rot", "k_rot", "scores", "weights", "heads", "concat", "output")
LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 16,
}


def _close(a, b, tol=1e-9):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert np.array_equal(np.isneginf(a), np.isneginf(b))
    fa, fb = np.where(np.isfinite(a), a, 0), np.where(np.isfinite(b), b, 0)
    np.testing.assert_allclose(fa, fb, rtol=tol, atol=tol)


@st.composite
def rope_layers(draw):
    """forward_properties' random layers (even d_k), plus a RoPE and ablated heads."""
    arrays, options = draw(layers(even_d_k=True))
    theta = draw(st.sampled_from([10000.0, 500000.0, 10.0, 1.5]))
    scaling = None
    if draw(st.booleans()):
        scaling = dict(
            LLAMA3, original_max_position_embeddings=draw(st.sampled_from([4, 64, 8192]))
        )
    h = arrays["w_q"].shape[0]
    options["ablate"] = draw(st.lists(st.integers(0, h - 1), max_size=h, unique=True))
    return arrays, options, {"theta": theta, "scaling": scaling}


@settings(max_examples=200, deadline=None)
@given(rope_layers())
def test_forward_with_rope_matches_per_pair_rotation(case):
    arrays, options, rope = case
    t = forward(**arrays, **options, rope=(rope["theta"], rope["scaling"]))
    ref = reference_forward(**arrays, **options, rope=rope)
    for name in FIELDS:
        _close(getattr(t, name), ref[name])
    _close(t.contributions, ref["contributions"])
    # the projections stay unrotated (the npz and API contract); the rotation is beside them
    b_q = arrays.get("b_q")
    _close(t.q, arrays["x"] @ arrays["w_q"] + (0 if b_q is None else b_q[:, None, :]))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.floats(1.01, 1e6), st.integers(0, 2**32 - 1))
def test_rotation_preserves_norms_and_leaves_position_zero(half, theta, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 3, (2, 7, 2 * half))
    cos, sin = rope_mod.cos_sin(7, rope_mod.inverse_frequencies(2 * half, theta))
    y = rope_mod.apply(x, cos, sin)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(y[:, 0], x[:, 0])  # angle 0 at position 0


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(-20, 200),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_scores_depend_only_on_relative_position(half, m, n, shift, scaled, seed):
    """q_m · k_n after rotation is the same for (m + s, n + s): only m − n matters."""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 2 * half))
    inv = rope_mod.inverse_frequencies(2 * half, 10000.0, LLAMA3 if scaled else None)
    pos = np.array([m, n, m + shift, n + shift])
    cos, sin = rope_mod.cos_sin(pos, inv)
    both = rope_mod.apply(np.stack([q, k, q, k]), cos, sin)
    assert math.isclose(both[0] @ both[1], both[2] @ both[3], rel_tol=1e-9, abs_tol=1e-9)


def test_scores_with_shifted_tokens_equal_the_relative_shift():
    """Through forward(): identical query/key rows at positions (m, n) and (m+2, n+2)."""
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(3, 4))
    x = np.vstack([rows, rows[:1], rows[:1], rows])  # rows again at positions 5, 6, 7
    w = rng.normal(size=(1, 4, 6))
    t = forward(x, w, w.copy(), rng.normal(size=(1, 4, 2)), rng.normal(size=(2, 4)), rope=True)
    s = t.scores[0]
    _close(s[5:8, 5:8], s[0:3, 0:3])
    assert not np.allclose(s[5:8, 0:3], s[0:3, 0:3])  # absolute offsets do matter


def test_default_frequencies_and_true_means_theta_10000():
    np.testing.assert_allclose(rope_mod.inverse_frequencies(4, 100.0), [1.0, 0.1], rtol=1e-15)
    np.testing.assert_allclose(rope_mod.inverse_frequencies(6, 1000.0), [1.0, 0.1, 0.01])
    rng = np.random.default_rng(0)
    args = [rng.normal(size=s) for s in ((5, 3), (2, 3, 4), (2, 3, 4), (2, 3, 2), (4, 3))]
    a = forward(*args, rope=True)
    b = forward(*args, rope=(10000.0, None))
    c = forward(*args, rope=rope_mod.RoPE())
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.scores, c.scores)
    off = forward(*args, rope=False)
    assert off.q_rot is None and off.k_rot is None and "Q_rot" not in off.as_dict()
    np.testing.assert_array_equal(off.output, forward(*args).output)
    assert set(a.as_dict()) >= {"Q", "K", "Q_rot", "K_rot"}


def test_llama3_scaling_against_hand_computed_values():
    """d_k=8, θ=10⁴: ω = 1, 0.1, 0.01, 0.001, wavelengths 2π·(1, 10, 100, 1000).

    With original_max=1024, low=1, high=4: wavelengths below 1024/4 = 256 are kept
    (1, 0.1); above 1024/1 are divided by 8 (0.001 → 1.25e-4); 2π·100 ≈ 628.3 is in
    between: smooth = (1024/628.3185 − 1)/3 = 0.2099155, ω = 0.01·((1 − smooth)/8 + smooth)
    = 0.00308676097.
    """
    scaling = dict(LLAMA3, original_max_position_embeddings=1024)
    got = rope_mod.inverse_frequencies(8, 10000.0, scaling)
    np.testing.assert_allclose(got, [1.0, 0.1, 0.00308676097, 1.25e-4], rtol=1e-9)
    np.testing.assert_allclose(got, reference_inv_freq(8, 10000.0, scaling), rtol=1e-14)
    # the Llama 3.1 release setting at head_dim 128: same rule, checked against the loop
    real = dict(LLAMA3, original_max_position_embeddings=8192)
    np.testing.assert_allclose(
        rope_mod.inverse_frequencies(128, 500000.0, real),
        reference_inv_freq(128, 500000.0, real),
        rtol=1e-13,
    )
    # "default" and the legacy "type" spelling
    assert rope_mod.validate_scaling({"rope_type": "default"}) is None
    legacy = {k: v for k, v in scaling.items() if k != "rope_type"} | {"type": "llama3"}
    assert rope_mod.validate_scaling(legacy) == rope_mod.validate_scaling(scaling)


def test_apply_equals_the_per_pair_rotation():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 10))
    inv = rope_mod.inverse_frequencies(10, 50.0)
    cos, sin = rope_mod.cos_sin(6, inv)
    expect = np.array([reference_rotate(x[m], m, list(inv)) for m in range(6)])
    _close(rope_mod.apply(x, cos, sin), expect, 1e-13)
    _close(x * cos + rope_mod.rotate_half(x) * sin, expect, 1e-13)  # HF's own form


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(rope=True), "d_k must be even"),
        (dict(rope=1.0), "greater than 1"),
        (dict(rope=float("nan")), "rope_theta"),
        (dict(rope="fast"), "rope must be"),
        (dict(rope=(10000.0, {"rope_type": "yarn"})), "rope_type must be one of"),
        (dict(rope=(1e4, {"rope_type": "llama3", "factor": 8})), "missing low_freq_factor"),
        (dict(rope=(1e4, dict(LLAMA3, low_freq_factor=4.0))), "must be smaller than"),
        (dict(rope=(1e4, dict(LLAMA3, factor=0.5))), "at least 1"),
        (dict(rope=(1e4, dict(LLAMA3, extra=1))), "unknown key(s) extra"),
        (dict(rope=(1e4, dict(LLAMA3, original_max_position_embeddings=2.5))), "whole number"),
    ],
)
def test_bad_rope_arguments_are_refused_with_the_reason(kwargs, words):
    rng = np.random.default_rng(0)
    d_k = 3 if words == "d_k must be even" else 4
    args = [rng.normal(size=s) for s in ((3, 2), (1, 2, d_k), (1, 2, d_k), (1, 2, 2), (2, 2))]
    with pytest.raises(ValueError, match=None) as info:
        forward(*args, **kwargs)
    assert words in str(info.value)


def test_config_refuses_odd_d_k_and_validates_the_scaling():
    with pytest.raises(ValueError, match="d_k must be even, got d_k=3"):
        Config(d_k=3, rope=True)
    Config(d_k=3)  # fine without RoPE
    with pytest.raises(ValueError, match="rope must be true or false"):
        Config(rope="yes")
    with pytest.raises(ValueError, match="rope_scaling must be an object"):
        Config(rope=True, rope_scaling=[1, 2])
    c = Config(rope=True, rope_theta=500000, rope_scaling=dict(LLAMA3))
    assert c.rope_theta == 500000.0 and c.rope_scaling["factor"] == 8.0
    assert Config.from_dict(c.to_dict()) == c
    assert hash(c) == hash(Config.from_dict(c.to_dict()))
    assert Config(rope=True, rope_scaling={"rope_type": "default"}).rope_scaling is None
    assert "rope" not in Config().to_dict()  # old-style files stay as they were


def test_session_runs_saves_and_exports_rope(tmp_path):
    base = load_preset("toy")
    cfg = base.config.with_changes(rope=True, rope_theta=100.0, rope_scaling=dict(LLAMA3))
    s = Session(cfg, base.tokens, base.params, source="toy · with RoPE")
    t = s.run()
    ref = reference_forward(
        **{k: v for k, v in base.params.forward_kwargs().items() if v is not None},
        rope={"theta": 100.0, "scaling": LLAMA3},
    )
    _close(t.output, ref["output"])
    save_session(s, tmp_path / "r.json")
    back = load_session(tmp_path / "r.json")
    assert back.config == cfg and back.source == "toy · with RoPE"
    np.testing.assert_array_equal(back.run().output, t.output)
    path = save_npz(s, tmp_path / "r.npz")
    with np.load(path, allow_pickle=False) as z:
        assert float(z["rope_theta"]) == 100.0
        assert str(z["rope_scaling_rope_type"]) == "llama3"
        assert float(z["rope_scaling_factor"]) == 8.0
        np.testing.assert_array_equal(z["Q_rot"], t.q_rot)
        np.testing.assert_array_equal(z["K_rot"], t.k_rot)
        np.testing.assert_array_equal(z["Q"], t.q)
    plain = save_npz(base, tmp_path / "p.npz")
    with np.load(plain, allow_pickle=False) as z:
        assert "rope_theta" not in z and "Q_rot" not in z and "ablate" not in z


def test_old_session_files_without_the_new_keys_load_unchanged():
    data = session_to_dict(load_preset("toy"))
    assert set(data["config"]) == {
        "n", "d_model", "h", "d_k", "d_v", "h_kv", "causal", "bias", "scale",
    }  # fmt: skip
    assert "source" not in data
    s = session_from_dict(data)
    assert not s.config.rope and s.config.ablate == () and s.source == ""


@pytest.mark.parametrize(
    "source, words",
    [
        ("a\nb", "one line"),
        ("x" * 201, "at most 200"),
        (3, "must be a string"),
    ],
)
def test_source_is_one_short_line(source, words):
    cfg = Config()
    with pytest.raises(ValueError, match=words):
        Session(cfg, default_tokens(cfg.n), random_parameters(cfg), source=source)
    data = session_to_dict(load_preset("toy"))
    data["source"] = source
    with pytest.raises(ValueError, match=words):
        session_from_dict(data)


def test_out_buffers_switch_rope_on_and_off_exactly():
    rng = np.random.default_rng(2)
    args = [rng.normal(size=s) for s in ((5, 3), (2, 3, 4), (1, 3, 4), (1, 3, 2), (4, 3))]
    t = forward(*args)
    for rope in (True, None, 50.0, (50.0, LLAMA3), True):
        again = forward(*args, rope=rope, out=t)
        assert again is t
        fresh = forward(*args, rope=rope)
        for name in FIELDS:
            a, b = getattr(again, name), getattr(fresh, name)
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
