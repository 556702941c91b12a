"""Command line: open the app, list presets, print a layer's shapes and costs, export files.

Every user error ends with exit status 2 and one line `mha-gui: error: ...` on stderr —
no traceback, and no partial output file (exports write a temp file and rename it).
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import os
import sys
from pathlib import Path

from mha_gui import __version__
from mha_gui.cli.learning import LEARNING_COMMANDS, add_learning_parsers
from mha_gui.cli.lessons import LESSON_COMMANDS, add_lesson_parsers
from mha_gui.engine.info import info_text
from mha_gui.engine.presets import DEFAULT_PRESET, PRESETS, load_preset
from mha_gui.engine.session import Session, ViewState, load_session
from mha_gui.engine.stages import STAGE_NAMES, stage_by_name
from mha_gui.theme import COLORMAP_CHOICES, DEFAULT_COLORMAP

SUBCOMMANDS = ("presets", "info", "export", *LEARNING_COMMANDS, *LESSON_COMMANDS)
EXPORT_SUFFIXES = (".png", ".svg", ".pdf", ".gif", ".tex", ".npz", ".json")


class CliError(Exception):
    """A user mistake: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: same one-line form
        raise CliError(message)


def _int_at_least(lowest: int):
    """An argparse type: a whole number ≥ `lowest`, with a message naming the text."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {lowest}")
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _add_source(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--preset", help=f"a preset name (see `mha-gui presets`); default {DEFAULT_PRESET}"
    )
    src.add_argument("--session", metavar="FILE", help="a saved session (.json)")
    src.add_argument(
        "--model", metavar="DIR", help="a Hugging Face model folder (with --layer and --text)"
    )
    _add_model_options(p)
    r = p.add_argument_group("options of the 'random' preset")
    r.add_argument("--seed", type=_non_negative_int, help="random seed (default 0)")
    r.add_argument("--tokens", type=_positive_int, help="number of tokens n (default 5)")
    r.add_argument("--d-model", type=_positive_int, help="model width (default 8)")
    r.add_argument("--heads", type=_positive_int, help="number of heads h (default 2)")
    p.add_argument("--causal", action="store_true", help="apply a causal mask")
    p.add_argument("--rope", action="store_true", help="rotate Q and K by position (RoPE, θ=10000)")
    p.add_argument(
        "--rope-theta", type=_rope_theta, metavar="T", help="RoPE's base θ (implies --rope)"
    )


def _add_model_options(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("options of --model (GPT-2, BERT, Llama, Mistral, Qwen2)")
    m.add_argument(
        "--layer", type=_layer_number, metavar="L", help="layer index from 0 (-1: the last)"
    )
    m.add_argument("--text", help="the sentence to run the model on (its tokenizer.json)")
    m.add_argument(
        "--token-ids", type=_id_list, metavar="I,J,...", help="token ids instead of --text"
    )


def _layer_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _id_list(text: str) -> list[int]:
    """An argparse type: comma-separated token ids, e.g. `464,3797,3332`."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of token ids (e.g. 464,3797,3332)"
        )
    return [int(p) for p in parts]


def _model_session(args) -> Session | None:
    """The session of `--model DIR --layer L --text ...` (or --token-ids)."""
    if args.model is None:
        if args.layer is not None or args.text is not None or args.token_ids is not None:
            raise CliError("--layer, --text and --token-ids go with --model DIR")
        return None
    if args.layer is None:
        raise CliError("--model needs --layer L (the layer index, from 0)")
    if (args.text is None) == (args.token_ids is None):
        raise CliError('--model needs either --text "a sentence" or --token-ids 1,2,3')
    from mha_gui.engine.models import open_layer

    return open_layer(args.model, args.layer, text=args.text, token_ids=args.token_ids)


