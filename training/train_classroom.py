"""Train the built-in classroom model: a small GPT-2 whose heads show the textbook's roles.

    python3 -m venv /work/venv-train
    /work/venv-train/bin/pip install torch transformers safetensors tokenizers numpy
    PYTHONPATH=. /work/venv-train/bin/python training/train_classroom.py \\
        --out resources/models/classroom

torch and transformers are needed only here (the `train` extra); the app reads the result
with its own NumPy loader. The text is the classroom language (mha_gui/engine/teaching/classroom.py):
plain sentences, subject–verb agreement across a distracting noun, pronouns with an
antecedent of the right gender, and spans of random words repeated once.

The loss is next-token cross-entropy plus an *attention guide*: for four chosen heads,
-log of the weight the head gives the key its role names (the previous token; the token
after the earlier occurrence, in a repeated span; the subject, from the noun before the
verb; the antecedent, from "is"). The guide decides which head learns which role — so the
grid a class sees has one clear head per role — while the language-model loss makes the
heads' outputs useful for predicting the next word. Everything is seeded: the same
command gives the same weights on the same torch build.

At the end the model is scored with torch and with the app's own loader
(mha_gui.engine.models.attention_maps); the two must agree, and the app's numbers go into
the model card (README.md of the folder).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mha_gui.engine.teaching import classroom  # noqa: E402
from training import model_card  # noqa: E402
from training.classroom_eval import GUIDED, scores_with, summary  # noqa: E402


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="model folder to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--guide", type=float, default=0.3, help="weight of the attention guide")
    p.add_argument("--eval-every", type=int, default=1000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        help="JSON of the run (default: training/NAME-run.json, NAME = the folder's name)",
    )
    p.add_argument(
        "--card-only",
        action="store_true",
        help="measure the model already in --out and rewrite its card (needs the record)",
    )
    return p.parse_args()


# --------------------------------------------------------------------- data -------
class Batches:
    """Windows of `context` tokens: <bos>, then whole segments, the last one cut.

    Along with the ids, the (batch, query, key) positions of every guided pair that fits.
    """

    def __init__(self, seed: int, context: int):
        self.stream = classroom.training_segments(seed)
        self.ids = {w: i for i, w in enumerate(classroom.vocabulary())}
        self.context = context

    def window(self):
        ids = [self.ids[classroom.BOS]]
        pairs: dict[str, list[tuple[int, int]]] = {
            "induction": [],
            "agreement": [],
            "antecedent": [],
        }
        while len(ids) < self.context:
            seg = next(self.stream)
            start = len(ids)
            ids += [self.ids[w] for w in seg.words]
            for q, k in seg.pairs:
                if start + q < self.context:
                    pairs[seg.role].append((start + q, start + k))
        return ids[: self.context], pairs

    def __call__(self, batch: int):
        rows, guided = [], {r: [] for r in ("induction", "agreement", "antecedent")}
        for b in range(batch):
            ids, pairs = self.window()
            rows.append(ids)
            for role, found in pairs.items():
                guided[role] += [(b, q, k) for q, k in found]
        tensors = {r: torch.tensor(v, dtype=torch.long).reshape(-1, 3) for r, v in guided.items()}
        return torch.tensor(rows, dtype=torch.long), tensors


def guide_loss(attentions, pairs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
    """Mean -log weight of the key each guided head's role names (one term per role)."""
    terms = {}
    layer, head = GUIDED["previous"]
    a = attentions[layer][:, head]  # (B, T, T)
    terms["previous"] = -torch.log(torch.diagonal(a, -1, -2, -1) + 1e-6).mean()
    for role in ("induction", "agreement", "antecedent"):
        idx = pairs[role]
        if idx.numel() == 0:
            continue
        layer, head = GUIDED[role]
        w = attentions[layer][idx[:, 0], head, idx[:, 1], idx[:, 2]]
        terms[role] = -torch.log(w + 1e-6).mean()
    return sum(terms.values()), {k: float(v) for k, v in terms.items()}


