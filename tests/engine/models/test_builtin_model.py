"""The built-in classroom model: it loads with the app's loader, the loader computes what
an independent NumPy GPT-2 (and transformers, where installed) computes, its heads have the
roles its model card states — the card's numbers recomputed here — and it stays small."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from mha_gui.engine.models import attention_maps, describe_model, open_layer
from mha_gui.engine.models.builtin import BUILTIN_NAME, builtin_model_path, resolve_model
from mha_gui.engine.teaching import classroom
from mha_gui.engine.teaching.head_roles import ROLES, head_roles, sentence_scores

FOLDER = builtin_model_path()
CARD = FOLDER / "README.md"
PROBE_SEEDS = range(10)  # the card's probe roles: the mean over these seeds
TEXT = "mary met tom at the park . she is mary . the cat near the dogs runs ."


# ------------------------------------------------------ an independent GPT-2 -------
def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def reference_gpt2(folder: Path, ids: list[int]) -> list[dict[str, np.ndarray]]:
    """GPT-2's forward pass written out: per layer the attention's input X, its weights A
    (h, n, n), its output Y (after c_proj, before the residual) and the stream after it."""
    from safetensors.numpy import load_file

    cfg = json.loads((folder / "config.json").read_text())
    raw = load_file(str(folder / "model.safetensors"))
    t = {re.sub(r"^transformer\.", "", k): v.astype(np.float64) for k, v in raw.items()}
    d, h, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    dk, n = d // h, len(ids)
    x = t["wte.weight"][ids] + t["wpe.weight"][np.arange(n)]
    out = []
    for layer in range(cfg["n_layer"]):
        p = f"h.{layer}."
        a_in = layer_norm(x, t[p + "ln_1.weight"], t[p + "ln_1.bias"], eps)
        qkv = a_in @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q, k, v = (
            qkv[:, i * d : (i + 1) * d].reshape(n, h, dk).transpose(1, 0, 2) for i in range(3)
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(dk)
        scores[:, np.triu(np.ones((n, n), dtype=bool), 1)] = -np.inf
        a = np.exp(scores - scores.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        z = (a @ v).transpose(1, 0, 2).reshape(n, d)
        y = z @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        x = x + y
        m = layer_norm(x, t[p + "ln_2.weight"], t[p + "ln_2.bias"], eps)
        m = gelu_new(m @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"])
        x = x + m @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
        out.append({"X": a_in, "A": a, "Y": y, "stream": x.copy()})
    return out


# ------------------------------------------------------------------ loading -------
def test_builtin_names_the_shipped_folder_and_other_folders_pass_through():
    assert resolve_model(BUILTIN_NAME) == FOLDER
    assert resolve_model("~/models/gpt2") == "~/models/gpt2"
    assert resolve_model(Path("builtin")) == Path("builtin")
    for name in ("config.json", "model.safetensors", "tokenizer.json", "README.md"):
        assert (FOLDER / name).is_file(), name


def test_it_loads_with_the_apps_loader_and_reads_the_classroom_words():
    info = describe_model(resolve_model(BUILTIN_NAME))
    assert info.family == "gpt2" and info.has_tokenizer
    assert info.vocab_size == len(classroom.vocabulary())
    maps = attention_maps(FOLDER, text=TEXT)
    assert maps.tokens == ["<bos>", *TEXT.split()]
    assert maps.weights.shape == (info.n_layers, info.n_heads, len(maps.tokens), len(maps.tokens))


def test_every_layer_equals_an_independent_numpy_gpt2():
    ids = attention_maps(FOLDER, text=TEXT).token_ids
    ref = reference_gpt2(FOLDER, ids)
    for layer, want in enumerate(ref):
        session = open_layer(FOLDER, layer, token_ids=ids)
        np.testing.assert_allclose(session.params.X, want["X"], rtol=0, atol=1e-10)
        run = session.run()
        np.testing.assert_allclose(run.weights, want["A"], rtol=0, atol=1e-10)
        np.testing.assert_allclose(run.output, want["Y"], rtol=0, atol=1e-9)


def test_attentions_and_hidden_states_equal_transformers():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    model = transformers.GPT2Model.from_pretrained(FOLDER, attn_implementation="eager").eval()
    maps = attention_maps(FOLDER, text=TEXT)
    with torch.no_grad():
        out = model(
            torch.tensor([maps.token_ids]), output_attentions=True, output_hidden_states=True
        )
    got = np.stack([a[0].double().numpy() for a in out.attentions])
    np.testing.assert_allclose(maps.weights, got, rtol=0, atol=1e-5)
    ref = reference_gpt2(FOLDER, maps.token_ids)
    for layer in range(len(ref) - 1):  # the last hidden state is after ln_f
        hidden = out.hidden_states[layer + 1][0].double().numpy()
        np.testing.assert_allclose(hidden, ref[layer]["stream"], rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------- the card --------
def card_table() -> dict[tuple[int, int], dict[str, float]]:
    """The card's per-head table: (layer, head) → role → score (NaN for '–')."""
    rows, header = {}, None
    for line in CARD.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] == ["layer", "head"]:
            header = cells[2:]
        elif header and len(cells) == len(header) + 2 and cells[0].isdigit():
            values = [math.nan if c == "–" else float(c) for c in cells[2:]]
            rows[int(cells[0]), int(cells[1])] = dict(zip(header, values, strict=True))
    return rows


