"""The session a command works on: a preset, a saved file or a real model's layer, with
the switches the command line adds (--causal, --rope, --rope-theta).

A switch changes the session's config and keeps everything else — tokens, numbers,
view, mask and where the numbers came from (`source`).
"""

from __future__ import annotations

import dataclasses

from mha_gui.cli.arguments import CliError
from mha_gui.engine.layer.presets import DEFAULT_PRESET, load_preset
from mha_gui.engine.layer.session import Session, load_session

RANDOM_ONLY = "--seed/--tokens/--d-model/--heads only go with --preset random"


def with_config(session: Session, **changes) -> Session:
    """The session with its config changed (validated against its numbers), the rest kept."""
    return dataclasses.replace(session, config=session.config.with_changes(**changes))


def with_causal(session: Session, causal: bool) -> Session:
    """--causal: the session with the causal mask on (unchanged when off or already on)."""
    if causal and not session.config.causal:
        return with_config(session, causal=True)
    return session


def model_session(args) -> Session | None:
    """The session of `--model DIR --layer L --text ...` (or --token-ids); None without
    --model."""
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


def session_from(args) -> Session:
    """The session of --preset (with the random preset's options), --session or --model,
    with --causal and --rope/--rope-theta applied."""
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
    session = model_session(args)
    if session is not None or args.session:
        if random_opts:
            raise CliError(RANDOM_ONLY)
        session = session if session is not None else load_session(args.session)
    else:
        name = args.preset or DEFAULT_PRESET
        if random_opts and name != "random":
            raise CliError(RANDOM_ONLY)
        session = load_preset(name, **random_opts)
    session = with_causal(session, args.causal)
    if args.rope or args.rope_theta is not None:
        theta = session.config.rope_theta if args.rope_theta is None else args.rope_theta
        session = with_config(session, rope=True, rope_theta=theta)
    return session


def origin(args):
    """The model folder and sentence of `mha-gui --model …` (the window's model view)."""
    from mha_gui.engine.models import describe_model
    from mha_gui.engine.models.origin import ModelOrigin

    layer = args.layer % describe_model(args.model).n_layers  # --layer -1: the last
    return ModelOrigin.make(args.model, layer, args.text, args.token_ids)
