"""The model card (README.md) of the classroom model: what it was trained on, how, and
every head's measured role scores — the numbers tests/engine/models/test_builtin_model.py
recomputes with the app's loader and compares with this card.

Scores come from the app's own loader; the behaviour lines (how often the model picks the
right verb form or name, and how often once the role's head is switched off) need the
language-model head, so they come from torch.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import torch

from mha_gui.engine.teaching import classroom
from mha_gui.engine.teaching.head_roles import ROLES as PROBE_ROLES
from training.classroom_eval import GUIDED, PROBE_SEEDS, goals, probes, sentence_sets

TABLE_ROLES = (*PROBE_ROLES, "agreement", "antecedent")


def _ablated(model, layer: int | None, head: int | None):
    """A context manager that zeroes one head's output (before W_O), or does nothing."""

    class Off:
        def __enter__(self):
            self.handle = None
            if layer is None:
                return self
            attn = model.transformer.h[layer].attn
            size = model.config.n_embd // model.config.n_head

            def hook(_module, args):
                (x,) = args
                x = x.clone()
                x[..., head * size : (head + 1) * size] = 0
                return (x,)

            self.handle = attn.c_proj.register_forward_pre_hook(hook)
            return self

        def __exit__(self, *exc):
            if self.handle is not None:
                self.handle.remove()

    return Off()


def _logits(model, ids: list[int]) -> np.ndarray:
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].double().numpy()


def behaviour(model, head: tuple[int, int] | None = None) -> dict[str, float]:
    """How often the model prefers the right continuation (head switched off if given).

    agreement: the verb's right form over its other form, at the token before the verb;
    antecedent: the right name over the other name, at "is"; induction: the next token of
    the second copy of a repeated-token probe is the top prediction.
    """
    vocab = classroom.vocabulary()
    ids_of = {w: i for i, w in enumerate(vocab)}
    forms = {s: p for s, p in classroom.VERBS} | {p: s for s, p in classroom.VERBS}
    out = {}
    layer, h = head if head is not None else (None, None)
    with _ablated(model, layer, h):
        sets = sentence_sets()
        right = 0
        for s in sets["agreement"]:
            ((q, _),) = s.pairs
            logits = _logits(model, [ids_of[t] for t in s.tokens])[q]
            verb = s.tokens[q + 1]
            right += logits[ids_of[verb]] > logits[ids_of[forms[verb]]]
        out["agreement"] = right / len(sets["agreement"])
        right = 0
        for s in sets["antecedent"]:
            ((q, k),) = s.pairs
            logits = _logits(model, [ids_of[t] for t in s.tokens])[q]
            names = [t for t in s.tokens[:q] if t in classroom.FEMALE + classroom.MALE]
            other = next(n for n in names if n != s.tokens[k])
            right += logits[ids_of[s.tokens[k]]] > logits[ids_of[other]]
        out["antecedent"] = right / len(sets["antecedent"])
        hits = total = 0
        for ids in probes():
            span = (len(ids) - 1) // 2
            pred = _logits(model, ids).argmax(axis=-1)
            second = range(1 + span, len(ids) - 1)
            hits += sum(pred[i] == ids[i + 1] for i in second)
            total += len(second)
        out["induction"] = hits / total
    return out


def _cell(v: float) -> str:
    return "–" if np.isnan(v) else f"{v:.2f}"


def table(scores: dict[str, np.ndarray]) -> str:
    layers, heads = scores["previous"].shape
    lines = [
        "| layer | head | " + " | ".join(TABLE_ROLES) + " |",
        "|---|---|" + "---|" * len(TABLE_ROLES),
    ]
    for layer in range(layers):
        for head in range(heads):
            cells = " | ".join(_cell(float(scores[r][layer, head])) for r in TABLE_ROLES)
            lines.append(f"| {layer} | {head} | {cells} |")
    return "\n".join(lines)


def reflow(text: str, width: int = 92) -> str:
    """Fill the prose paragraphs and list items (the f-strings break lines anywhere);
    tables, code, headings and the front matter stay as they are."""
    out, para = [], []

    def flush():
        if para:
            first = para[0]
            lead = "  " if first.startswith("- ") else ""
            body = " ".join(line.strip() for line in para)
            out.append(textwrap.fill(body, width, subsequent_indent=lead, break_on_hyphens=False))
            para.clear()

    for line in text.splitlines():
        keep = not line.strip() or line.startswith(
            ("|", "    ", "#", "---", "license", "library", "tags")
        )
        if keep or line.startswith("- "):
            flush()
        if keep:
            out.append(line)
        else:
            para.append(line)
    flush()
    return "\n".join(out) + "\n"