def _rope_theta(text: str) -> float:
    """An argparse type: RoPE's base, a finite number greater than 1."""
    from mha_gui.engine.rope import validate_theta

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    try:
        return validate_theta(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def _head_list(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated query-head indices, e.g. `1,3`."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of head numbers (e.g. 1,3)"
        )
    return tuple(int(p) for p in parts)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mha-gui",
        description="A simulator of multi-head attention for teaching. "
        "Without a subcommand, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"mha-gui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("presets", help="list the presets, one line each")
    info = sub.add_parser("info", help="shapes, parameter count, FLOPs and memory of a layer")
    _add_source(info)
    exp = sub.add_parser("export", help="write a figure, animation, LaTeX, arrays or session")
    _add_source(exp)
    exp.add_argument(
        "--stage", default="input", help=f"one of {', '.join(STAGE_NAMES)} (default input)"
    )
    exp.add_argument(
        "--head", type=_non_negative_int, help="draw only this head (default: all, head 0 marked)"
    )
    exp.add_argument("--query", type=_non_negative_int, help="highlight this query token (row)")
    exp.add_argument(
        "--ablate",
        type=_head_list,
        metavar="I,J",
        help="switch these query heads off (Z_i = 0) before exporting, e.g. 1,3",
    )
    exp.add_argument(
        "--width",
        type=_positive_int,
        help="width in pixels: PNG 200-10000 (default 1600), GIF 200-3000 (default 1200)",
    )
    exp.add_argument("--theme", choices=("light", "dark"), default="light", help="figure theme")
    exp.add_argument(
        "--colormap",
        choices=tuple(COLORMAP_CHOICES),
        default=DEFAULT_COLORMAP,
        help="colour map: blue-white-red, purple-green or grey (for print)",
    )
    exp.add_argument("--frame-ms", type=_positive_int, default=1200, help="GIF frame time")
    exp.add_argument("--decimals", type=_non_negative_int, default=2, help="LaTeX decimals")
    exp.add_argument("--handout", action="store_true", help="with .pdf: one page per stage")
    _add_view_options(exp)
    exp.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="suffix picks the format: " + " ".join(EXPORT_SUFFIXES),
    )
    add_learning_parsers(sub, _add_source)
    add_lesson_parsers(sub)
    return parser


def _add_view_options(exp: argparse.ArgumentParser) -> None:
    v = exp.add_argument_group("views besides the stage figure (.png .svg .pdf)")
    v.add_argument(
        "--view", default="stage", metavar="NAME", help="stage (default) or another view's figure"
    )
    v.add_argument("--key", type=_non_negative_int, help="key token (the neuron view)")
    v.add_argument(
        "--range",
        dest="weights_range",
        choices=("fixed", "head", "row"),
        default="fixed",
        help="colour range of the weights: fixed 0-1, per-head or per-row maximum",
    )
    v.add_argument("--against", metavar="OTHER.json", help="the session to compare with (diff)")


def _view_options(args, session: Session) -> dict:
    """--view/--key/--range/--against, checked against the session (exit 2 on errors)."""
    if args.key is not None and args.key >= session.config.n:
        n = session.config.n
        raise CliError(f"--key {args.key} is out of range: this layer has tokens 0..{n - 1}")
    against = None
    if args.against is not None:
        against = load_session(args.against)
    return dict(view=args.view, key=args.key, weights_range=args.weights_range, against=against)


def _session_from(args) -> Session:
    random_opts = {
        k: v
        for k, v in (
            ("seed", args.seed),
            ("tokens", args.tokens),
            ("d_model", args.d_model),
            ("heads", args.heads),
        )
        if v is not None
    }
    session = _model_session(args)
    if session is not None:
        if random_opts:
            raise CliError("--seed/--tokens/--d-model/--heads only go with --preset random")
    elif args.session:
        if random_opts:
            raise CliError("--seed/--tokens/--d-model/--heads only go with --preset random")
        session = load_session(args.session)
    else:
        name = args.preset or DEFAULT_PRESET
        if random_opts and name != "random":
            raise CliError("--seed/--tokens/--d-model/--heads only go with --preset random")
        session = load_preset(name, **random_opts)
    if args.causal and not session.config.causal:
        session = Session(
            session.config.with_changes(causal=True),
            session.tokens,
            session.params,
            session.view,
            session.mask,
        )
    if args.rope or args.rope_theta is not None:
        theta = session.config.rope_theta if args.rope_theta is None else args.rope_theta
        session = dataclasses.replace(
            session, config=session.config.with_changes(rope=True, rope_theta=theta)
        )
    return session


def cmd_presets(_args) -> int:
    width = max(len(n) for n in PRESETS)
    for name, preset in PRESETS.items():
        print(f"{name:<{width}}  {preset.summary}")
    return 0


def cmd_info(args) -> int:
    print(info_text(_session_from(args)))
    return 0


