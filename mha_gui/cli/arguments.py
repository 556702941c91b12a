"""The command line's arguments: the one-line error, argparse types, and the option groups.

Every argument is checked by its type as argparse reads it (`'x' is not a whole number`);
what depends on the layer (a head index, a key token) is checked once the session is
known, with `check_option` and the engine's one out-of-range wording.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mha_gui.engine.attention.validation import out_of_range
from mha_gui.engine.layer.presets import DEFAULT_PRESET
from mha_gui.engine.layer.session import writable_target
from mha_gui.engine.models.families import family_titles
from mha_gui.engine.panels.stages import STAGE_NAMES
from mha_gui.theme import COLORMAP_CHOICES, DEFAULT_COLORMAP

EXPORT_SUFFIXES = (".png", ".svg", ".pdf", ".gif", ".tex", ".npz", ".json")


class CliError(Exception):
    """A user mistake: reported as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: same one-line form
        raise CliError(message)


def out_file(option: str, text: str, suffix: str) -> Path:
    """An output option's file (`--out ws.pdf`, `--handout my.pdf`), checked before any
    work starts: its suffix, and (engine.session.writable_target) a file in a folder that
    exists."""
    out = Path(text)
    if out.suffix.lower() != suffix:
        raise CliError(f"{option} {text!r} must end in {suffix}")
    return writable_target(out)


def check_option(option: str, value: int | None, count: int, items: str) -> None:
    """A CliError unless `value` (when given) is in 0..count-1: `--head 2 is out of range:
    this layer has heads 0..1`."""
    if value is not None and not 0 <= value < count:
        raise CliError(out_of_range(option, value, count, items))


# ------------------------------------------------------------------- types ---------
def int_at_least(lowest: int):
    """An argparse type: a whole number ≥ `lowest`, with a message naming the text."""

    def parse(text: str) -> int:
        value = whole_number(text)
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {lowest}")
        return value

    return parse


def whole_number(text: str) -> int:
    """An argparse type: any whole number (its range is checked where it is known)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def number(text: str) -> float:
    """An argparse type: any number."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def _index_list(what: str, example: str):
    """An argparse type: comma-separated whole numbers ≥ 0, e.g. `1,3`."""

    def parse(text: str) -> tuple[int, ...]:
        parts = [p.strip() for p in text.split(",")]
        if not all(p.isascii() and p.isdigit() for p in parts):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a comma-separated list of {what} (e.g. {example})"
            )
        return tuple(int(p) for p in parts)

    return parse


head_list = _index_list("head numbers", "1,3")
_token_ids = _index_list("token ids", "464,3797,3332")


def id_list(text: str) -> list[int]:
    """An argparse type: comma-separated token ids, e.g. `464,3797,3332`."""
    return list(_token_ids(text))


def rope_theta(text: str) -> float:
    """An argparse type: RoPE's base, a finite number greater than 1."""
    from mha_gui.engine.attention.rope import validate_theta

    value = number(text)
    try:
        return validate_theta(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


# ----------------------------------------------------------- option groups --------
def model_folder(text: str):
    """An argparse type: a model folder, or `builtin` for the model that ships with the app."""
    from mha_gui.engine.models.builtin import resolve_model

    return resolve_model(text)


def add_source(p: argparse.ArgumentParser) -> None:
    """--preset | --session | --model (with its options), the random preset's options,
    and the switches every command can add (--causal, --rope, --rope-theta)."""
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--preset", help=f"a preset name (see `mha-gui presets`); default {DEFAULT_PRESET}"
    )
    src.add_argument("--session", metavar="FILE", help="a saved session (.json)")
    src.add_argument(
        "--model",
        type=model_folder,
        metavar="DIR|builtin",
        help="a Hugging Face model folder, or builtin (with --layer and --text)",
    )
    add_model_options(p)
    r = p.add_argument_group("options of the 'random' preset")
    r.add_argument("--seed", type=non_negative_int, help="random seed (default 0)")
    r.add_argument("--tokens", type=positive_int, help="number of tokens n (default 5)")
    r.add_argument("--d-model", type=positive_int, help="model width (default 8)")
    r.add_argument("--heads", type=positive_int, help="number of heads h (default 2)")
    p.add_argument("--causal", action="store_true", help="apply a causal mask")
    p.add_argument("--rope", action="store_true", help="rotate Q and K by position (RoPE, θ=10000)")
    p.add_argument(
        "--rope-theta", type=rope_theta, metavar="T", help="RoPE's base θ (implies --rope)"
    )


def add_model_options(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group(f"options of --model ({family_titles(', ')})")
    m.add_argument(
        "--layer", type=whole_number, metavar="L", help="layer index from 0 (-1: the last)"
    )
    m.add_argument("--text", help="the sentence to run the model on (its tokenizer.json)")
    m.add_argument(
        "--token-ids", type=id_list, metavar="I,J,...", help="token ids instead of --text"
    )


def add_export_options(exp: argparse.ArgumentParser) -> None:
    """What `mha-gui export` takes besides the source: stage, head, query, format options."""
    add_source(exp)
    exp.add_argument(
        "--stage", default="input", help=f"one of {', '.join(STAGE_NAMES)} (default input)"
    )
    exp.add_argument(
        "--head", type=non_negative_int, help="draw only this head (default: all, head 0 marked)"
    )
    exp.add_argument("--query", type=non_negative_int, help="highlight this query token (row)")
    exp.add_argument(
        "--ablate",
        type=head_list,
        metavar="I,J",
        help="switch these query heads off (Z_i = 0) before exporting, e.g. 1,3",
    )
    exp.add_argument(
        "--width",
        type=positive_int,
        help="width in pixels: PNG 200-10000 (default 1600), GIF 200-3000 (default 1200)",
    )
    exp.add_argument("--theme", choices=("light", "dark"), default="light", help="figure theme")
    exp.add_argument(
        "--colormap",
        choices=tuple(COLORMAP_CHOICES),
        default=DEFAULT_COLORMAP,
        help="colour map: blue-white-red, purple-green or grey (for print)",
    )
    exp.add_argument("--frame-ms", type=positive_int, default=1200, help="GIF frame time")
    exp.add_argument("--decimals", type=non_negative_int, default=2, help="LaTeX decimals")
    exp.add_argument("--handout", action="store_true", help="with .pdf: one page per stage")
    v = exp.add_argument_group("views besides the stage figure (.png .svg .pdf)")
    v.add_argument(
        "--view", default="stage", metavar="NAME", help="stage (default) or another view's figure"
    )
    v.add_argument("--key", type=non_negative_int, help="key token (the neuron view)")
    v.add_argument(
        "--range",
        dest="weights_range",
        choices=("fixed", "head", "row"),
        default="fixed",
        help="colour range of the weights: fixed 0-1, per-head or per-row maximum",
    )
    v.add_argument("--against", metavar="OTHER.json", help="the session to compare with (diff)")
    exp.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="suffix picks the format: " + " ".join(EXPORT_SUFFIXES),
    )
