"""Presets do what their descriptions promise."""

import numpy as np
import pytest

from mha_gui.engine import PRESETS, load_preset
from mha_gui.engine.panels.stats import parameter_count


def textbook_class_forward(x, d_model=16, n_heads=4, seed=0):
    """The textbook's MultiHeadAttention as it describes itself: four full d_model×d_model
    matrices drawn in the order Wq, Wk, Wv, Wo from default_rng(seed).normal(0, 0.02),
    split_heads = reshape(T, h, dk).transpose(1, 0, 2), masked scores set to -1e9,
    softmax, concat by the inverse transpose, then @ Wo."""
    rng = np.random.default_rng(seed)
    wq, wk, wv, wo = (rng.normal(0, 0.02, (d_model, d_model)) for _ in range(4))
    t = x.shape[0]
    dk = d_model // n_heads

    def split(a):
        return a.reshape(t, n_heads, dk).transpose(1, 0, 2)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(dk)
    mask = np.triu(np.ones((t, t), dtype=bool), k=1)
    scores[:, mask] = -1e9
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attn = e / e.sum(axis=-1, keepdims=True)
    out = (attn @ v).transpose(1, 0, 2).reshape(t, d_model)
    return out @ wo, attn


def test_causal_6x16_reproduces_the_textbook_class():
    s = load_preset("causal-6x16")
    t = s.run()
    out, attn = textbook_class_forward(s.params.X)
    np.testing.assert_allclose(t.output, out, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(t.weights, attn, rtol=1e-12, atol=1e-15)
    assert s.config.causal and s.config.h == 4 and s.config.d_model == 16 and s.config.n == 6


def test_positional_heads_attend_to_previous_and_first_token():
    t = load_preset("positional").run()
    n = t.weights.shape[1]
    previous = t.weights[0].argmax(axis=1)
    assert list(previous[1:]) == list(range(n - 1))
    assert np.all(t.weights[0][np.arange(1, n), np.arange(n - 1)] > 0.9)
    assert np.all(t.weights[1].argmax(axis=1) == 0)
    assert np.all(t.weights[1][:, 0] > 0.9)
    # values are one-hot positions: head 0's output names the previous token
    assert np.all(t.heads[0][1:].argmax(axis=1) == np.arange(n - 1))


def test_toy_is_small_hand_checkable_and_heads_differ():
    s = load_preset("toy")
    assert parameter_count(s.config) == 64
    for a in s.params.as_dict().values():
        assert np.array_equal(a * 10, np.round(a * 10))  # integers or one decimal
    t = s.run()
    assert not np.allclose(t.weights[0], t.weights[1])
    assert len(set(t.weights[0].argmax(1))) == 1 and len(set(t.weights[1].argmax(1))) == 1
    assert t.weights[0].argmax(1)[0] != t.weights[1].argmax(1)[0]
    # a score by hand: S_0[0,1] = q_0 · k_1 / √2 with q_0 = (2, 0), k_1 = (2, 0)
    assert t.scores[0, 0, 1] == pytest.approx(4 / np.sqrt(2))


@pytest.mark.parametrize("name, h, h_kv", [("gqa", 8, 2), ("mqa", 4, 1)])
def test_grouped_presets(name, h, h_kv):
    s = load_preset(name)
    assert (s.config.h, s.config.h_kv) == (h, h_kv)
    assert s.config.variant == name.upper()
    t = s.run()
    assert t.k.shape[0] == h_kv


def test_every_preset_is_deterministic_and_runs():
    for name in PRESETS:
        if name == "bert-base":
            continue
        a, b = load_preset(name).run(), load_preset(name).run()
        assert np.array_equal(a.output, b.output)


def test_bert_base_shape():
    s = load_preset("bert-base")
    assert (s.config.n, s.config.d_model, s.config.h, s.config.d_k) == (128, 768, 12, 64)
    assert s.run().weights.shape == (12, 128, 128)


def test_random_options_and_refusals():
    s = load_preset("random", seed=5, tokens=3, d_model=6, heads=3)
    assert (s.config.n, s.config.d_model, s.config.h, s.config.d_k) == (3, 6, 3, 2)
    with pytest.raises(ValueError, match="takes no options"):
        load_preset("toy", seed=1)
    with pytest.raises(ValueError, match="unknown preset"):
        load_preset("gpt-5")