# --------------------------------------------------------------------- model ------
def build_model(args) -> GPT2LMHeadModel:
    config = GPT2Config(
        vocab_size=len(classroom.vocabulary()),
        n_positions=args.context,
        n_embd=args.d_model,
        n_layer=args.layers,
        n_head=args.heads,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=classroom.vocabulary().index(classroom.BOS),
        eos_token_id=classroom.vocabulary().index(classroom.BOS),
    )
    config._attn_implementation = "eager"  # the guide needs the weights themselves
    return GPT2LMHeadModel(config)


def torch_attention(model, ids: list[int]) -> np.ndarray:
    """(layers, heads, n, n) float64 weights of one sequence, from torch."""
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    return np.stack([a[0].double().numpy() for a in out.attentions])


# ------------------------------------------------------------------- main ---------
def train(args) -> tuple[GPT2LMHeadModel, dict]:
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    model = build_model(args)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": rest, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.98),
    )

    def rate(step):
        if step < args.warmup:
            return (step + 1) / args.warmup
        frac = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, rate)
    batches = Batches(args.seed, args.context)
    start = time.time()
    lm_avg = guide_avg = None
    history = []
    for step in range(1, args.steps + 1):
        ids, pairs = batches(args.batch)
        out = model(ids, labels=ids, output_attentions=True)
        g, _ = guide_loss(out.attentions, pairs)
        loss = out.loss + args.guide * g
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        lm_avg = float(out.loss) if lm_avg is None else 0.98 * lm_avg + 0.02 * float(out.loss)
        guide_avg = float(g) if guide_avg is None else 0.98 * guide_avg + 0.02 * float(g)
        if step % args.eval_every == 0 or step == args.steps:
            model.eval()
            s = scores_with(lambda x: torch_attention(model, x))
            model.train()
            line = (
                f"step {step}  {time.time() - start:6.0f}s  lm {lm_avg:.3f}  guide "
                f"{guide_avg:.3f}  {summary(s)}"
            )
            print(line, flush=True)
            history.append({"step": step, "lm_loss": lm_avg, "guide_loss": guide_avg})
        elif step % 100 == 0:
            print(
                f"step {step}  {time.time() - start:6.0f}s  lm {lm_avg:.3f}  guide {guide_avg:.3f}",
                flush=True,
            )
    model.eval()
    return model, {
        "seconds": time.time() - start,
        "lm_loss": lm_avg,
        "guide_loss": guide_avg,
        "history": history,
    }


def save(model: GPT2LMHeadModel, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    model.config.architectures = ["GPT2LMHeadModel"]
    model.save_pretrained(folder, safe_serialization=True)
    for extra in ("generation_config.json",):
        (folder / extra).unlink(missing_ok=True)
    classroom.build_tokenizer().save(str(folder / "tokenizer.json"))


def app_attention(folder: Path):
    from mha_gui.engine.models import attention_maps

    def run(ids):
        return attention_maps(folder, token_ids=ids).weights.astype(np.float64)

    return run


def measure(model, folder: Path) -> dict[str, np.ndarray]:
    """The app loader's scores of the saved folder, after checking torch gives the same."""
    torch_scores = scores_with(lambda x: torch_attention(model, x))
    app_scores = scores_with(app_attention(folder))
    worst = max(float(np.nanmax(np.abs(torch_scores[r] - app_scores[r]))) for r in app_scores)
    print(f"torch vs the app's loader: largest score difference {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("the app's loader and torch disagree")
    print("final (app's loader):", summary(app_scores))
    return app_scores


def main() -> None:
    args = arguments()
    record_path = args.record or ROOT / "training" / f"{args.out.name}-run.json"
    if args.card_only:
        model = GPT2LMHeadModel.from_pretrained(args.out, attn_implementation="eager").eval()
        record = json.loads(record_path.read_text())
    else:
        model, stats = train(args)
        save(model, args.out)
        record = {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "guided": {r: list(lh) for r, lh in GUIDED.items()},
            "torch_version": torch.__version__,
            **stats,
        }
    scores = measure(model, args.out)
    record["scores"] = {r: v.tolist() for r, v in scores.items()}
    record_path.write_text(json.dumps(record, indent=1) + "\n")
    model_card.write(args.out, record, scores, model)
    print(f"wrote {args.out / 'README.md'} and {record_path}")


if __name__ == "__main__":
    main()
