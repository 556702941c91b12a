"""The subcommands: `presets`, `info`, `export` (and `train`, `worksheet` from learning.py),
the parser that reads them, and opening the window when no subcommand is given.

Each command checks what depends on the session (a head, a query, a key) before any
work, and exports write through a temporary file, so a mistake leaves no output.
"""

from __future__ import annotations

from pathlib import Path

from mha_gui import __version__
from mha_gui.cli.arguments import (
    EXPORT_SUFFIXES,
    CliError,
    Parser,
    add_export_options,
    add_model_options,
    add_source,
    check_option,
    model_folder,
)
from mha_gui.cli.display_probe import check_display
from mha_gui.cli.learning import LEARNING_COMMANDS, add_learning_parsers
from mha_gui.cli.lessons import LESSON_COMMANDS, add_lesson_parsers, open_on_lesson
from mha_gui.cli.models import MODEL_COMMANDS, add_model_parsers
from mha_gui.cli.sessions import model_session, origin, session_from, with_config
from mha_gui.engine.layer.presets import DEFAULT_PRESET, PRESETS, load_preset
from mha_gui.engine.layer.session import Session, ViewState, load_session
from mha_gui.engine.panels.info import info_text
from mha_gui.engine.panels.stages import stage_by_name


def cmd_presets(_args) -> int:
    width = max(len(n) for n in PRESETS)
    for name, preset in PRESETS.items():
        print(f"{name:<{width}}  {preset.summary}")
    return 0


def cmd_info(args) -> int:
    print(info_text(session_from(args)))
    return 0


def cmd_export(args) -> int:
    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in EXPORT_SUFFIXES:
        raise CliError(
            f"cannot export {out.name!r}: the suffix must be one of {' '.join(EXPORT_SUFFIXES)}"
        )
    extra = _model_view_extra(args)
    session = session_from(args)
    stage = stage_by_name(args.stage)
    c = session.config
    check_option("--head", args.head, c.h, "heads")
    check_option("--query", args.query, c.n, "tokens")
    if args.ablate is not None:
        for i in args.ablate:
            check_option("--ablate", i, c.h, "heads")
        session = with_config(session, ablate=args.ablate)
    if args.handout and suffix != ".pdf":
        raise CliError("--handout writes a PDF: use --out FILE.pdf")
    if suffix == ".json":  # a session remembers what was on screen
        session.view = ViewState(stage.index, args.head or 0, args.query or 0)
    from mha_gui.export.files import export_to

    export_to(
        session,
        out,
        stage=stage.name,
        head=args.head,
        query=args.query,
        width=args.width,
        theme=args.theme,
        frame_ms=args.frame_ms,
        decimals=args.decimals,
        handout=args.handout,
        colormap=args.colormap,
        **_view_options(args, session),
        extra=extra,
    )
    print(f"wrote {out}")
    return 0


def _view_options(args, session: Session) -> dict:
    """--view/--key/--range/--against, checked against the session (exit 2 on errors)."""
    check_option("--key", args.key, session.config.n, "tokens")
    against = None
    if args.against is not None:
        against = load_session(args.against)
    return dict(view=args.view, key=args.key, weights_range=args.weights_range, against=against)


def _model_view_extra(args) -> dict | None:
    """`--view model` draws every layer of `--model` on `--text`: --layer is optional
    (the layer to outline; the figure shows them all)."""
    if args.view != "model":
        return None
    if args.model is None:
        raise CliError('--view model needs --model DIR and --text "..." (or --token-ids)')
    layer = args.layer
    if args.layer is None:
        args.layer = 0
    ids = args.token_ids
    return {"model": args.model, "text": args.text, "token_ids": ids, "layer": layer}


COMMANDS = {
    "presets": cmd_presets,
    "info": cmd_info,
    "export": cmd_export,
    **LEARNING_COMMANDS,
    **LESSON_COMMANDS,
    **MODEL_COMMANDS,
}
SUBCOMMANDS = tuple(COMMANDS)


def build_parser() -> Parser:
    parser = Parser(
        prog="mha-gui",
        description="A simulator of multi-head attention for teaching. "
        "Without a subcommand, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"mha-gui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    sub.add_parser("presets", help="list the presets, one line each")
    info = sub.add_parser("info", help="shapes, parameter count, FLOPs and memory of a layer")
    add_source(info)
    exp = sub.add_parser("export", help="write a figure, animation, LaTeX, arrays or session")
    add_export_options(exp)
    add_learning_parsers(sub, add_source)
    add_lesson_parsers(sub)
    add_model_parsers(sub)
    return parser


def cmd_open(argv: list[str]) -> int:
    """`mha-gui [SESSION_FILE] [--preset NAME | --model DIR ...]`: open the window, after
    checking the file, preset or model and the display (one-line errors, no window)."""
    p = Parser(prog="mha-gui", description="Open the simulator window.")
    p.add_argument("session", nargs="?", metavar="SESSION_FILE", help="a saved session (.json)")
    p.add_argument("--preset", help=f"start from a preset (default {DEFAULT_PRESET})")
    p.add_argument(
        "--model",
        type=model_folder,
        metavar="DIR|builtin",
        help="open a layer of a Hugging Face model folder (builtin: the model that ships)",
    )
    add_model_options(p)
    p.add_argument("--lesson", metavar="FILE|NAME", help="open the window on a lesson")
    args = p.parse_args(argv)
    if sum(x is not None for x in (args.session, args.preset, args.model)) > 1:
        raise CliError("give one of SESSION_FILE, --preset or --model")
    if args.lesson is not None:
        if sum(x is not None for x in (args.session, args.preset, args.model)):
            raise CliError(
                "--lesson opens what the lesson shows: give no SESSION_FILE, --preset or --model"
            )
        from mha_gui.app import run_app

        return open_on_lesson(args.lesson, run_app, check_display)
    opened = model_session(args)  # a bad folder, layer or text fails before any window
    if opened is not None:
        check_display()
        from mha_gui.app import run_app

        return run_app(session=opened, origin=origin(args))
    if args.session and not Path(args.session).exists() and Path(args.session).suffix != ".json":
        raise CliError(
            f"unrecognized command or missing file {args.session!r} "
            f"(commands: {', '.join(SUBCOMMANDS)}; or give a SESSION_FILE.json)"
        )
    if args.session:
        load_session(args.session)  # fail here, with a one-line error, before any window
    if args.preset:
        load_preset(args.preset)
    check_display()
    from mha_gui.app import run_app

    return run_app(session_path=args.session, preset=args.preset)
