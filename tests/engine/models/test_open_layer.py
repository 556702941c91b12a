"""Every layer of tiny GPT-2, BERT, Llama, Mistral and Qwen2 checkpoints, against the
independent reference: X, the attention weights and the attention output (rel. < 1e-4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mha_gui.engine.models import attention_maps, describe_model, open_layer, tokenize
from mha_gui.engine.models.numerics import erf
from tests.engine.models.builders import SENTENCE, build_model, encode
from tests.engine.models.reference_models import reference_layers

FAMILIES = ("gpt2", "bert", "llama", "mistral", "qwen2")


def rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(b).max())


def check_every_layer(folder, cfg, weights, ids, **source):
    expected = reference_layers(cfg, weights, ids)
    for layer, (x, a, y) in enumerate(expected):
        session = open_layer(folder, layer, **source)
        trace = session.run()
        assert rel(session.params.X, x) < 1e-4, f"X of layer {layer}"
        assert rel(trace.weights, a) < 1e-4, f"weights of layer {layer}"
        assert rel(trace.output, y) < 1e-4, f"output of layer {layer}"
    return expected


@pytest.mark.parametrize("family", FAMILIES)
def test_every_layer_matches_the_reference(tmp_path, family):
    cfg, weights = build_model(tmp_path, family)
    ids, _ = tokenize(tmp_path, SENTENCE)
    kind = {"gpt2": "byte", "bert": "wordpiece", "llama": "metaspace"}.get(family, "byte")
    assert ids == encode(kind, SENTENCE)  # the library's default encode
    expected = check_every_layer(tmp_path, cfg, weights, ids, text=SENTENCE)
    # the maps of the model view, in one pass, are the same weights
    maps = attention_maps(tmp_path, text=SENTENCE)
    assert maps.weights.shape == (cfg_layers(cfg), *expected[0][1].shape)
    for layer, (_, a, _) in enumerate(expected):
        assert rel(maps.of(layer), a) < 1e-4
    # a click on the grid opens the layer without running the blocks again
    last = len(expected) - 1
    again, direct = maps.session(last), open_layer(tmp_path, last, text=SENTENCE)
    assert np.array_equal(again.params.X, direct.params.X) and again.source == direct.source


def cfg_layers(cfg) -> int:
    return cfg.get("n_layer") or cfg["num_hidden_layers"]


@pytest.mark.parametrize(
    ("family", "dtype", "shards", "prefix"),
    [
        ("gpt2", "BF16", 1, False),
        ("bert", "F16", 3, True),
        ("llama", "BF16", 2, True),
        ("qwen2", "F16", 1, False),
        ("mistral", "BF16", 4, False),
    ],
)
def test_half_precision_sharded_and_unprefixed_checkpoints(tmp_path, family, dtype, shards, prefix):
    cfg, weights = build_model(tmp_path, family, dtype=dtype, shards=shards, prefix=prefix)
    ids, _ = tokenize(tmp_path, SENTENCE)
    check_every_layer(tmp_path, cfg, weights, ids, text=SENTENCE)


def test_llama3_rope_scaling_gqa_head_dim_and_biases(tmp_path):
    cfg, weights = build_model(tmp_path, "llama", head_dim=12, kv=1)
    import json

    cfg.update(
        attention_bias=True,
        rope_theta=500000.0,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8,
        },
    )
    from tests.engine.models.builders import make_weights, write_model

    weights = write_model(
        tmp_path, cfg, make_weights(cfg, seed=3), prefix="model.", tokenizer="metaspace"
    )
    session = open_layer(tmp_path, 0, text=SENTENCE)
    assert session.config.h_kv == 1 and session.config.d_k == 12 and session.config.bias
    assert session.config.rope and session.config.rope_theta == 500000.0
    assert session.config.rope_scaling["rope_type"] == "llama3"
    ids, _ = tokenize(tmp_path, SENTENCE)
    check_every_layer(tmp_path, cfg, weights, ids, text=SENTENCE)
    # newer config.json: rope_parameters instead of rope_theta + rope_scaling
    newer = dict(cfg)
    newer["rope_parameters"] = {**newer.pop("rope_scaling"), "rope_theta": newer.pop("rope_theta")}
    (tmp_path / "config.json").write_text(json.dumps(newer))
    assert describe_model(tmp_path).rope_theta == 500000.0
    check_every_layer(tmp_path, cfg, weights, ids, text=SENTENCE)


def test_token_ids_instead_of_text(tmp_path):
    cfg, weights = build_model(tmp_path, "mistral", tokenizer=False)
    ids = [5, 17, 3, 3, 40, 2, 9, 11]
    check_every_layer(tmp_path, cfg, weights, ids, token_ids=ids)
    assert open_layer(tmp_path, 0, token_ids=ids).tokens[:2] == ["#5", "#17"]


def test_session_of_a_layer(tmp_path):
    build_model(tmp_path / "gpt2", "gpt2")
    session = open_layer(tmp_path / "gpt2", 1, text=SENTENCE)
    c = session.config
    assert (c.d_model, c.h, c.h_kv, c.d_k, c.d_v, c.causal, c.bias, c.rope) == (
        24,
        4,
        4,
        6,
        6,
        True,
        True,
        False,
    )
    assert session.source == "gpt2 · layer 1 of 3"
    assert session.mask is None
    assert session.tokens[1].startswith("␣")  # " quick" with a visible space
    assert open_layer(tmp_path / "gpt2", -1, text=SENTENCE).source == "gpt2 · layer 2 of 3"
    bert = tmp_path / "bert"
    build_model(bert, "bert")
    s = open_layer(bert, 0, text=SENTENCE)
    assert s.tokens[0] == "[CLS]" and s.tokens[-1] == "[SEP]"
    assert not s.config.causal and s.config.bias


def test_sliding_window_is_the_extra_mask_when_the_text_is_longer(tmp_path):
    build_model(tmp_path, "mistral", window=4)
    long = open_layer(tmp_path, 0, text=SENTENCE)
    n = long.config.n
    assert n > 4
    i, j = np.indices((n, n))
    assert np.array_equal(long.mask, i - j >= 4)
    short = open_layer(tmp_path, 0, text="the cat")
    assert short.mask is None
    # Qwen2: only layers from max_window_layers on
    q = tmp_path / "qwen"
    build_model(q, "qwen2", window=3)
    assert open_layer(q, 0, text=SENTENCE).mask is None
    assert open_layer(q, 1, text=SENTENCE).mask is not None
    info = describe_model(q)
    assert info.sliding_window == 3 and info.window_layers == (1, 2)


def test_describe_model(tmp_path):
    build_model(tmp_path, "llama")
    info = describe_model(tmp_path)
    assert (info.family, info.n_layers, info.n_heads, info.n_kv_heads, info.head_dim) == (
        "llama",
        3,
        4,
        2,
        8,
    )
    assert info.max_positions == 64 and info.has_tokenizer and info.rope and info.causal
    assert "3 layers × 4 heads (2 K/V)" in info.summary()


def test_progress_is_reported_per_block(tmp_path):
    build_model(tmp_path, "gpt2")
    seen = []
    open_layer(tmp_path, 2, text=SENTENCE, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (3, 3) and seen[0] == (1, 3)
    seen.clear()
    maps = attention_maps(
        tmp_path, text=SENTENCE, layers=[0, 1], progress=lambda *a: seen.append(a)
    )
    assert seen[-1] == (2, 2) and maps.layers == (0, 1)
    with pytest.raises(ValueError, match=r"layer 2 is not among the maps' layers \[0, 1\]"):
        maps.session(2)


def test_vectorised_erf_matches_math_erf():
    """BERT's exact GELU: the vectorised erf is math.erf to the last bit or two."""
    xs = np.concatenate([np.linspace(-8, 8, 400_001), [0.0, -0.0, 1e-300, -1e-12, 5.99, 6.01]])
    expected = np.array([math.erf(v) for v in xs])
    got = erf(xs)
    assert np.abs(got - expected).max() <= 2.3e-16
    small = np.abs(xs) < 0.1
    assert (np.abs(got - expected)[small] <= 3e-16 * np.abs(expected[small]) + 1e-300).all()
