"""What the Open model dialog says about a sentence before it opens anything: the tokens
the model will see (or why it cannot), typed token ids, and the one error style of the
dialog and its download box."""

from __future__ import annotations

import html

from mha_gui.engine.teaching.classroom import UNK
from mha_gui.engine.teaching.model_roles import is_builtin
from mha_gui.theme import ERROR_RED

ERROR_STYLE = f"color: {ERROR_RED};"
SHOWN_TOKENS = 60


def error_html(text: str) -> str:
    """One sentence in the error colour (rich text; `text` is escaped)."""
    return f"<span style='{ERROR_STYLE}'>{html.escape(text, quote=False)}</span>"


def parse_ids(text: str) -> list[int]:
    """`464, 3797 3332` → [464, 3797, 3332]; ValueError naming the bad part."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts:
        raise ValueError("type the token ids, e.g. 464, 3797, 3332")
    for p in parts:
        if not (p.isascii() and p.isdigit()):
            raise ValueError(f"{p!r} is not a token id (a whole number ≥ 0)")
    return [int(p) for p in parts]


def tokens_html(info, ids: list[int], labels: list[str]) -> str:
    """The tokens and their count, each token boxed (a space shows as one); for the
    built-in model, what an unknown word means."""
    shown = " ".join(
        f"<span style='background: rgba(120,140,170,0.25)'>&nbsp;{html.escape(t, quote=False)}"
        f"&nbsp;</span>"
        for t in labels[:SHOWN_TOKENS]
    )
    more = " …" if len(labels) > SHOWN_TOKENS else ""
    unknown = ""
    if UNK in labels and is_builtin(info.path):
        unknown = (
            f"<br>{html.escape(UNK)}: a word the classroom language does not "
            "have (its words are in the model card); try an example sentence."
        )
    return (
        f"<b>{len(ids)} token{'s' * (len(ids) != 1)}</b> (at most "
        f"{info.max_positions}): {shown}{more}{unknown}"
    )
