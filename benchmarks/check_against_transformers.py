"""Compare imported layers with Hugging Face transformers on tiny random models.

Needs torch and transformers, which are not dependencies of mha-gui: run it from a
separate environment that has them and can import this checkout, e.g.

    python -m venv /tmp/hfvenv && /tmp/hfvenv/bin/pip install torch transformers
    PYTHONPATH=. /tmp/hfvenv/bin/python benchmarks/check_against_transformers.py

Without them it says so and exits 0. For each family it builds a small random model with
transformers (GPT-2, BERT, Llama with llama3 RoPE scaling and GQA, Mistral with a short
sliding window, Qwen2 with sliding window on some layers), saves it with safetensors (in
float32, bfloat16, and float16 in shards) beside a tokenizer trained here, runs it with output_attentions and
hooks on every attention, and prints the largest relative error of X (the attention's
input), the attention weights and the attention output for every layer.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

try:
    import torch
    import transformers as tf
except ImportError:
    print("skipped: torch and transformers are not installed (see the docstring)")
    sys.exit(0)

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from mha_gui.engine.models import open_layer, tokenize

TEXT = "The quick brown fox jumps over the lazy dog, and the dog sleeps on."
CORPUS = [TEXT, "a cat sat on the mat", "the fox and the dog are friends", "quick lazy sleeps"]


def byte_level_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        CORPUS,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    return tok


def wordpiece_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        CORPUS,
        trainers.WordPieceTrainer(
            vocab_size=200, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        ),
    )
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tok


def randomize(model: torch.nn.Module, seed: int) -> None:
    """Weights large enough that attention is far from uniform."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name.lower() or name.split(".")[-2].startswith("ln"):
                p.copy_(
                    1.0 + 0.2 * torch.randn(p.shape, generator=g)
                    if p.ndim == 1 and name.endswith(("weight", "gamma"))
                    else 0.1 * torch.randn(p.shape, generator=g)
                )
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))


def families(vocab: dict[str, int]):
    small = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4)
    yield (
        "gpt2",
        tf.GPT2LMHeadModel,
        tf.GPT2Config(vocab_size=vocab["byte"], n_embd=48, n_layer=3, n_head=4, n_positions=64),
        "byte",
    )
    yield (
        "gpt2 (scale ÷ layer+1, relu)",
        tf.GPT2LMHeadModel,
        tf.GPT2Config(
            vocab_size=vocab["byte"],
            n_embd=48,
            n_layer=3,
            n_head=4,
            n_positions=64,
            scale_attn_by_inverse_layer_idx=True,
            activation_function="relu",
        ),
        "byte",
    )
    yield (
        "bert",
        tf.BertForMaskedLM,
        tf.BertConfig(
            vocab_size=vocab["wordpiece"],
            max_position_embeddings=64,
            **{**small, "hidden_size": 48},
        ),
        "wordpiece",
    )
    yield (
        "llama (llama3 RoPE, GQA, head_dim 24)",
        tf.LlamaForCausalLM,
        tf.LlamaConfig(
            vocab_size=vocab["byte"],
            num_key_value_heads=2,
            head_dim=24,
            max_position_embeddings=128,
            rope_theta=500000.0,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 16,
            },
            **small,
        ),
        "byte",
    )
    yield (
        "llama (attention_bias)",
        tf.LlamaForCausalLM,
        tf.LlamaConfig(
            vocab_size=vocab["byte"], attention_bias=True, max_position_embeddings=128, **small
        ),
        "byte",
    )
    yield (
        "mistral (sliding window 5)",
        tf.MistralForCausalLM,
        tf.MistralConfig(
            vocab_size=vocab["byte"],
            num_key_value_heads=1,
            sliding_window=5,
            max_position_embeddings=128,
            **small,
        ),
        "byte",
    )
    yield (
        "qwen2 (window on layers 1-2)",
        tf.Qwen2ForCausalLM,
        tf.Qwen2Config(
            vocab_size=vocab["byte"],
            num_key_value_heads=2,
            use_sliding_window=True,
            sliding_window=6,
            max_window_layers=1,
            max_position_embeddings=128,
            **small,
        ),
        "byte",
    )


def attention_modules(model, family: str):
    """(input module, output module) per layer: X enters the first, Y leaves the second."""
    base = model.base_model
    if family == "gpt2":
        return [(b.attn, b.attn.c_proj) for b in base.h]
    if family == "bert":
        return [(lay.attention.self, lay.attention.output.dense) for lay in base.encoder.layer]
    return [(lay.self_attn, lay.self_attn.o_proj) for lay in base.layers]


def run_hf(folder: Path, family: str, ids: list[int]):
    model = tf.AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float64)
    model.eval()
    xs, ys = {}, {}
    handles = []
    for i, (inp, out) in enumerate(attention_modules(model, family)):

        def grab_in(mod, args, kwargs, i=i):
            xs[i] = (args[0] if args else kwargs["hidden_states"])[0].detach().numpy()

        def grab_out(mod, args, output, i=i):
            ys[i] = output[0].detach().numpy()

        handles.append(inp.register_forward_pre_hook(grab_in, with_kwargs=True))
        handles.append(out.register_forward_hook(grab_out))
    with torch.no_grad():
        res = model(torch.tensor([ids]), output_attentions=True)
    for h in handles:
        h.remove()
    return xs, ys, [a[0].numpy() for a in res.attentions]


def rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-300))


def main() -> int:
    tf.logging.set_verbosity_error()
    tf.utils.logging.disable_progress_bar()
    torch.manual_seed(0)
    toks = {"byte": byte_level_tokenizer(), "wordpiece": wordpiece_tokenizer()}
    vocab = {k: t.get_vocab_size() for k, t in toks.items()}
    worst_all = 0.0
    print(f"transformers {tf.__version__}, torch {torch.__version__}")
    print(f"{'family':<38} {'dtype':<11} {'layer':>5} {'X':>9} {'weights':>9} {'output':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for seed, (label, cls, config, tok_kind) in enumerate(families(vocab)):
            family = config.model_type
            model = cls(config)
            randomize(model, seed)
            for dtype in ("f32", "bf16", "f16 sharded"):
                folder = Path(tmp) / f"{family}-{seed}-{dtype.replace(' ', '-')}"
                cast = {"bf16": torch.bfloat16, "f16 sharded": torch.float16}
                saved = model.to(cast[dtype]) if dtype in cast else model
                shard = {"max_shard_size": "20KB"} if "sharded" in dtype else {}
                saved.save_pretrained(folder, safe_serialization=True, **shard)
                model = model.to(torch.float32)
                toks[tok_kind].save(str(folder / "tokenizer.json"))
                ids, _ = tokenize(folder, TEXT)
                assert ids == toks[tok_kind].encode(TEXT).ids
                xs, ys, attn = run_hf(folder, family, ids)
                for layer in range(config.num_hidden_layers):
                    s = open_layer(folder, layer, text=TEXT)
                    t = s.run()
                    errs = (
                        rel(s.params.X, xs[layer]),
                        rel(t.weights, attn[layer]),
                        rel(t.output, ys[layer]),
                    )
                    worst_all = max(worst_all, *errs)
                    print(
                        f"{label:<38} {dtype:<11} {layer:>5} "
                        + " ".join(f"{e:>9.1e}" for e in errs)
                    )
    print(f"largest relative error: {worst_all:.2e} ({'PASS' if worst_all < 1e-4 else 'FAIL'})")
    return 0 if worst_all < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
