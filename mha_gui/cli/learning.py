"""`mha-gui train` and `mha-gui worksheet` (issue 10): the learning modes on the command line.

    mha-gui train --preset toy --head 1 --target previous --steps 300 --out trained.json
    mha-gui worksheet --preset toy --stage weights --blanks 4 --seed 7 --students 3 --out ws.pdf

Every argument is checked before any work starts; a mistake is one line
`mha-gui: error: ...`, exit status 2, and no file (both write atomically). cli/commands.py
registers these subcommands (`add_learning_parsers`, `LEARNING_COMMANDS`).
"""

from __future__ import annotations

import math
import re

from mha_gui.cli.arguments import CliError, check_option, number, out_file, whole_number
from mha_gui.cli.sessions import session_from, with_causal
from mha_gui.engine.teaching.training import (
    DEFAULT_OPTIMIZER,
    DEFAULT_STEPS,
    OPTIMIZERS,
    PLATEAU_HINT,
    TARGET_KINDS,
    Trainer,
    load_target,
    make_target,
    reinitialise_head,
    session_blocked,
    with_parameters,
)

TARGET_HELP = "previous, first, self, uniform, token:T (attend to token T) or a FILE.npy (n×n)"
PRINTS = 10  # the loss is printed about this many times per run


def add_learning_parsers(sub, add_source) -> None:
    """Add `train` and `worksheet` to the subparsers `sub`; `add_source` adds the usual
    --preset/--session/... options (arguments.add_source)."""
    tr = sub.add_parser("train", help="train one head's attention pattern; writes a session")
    add_source(tr)
    tr.add_argument(
        "--head", type=whole_number, required=True, metavar="I", help="the head to train"
    )
    tr.add_argument("--target", required=True, metavar="PATTERN", help=TARGET_HELP)
    tr.add_argument(
        "--steps", type=whole_number, default=DEFAULT_STEPS, metavar="N", help="default 300"
    )
    tr.add_argument(
        "--lr", type=number, metavar="LR", help="learning rate (default: 0.05 for Adam, 0.5 SGD)"
    )
    tr.add_argument("--optimizer", choices=OPTIMIZERS, default=DEFAULT_OPTIMIZER)
    tr.add_argument(
        "--reinit",
        type=whole_number,
        metavar="SEED",
        help="first re-draw this head's W^Q/W^K from SEED (to leave a plateau)",
    )
    tr.add_argument("--out", required=True, metavar="FILE.json", help="the trained session")

    ws = sub.add_parser("worksheet", help="a printable PDF worksheet with an answer key")
    src = ws.add_mutually_exclusive_group()
    src.add_argument("--preset", help="a preset name (see `mha-gui presets`); default toy")
    src.add_argument("--session", metavar="FILE", help="a saved session (.json)")
    ws.add_argument("--causal", action="store_true", help="apply a causal mask")
    ws.add_argument("--stage", required=True, metavar="NAME", help="the stage to fill in")
    ws.add_argument("--blanks", type=whole_number, required=True, metavar="K", help="cells to hide")
    ws.add_argument("--seed", type=whole_number, required=True, metavar="S", help="picks the cells")
    ws.add_argument(
        "--students",
        type=whole_number,
        default=1,
        metavar="N",
        help="N worksheets, seeds S, S+1, …",
    )
    ws.add_argument("--out", required=True, metavar="FILE.pdf")


def _fail(message: str):
    raise CliError(message)


def target_from(text: str, session):
    """The --target argument as an n×n array (ValueError in one sentence)."""
    n, blocked = session.config.n, session_blocked(session)
    token = re.fullmatch(r"token:(\d+)", text.strip())
    if token:
        return make_target("token", n, blocked, token=int(token.group(1)))
    if text.lower().endswith(".npy"):
        return load_target(text, n, blocked)
    if text in TARGET_KINDS and text != "token":
        return make_target(text, n, blocked)
    raise ValueError(f"unknown target {text!r}; choose one of: {TARGET_HELP}")


def cmd_train(args) -> int:
    from mha_gui.engine.layer.session import save_session

    out = out_file("--out", args.out, ".json")
    if args.steps <= 0:
        _fail(f"--steps {args.steps} must be at least 1")
    if args.lr is not None and (not math.isfinite(args.lr) or args.lr <= 0):
        _fail(f"--lr {args.lr:g} must be a positive finite number")
    session = session_from(args)
    check_option("--head", args.head, session.config.h, "heads")
    target = target_from(args.target, session)
    if args.reinit is not None:
        if args.reinit < 0:
            _fail(f"--reinit {args.reinit} must be a seed ≥ 0")
        session = with_parameters(session, reinitialise_head(session, args.head, args.reinit))
    trainer = Trainer(session, args.head, target, lr=args.lr, optimizer=args.optimizer)
    start = trainer.loss
    print(
        f"training head {args.head} (W_{args.head}^Q, W_{trainer.group}^K) towards "
        f"{args.target!r}: {args.optimizer}, lr {trainer.lr:g}, {args.steps} steps; "
        f"lowest possible loss {trainer.floor:.4f}"
    )
    print(f"step {0:>6}  loss {start:.4f}")
    every = max(1, args.steps // PRINTS)
    done = 0
    while done < args.steps:
        count = min(every, args.steps - done)
        trainer.step(count)
        done += count
        print(f"step {done:>6}  loss {trainer.loss:.4f}  ({_percent(trainer.loss, start)})")
    trained = trainer.session()
    trained.view.stage, trained.view.head = 3, args.head  # opens on this head's weights
    save_session(trained, out)
    weights = trained.run().weights[args.head]
    print(
        f"final loss {trainer.loss:.4f} = {_percent(trainer.loss, start)} of the start; "
        f"largest weight per row on keys {[int(k) for k in weights.argmax(axis=1)]}"
    )
    if trainer.plateau:
        print(f"plateau: {PLATEAU_HINT} (here: --reinit SEED)")
    print(f"wrote {out}")
    return 0


def _percent(loss: float, start: float) -> str:
    return f"{100 * loss / start:.1f} %" if start > 0 else "—"


def cmd_worksheet(args) -> int:
    from mha_gui.engine.layer.presets import DEFAULT_PRESET, load_preset
    from mha_gui.engine.layer.session import load_session
    from mha_gui.export.worksheet import write_worksheet

    out = out_file("--out", args.out, ".pdf")
    for name in ("blanks", "students"):
        if getattr(args, name) <= 0:
            _fail(f"--{name} {getattr(args, name)} must be at least 1")
    if args.seed < 0:
        _fail(f"--seed {args.seed} must be a whole number ≥ 0")
    if args.session:
        session = load_session(args.session)
    else:
        session = load_preset(args.preset or DEFAULT_PRESET)
    session = with_causal(session, args.causal)
    # plans (and checks) everything before a page is painted; the file appears at the end
    write_worksheet(out, session, args.stage, args.blanks, args.seed, args.students)
    last = args.seed + args.students - 1
    seeds = f"seed {args.seed}" if last == args.seed else f"seeds {args.seed}–{last}"
    print(f"wrote {out}: {args.students} worksheet(s) ({seeds}), answer keys at the end")
    return 0


LEARNING_COMMANDS = {"train": cmd_train, "worksheet": cmd_worksheet}