def card_goals() -> dict[str, tuple[int, int, float, float]]:
    """role → (layer, head, score, needed) from the card's goal table."""
    found = {}
    pattern = r"^\| (\w+) \| layer (\d+) head (\d+) \| ([\d.]+) \| ≥ ([\d.]+) \| met \|$"
    for line in CARD.read_text(encoding="utf-8").splitlines():
        if m := re.match(pattern, line):
            found[m[1]] = (int(m[2]), int(m[3]), float(m[4]), float(m[5]))
    return found


@pytest.fixture(scope="module")
def measured() -> dict[str, np.ndarray]:
    """Every role's (layers, heads) scores, recomputed with the app's loader."""
    per_seed = [head_roles(FOLDER, probe="repeated", seed=s) for s in PROBE_SEEDS]
    scores = {r: np.mean([p.scores[r] for p in per_seed], axis=0) for r in ROLES}
    scores["agreement"] = sentence_scores(FOLDER, classroom.agreement_sentences(100, 0))
    scores["antecedent"] = sentence_scores(FOLDER, classroom.antecedent_sentences(100, 0))
    return scores


def test_the_card_states_the_measured_score_of_every_head(measured):
    table = card_table()
    info = describe_model(FOLDER)
    assert set(table) == {(la, h) for la in range(info.n_layers) for h in range(info.n_heads)}
    for (layer, head), row in table.items():
        assert set(row) == set(measured)
        for role, stated in row.items():
            value = float(measured[role][layer, head])
            if math.isnan(stated):
                assert math.isnan(value), (layer, head, role)
            else:
                assert abs(value - stated) <= 0.01, (layer, head, role, value, stated)


def test_the_heads_meet_the_goals_the_card_names(measured):
    goals = card_goals()
    assert set(goals) == {"previous", "induction", "agreement", "antecedent"}
    for role, (layer, head, stated, needed) in goals.items():
        value = float(measured[role][layer, head])
        assert abs(value - stated) <= 0.01
        assert value >= needed, (role, layer, head, value)
    assert goals["previous"][3] >= 0.8 and goals["induction"][3] >= 0.6
    assert goals["agreement"][3] >= 0.5 and goals["antecedent"][3] >= 0.5
    assert goals["induction"][0] >= 1  # an induction head needs a previous-token head below


def test_head_labels_name_the_roles_on_the_probe():
    roles = head_roles(resolve_model(BUILTIN_NAME), probe="repeated", seed=0)
    goals = card_goals()
    layer, head = goals["previous"][:2]
    assert roles.label(layer, head).startswith("prev ")
    layer, head = goals["induction"][:2]
    assert roles.label(layer, head).startswith("induction ")


def test_the_model_is_at_most_5_mb():
    assert sum(p.stat().st_size for p in FOLDER.iterdir()) <= 5_000_000