def cmd_export(args) -> int:
    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in EXPORT_SUFFIXES:
        raise CliError(
            f"cannot export {out.name!r}: the suffix must be one of {' '.join(EXPORT_SUFFIXES)}"
        )
    extra = _model_view_extra(args)
    session = _session_from(args)
    stage = stage_by_name(args.stage)
    c = session.config
    if args.head is not None and args.head >= c.h:
        raise CliError(f"--head {args.head} is out of range: this layer has heads 0..{c.h - 1}")
    if args.query is not None and args.query >= c.n:
        raise CliError(f"--query {args.query} is out of range: this layer has tokens 0..{c.n - 1}")
    if args.ablate is not None:
        bad = [i for i in args.ablate if i >= c.h]
        if bad:
            raise CliError(f"--ablate {bad[0]} is out of range: this layer has heads 0..{c.h - 1}")
        session = dataclasses.replace(session, config=c.with_changes(ablate=args.ablate))
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


def _origin(args):
    """The model folder and sentence of `mha-gui --model …` (the window's model view)."""
    from mha_gui.engine.models import describe_model
    from mha_gui.engine.models.origin import ModelOrigin

    layer = args.layer % describe_model(args.model).n_layers  # --layer -1: the last
    return ModelOrigin.make(args.model, layer, args.text, args.token_ids)


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


def cmd_open(argv: list[str]) -> int:
    p = _Parser(prog="mha-gui", description="Open the simulator window.")
    p.add_argument("session", nargs="?", metavar="SESSION_FILE", help="a saved session (.json)")
    p.add_argument("--preset", help=f"start from a preset (default {DEFAULT_PRESET})")
    p.add_argument("--model", metavar="DIR", help="open a layer of a Hugging Face model folder")
    _add_model_options(p)
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
        from mha_gui.cli.lessons import open_on_lesson

        return open_on_lesson(args.lesson, run_app, _check_display)
    model_session = _model_session(args)  # a bad folder, layer or text fails before any window
    if model_session is not None:
        _check_display()
        from mha_gui.app import run_app

        return run_app(session=model_session, origin=_origin(args))
    if args.session and not Path(args.session).exists() and Path(args.session).suffix != ".json":
        raise CliError(
            f"unrecognized command or missing file {args.session!r} "
            f"(commands: {', '.join(SUBCOMMANDS)}; or give a SESSION_FILE.json)"
        )
    if args.session:
        load_session(args.session)  # fail here, with a one-line error, before any window
    if args.preset:
        load_preset(args.preset)
    _check_display()
    from mha_gui.app import run_app

    return run_app(session_path=args.session, preset=args.preset)


def _check_display() -> None:
    """Without a display Qt aborts the process with a screenful of plugin messages."""
    if not sys.platform.startswith("linux"):
        return
    if os.environ.get("QT_QPA_PLATFORM") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if not os.environ.get("DISPLAY"):
        raise CliError(
            "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "`mha-gui info` and `mha-gui export` work without one"
        )
    missing = _missing_x11_library()
    if missing:
        raise CliError(
            f"Qt cannot open a window on X11: the system library {missing} is missing "
            f"(pip cannot install it; Debian/Ubuntu: sudo apt-get install {X11_PACKAGES})"
        )


# What Qt's X11 plugin needs beyond a bare X server, as Debian/Ubuntu package names.
X11_PACKAGES = "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0"


def _missing_x11_library() -> str | None:
    """Load Qt's xcb plugin the way Qt will; the loader names the first missing library.

    Without this, Qt aborts the whole process with a page of plugin messages.
    """
    import PySide6

    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        return None
    try:
        ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY)
    except OSError as exc:
        exc = exc.__cause__ or exc  # a frozen bundle's loader wraps the system's message
        return str(exc).split(":")[0].strip() or "a library of Qt's X11 plugin"
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv or argv[0] not in (*SUBCOMMANDS, "-h", "--help", "--version"):
            return cmd_open(argv)
        args = build_parser().parse_args(argv)
        commands = {"presets": cmd_presets, "info": cmd_info, "export": cmd_export}
        return {**commands, **LEARNING_COMMANDS, **LESSON_COMMANDS}[args.command](args)
    except BrokenPipeError:  # `mha-gui info | head`: the reader left, nothing to report
        return 0
    except (CliError, ValueError, OSError) as exc:
        print(f"mha-gui: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