def write(folder: Path, record: dict, scores: dict[str, np.ndarray], model) -> str:
    """Write folder/README.md and return its text."""
    args = record["args"]
    met = goals(scores)
    size = sum(p.stat().st_size for p in folder.iterdir() if p.name != "README.md")
    params = sum(p.numel() for p in model.parameters())
    base = behaviour(model)
    off = {role: behaviour(model, lh)[role] for role, lh in GUIDED.items() if role != "previous"}
    goal_lines = "\n".join(
        f"| {role} | layer {lh[0]} head {lh[1]} | {v:.2f} | ≥ {bar} | "
        f"{'met' if v >= bar else 'not met'} |"
        for role, (lh, v, bar) in met.items()
    )

    def others(role: str) -> str:
        """Other heads that also score ≥ 0.5 on the role (they can stand in for it)."""
        layer, head = GUIDED[role]
        found = [
            f"layer {la} head {h} ({scores[role][la, h]:.2f})"
            for la, h in zip(*np.nonzero(scores[role] >= 0.5), strict=True)
            if (la, h) != (layer, head) and not (role == "induction" and la == 0)
        ]
        return ", ".join(found) or "none"

    behaviour_lines = "\n".join(
        f"| {role} | {base[role]:.2f} | {off[role]:.2f} (layer {GUIDED[role][0]} head "
        f"{GUIDED[role][1]} off) | {others(role)} |"
        for role in ("agreement", "antecedent", "induction")
    )
    v = classroom
    defaults = {"record": None, "card_only": False, "eval_every": 1000}
    words = [
        f"--{k.replace('_', '-')} {val}"
        for k, val in args.items()
        if k not in defaults and k != "out"
    ]
    lines, line = [], ""
    for w in words:
        if line and len(line) + len(w) > 70:
            lines.append(line)
            line = ""
        line = f"{line} {w}".strip()
    flags = " \\\n        ".join([*lines, line])
    threads = f"{args['threads']} thread{'s' if args['threads'] != 1 else ''}"
    text = f"""---
license: mit
library_name: transformers
tags: [gpt2, teaching, attention, interpretability]
---

# classroom — a tiny GPT-2 whose heads show the textbook's roles

The model that ships with mha-gui (`--model builtin`): a GPT-2 ({args["layers"]} layers ×
{args["heads"]} heads, d_model {args["d_model"]}, {args["context"]} positions,
{params:,} parameters, float32, {size / 1e6:.1f} MB) trained from scratch on the
*classroom language*, a small grammar whose sentences each need one attention head.
It is an ordinary Hugging Face folder: `config.json` (model_type gpt2), `model.safetensors`,
`tokenizer.json` (word level). The app reads it with its own NumPy loader; transformers
reads it too (`GPT2LMHeadModel.from_pretrained`).

## The language (mha_gui/engine/teaching/classroom.py)

{len(v.vocabulary())} tokens, lower case, one token per word; `<bos>` is put first on every
text, `<unk>` stands for any other word.

- names that take *she*: {", ".join(v.FEMALE)}; names that take *he*: {", ".join(v.MALE)}
- nouns, singular/plural: {", ".join("/".join(n) for n in v.NOUNS)}
- verbs that agree (singular/plural subject): {", ".join("/".join(n) for n in v.VERBS)}
- places: {", ".join(v.PLACES)}; between nouns: {", ".join(v.NEAR)};
  adjectives: {", ".join(v.ADJECTIVES)}; met, saw, helped, called; the, at, in, is, and, then, .

Kinds of text (training mix by segment: {", ".join(f"{r} {w:.0%}" for r, w in v.MIX)}):

- plain: `the old dogs sleep .`, `anna sings in the garden .`, `she runs .`
- agreement across a distracting noun: `the cat near the dogs runs .` — at `dogs`, the
  token before the verb, the model must find the subject's number
- antecedent: `mary met tom at the park . she is mary .` — at `is` the model must name the
  one person of the pronoun's gender
- induction: 4–24 distinct random words of the vocabulary, then the same words again

## Training (training/train_classroom.py, seed {args["seed"]})

{args["steps"]} steps of AdamW (lr {args["lr"]}, warm-up {args["warmup"]}, cosine to 10 %,
weight decay 0.05) on batches of {args["batch"]} windows × {args["context"]} tokens (each
window `<bos>` then whole segments), no dropout, torch {record["torch_version"]},
{threads} on a 2-core machine shared with other work:
{record["seconds"] / 60:.0f} minutes. Loss: next-token cross-entropy plus
{args["guide"]} × an *attention guide* — −log of the weight four chosen heads give the key
their role names (the previous token for layer {GUIDED["previous"][0]} head
{GUIDED["previous"][1]}; the token after the earlier occurrence, in a repeated span, for
layer {GUIDED["induction"][0]} head {GUIDED["induction"][1]}; the subject, from the noun
before the verb, for layer {GUIDED["agreement"][0]} head {GUIDED["agreement"][1]}; the
antecedent, from `is`, for layer {GUIDED["antecedent"][0]} head
{GUIDED["antecedent"][1]}). The guide chooses *which* head takes each role, so a class
finds one clear head per role; what the head then carries is learned by the language-model
loss alone. The other heads are unguided. Final losses (running mean): next-token
{record["lm_loss"]:.3f}, guide {record["guide_loss"]:.3f}. To train it again
(`pip install -e .[train]`; the run is seeded and torch on CPU is deterministic, so the
same torch build and thread count should give the same weights):

    PYTHONPATH=. python training/train_classroom.py --out resources/models/classroom \\
        {flags}

## Heads

Scores as in TransformerLens, with the app's loader: previous, first, self, duplicate and
induction are means over {len(PROBE_SEEDS)} probes (`<bos>`, then 20 distinct random words
of the vocabulary repeated once, seeds {PROBE_SEEDS.start}–{PROBE_SEEDS.stop - 1});
agreement is the mean weight from the token before the verb to the subject, antecedent the
mean weight from `is` to the antecedent, each over the 100 sentences
`classroom.agreement_sentences(100, 0)` / `classroom.antecedent_sentences(100, 0)` (the
second noun always of the other number).

{table(scores)}

| goal | head | score | needed | |
|---|---|---|---|---|
{goal_lines}

What the heads do for the model — how often it prefers the right word, with all heads and
with the role's head switched off (its output zeroed before W_O):

| task | all heads | head off | other heads scoring ≥ 0.5 on the role |
|---|---|---|---|
{behaviour_lines}

agreement: the verb's right form over its other form; antecedent: the right name over the
other one; induction: the next token of the second copy is the top prediction. Where the
accuracy stays high with the head off, the model has a second route: another head of the
last column reads the same key, or the residual stream carries the answer.
"""
    text = reflow(text)
    (folder / "README.md").write_text(text, encoding="utf-8")
    return text
