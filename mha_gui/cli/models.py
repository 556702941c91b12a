"""`mha-gui models`, `mha-gui heads` and `mha-gui download`: real models from the shell.

    mha-gui models [--json]                      the built-in model, then the local HF cache
    mha-gui heads --model DIR|builtin (--text T | --probe repeated [--seed S]) [--json]
    mha-gui download REPO_ID [--yes]             explicit, with progress; never implicit

`heads` prints every layer × head's role scores (engine/teaching/head_roles.py) and the strongest
role; `download` shows the size first and asks (unless --yes, or stdin is not a terminal
and --yes is missing: then it refuses instead of downloading unasked).
"""

from __future__ import annotations

import json
import math
import sys

from mha_gui.cli.arguments import CliError, id_list, model_folder, whole_number

MODEL_COMMANDS_HELP = {
    "models": "list the built-in model and the models in the local Hugging Face cache",
    "heads": "score every head of a model by role (previous, first, self, duplicate, induction)",
    "download": "download a model from the Hugging Face hub into the local cache",
}


def add_model_parsers(sub) -> None:
    models = sub.add_parser("models", help=MODEL_COMMANDS_HELP["models"])
    models.add_argument("--json", action="store_true", help="a JSON list instead of a table")
    heads = sub.add_parser("heads", help=MODEL_COMMANDS_HELP["heads"])
    heads.add_argument(
        "--model", required=True, type=model_folder, metavar="DIR|builtin", help="a model folder"
    )
    what = heads.add_mutually_exclusive_group(required=True)
    what.add_argument("--text", help="score the heads on this text")
    what.add_argument("--token-ids", type=id_list, metavar="I,J,...", help="token ids instead")
    what.add_argument(
        "--probe",
        choices=("repeated",),
        help="'repeated': random tokens of the vocabulary with a span repeated once",
    )
    heads.add_argument("--seed", type=whole_number, help="the probe's seed (default 0)")
    heads.add_argument("--json", action="store_true", help="JSON instead of a table")
    down = sub.add_parser("download", help=MODEL_COMMANDS_HELP["download"])
    down.add_argument("repo_id", metavar="REPO_ID", help="e.g. gpt2 or Qwen/Qwen2.5-0.5B")
    down.add_argument("--yes", action="store_true", help="do not ask before downloading")


def model_entries() -> list[dict]:
    """The built-in model first, then every model folder of the local cache."""
    from mha_gui.engine.models import describe_model, discover_models
    from mha_gui.engine.models.builtin import BUILTIN_NAME, builtin_model_path

    entries = []

    def entry(name, path, builtin, model_type=None):
        item = {"name": name, "path": str(path), "builtin": builtin}
        try:
            info = describe_model(path)
        except (ValueError, OSError) as exc:
            item.update(family=model_type, layers=None, heads=None, supported=False)
            item["problem"] = str(exc).split("\n")[0]
        else:
            item.update(
                family=info.family,
                layers=info.n_layers,
                heads=info.n_heads,
                supported=True,
                d_model=info.d_model,
            )
        entries.append(item)

    entry(BUILTIN_NAME, builtin_model_path(), True, "gpt2")
    for found in discover_models():
        entry(found.name, found.path, False, found.model_type)
    return entries


def cmd_models(args) -> int:
    entries = model_entries()
    if args.json:
        print(json.dumps(entries, indent=1))
        return 0
    width = max(len(e["name"]) for e in entries)
    for e in entries:
        if e["supported"]:
            shape = f"{e['family']:<8} {e['layers']:>3} layers × {e['heads']:>3} heads"
        else:
            shape = f"{e['family'] or '?':<8} not readable: {e['problem']}"
        print(f"{e['name']:<{width}}  {shape}  {e['path']}")
    return 0


def cmd_heads(args) -> int:
    from mha_gui.engine.teaching.head_roles import ROLES, head_roles

    if args.seed is not None and args.probe is None:
        raise CliError("--seed goes with --probe repeated")
    roles = head_roles(
        args.model,
        text=args.text,
        token_ids=args.token_ids,
        probe=args.probe,
        seed=args.seed or 0,
    )
    if args.json:
        print(json.dumps(roles.as_json(), indent=1))
        return 0
    layers, heads = roles.shape
    print(
        f"{len(roles.tokens)} tokens: {' '.join(roles.tokens[:24])}{' …' * (len(roles.tokens) > 24)}"
    )
    print("layer head " + " ".join(f"{r:>9}" for r in ROLES) + "  strongest")
    for li, layer in enumerate(roles.layers):
        for h in range(heads):
            cells = []
            for role in ROLES:
                value = float(roles.scores[role][li, h])
                cells.append(f"{'—' if math.isnan(value) else f'{value:.2f}':>9}")
            print(f"{layer:>5} {h:>4} " + " ".join(cells) + f"  {roles.label(li, h) or '—'}")
    return 0


def cmd_download(args) -> int:
    from mha_gui.engine.models.download import DownloadError, download, plan_download

    try:
        plan = plan_download(args.repo_id)
        size = plan.total_bytes
        print(f"{plan.repo_id} ({plan.model_type}): {len(plan.files)} files, {_size(size)}")
        for name, bytes_ in plan.files:
            print(f"  {name}  {_size(bytes_)}")
        if not args.yes:
            if not sys.stdin or not sys.stdin.isatty():
                raise CliError("not downloading without a yes: add --yes to download")
            answer = input(f"Download {_size(size)} into the Hugging Face cache? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing was downloaded")
                return 1
        last = [-1]

        def progress(done: int, total: int) -> None:
            percent = int(100 * done / total) if total else 100
            if percent != last[0]:
                last[0] = percent
                print(f"\r{percent:3d} %  {_size(done)} of {_size(total)}", end="", flush=True)

        folder = download(plan, progress=progress)
        print()
    except DownloadError as exc:
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        print()
        raise CliError("the download was interrupted; nothing was kept") from None
    print(f"downloaded to {folder}")
    print(f'open it with: mha-gui --model "{folder}" --layer 0 --text "..."')
    return 0


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


MODEL_COMMANDS = {"models": cmd_models, "heads": cmd_heads, "download": cmd_download}

__all__ = ["MODEL_COMMANDS", "add_model_parsers", "model_entries"]
