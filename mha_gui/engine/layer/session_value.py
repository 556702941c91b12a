"""A whole teaching state: the layer's config, its token labels, its numbers, what is on
screen, an optional block mask and where the numbers came from.

A `Session` checks itself when it is made (every array's shape and finiteness, the
tokens, the view), so any Session a caller holds is a valid one; session.py reads and
writes it as files and re-exports everything here, where callers have always imported
it from.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from mha_gui.engine.attention.forward import Trace, forward
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import Parameters
from mha_gui.engine.panels.stages import STAGES

MAX_TOKEN_LENGTH = 40
MAX_SOURCE_LENGTH = 200


@dataclass
class ViewState:
    """What the user is looking at: restored when a session is reopened."""

    stage: int = 0
    head: int = 0
    query: int = 0

    def validated(self, config: Config) -> ViewState:
        for name, value, top in (
            ("stage", self.stage, len(STAGES) - 1),
            ("head", self.head, config.h - 1),
            ("query", self.query, config.n - 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
                raise ValueError(
                    f"view.{name} must be a whole number from 0 to {top}, got {value!r}"
                )
        return self

    def copy(self) -> ViewState:
        return ViewState(self.stage, self.head, self.query)


def same_array(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Equal arrays (shape and every entry), or both None."""
    if a is None or b is None:
        return a is None and b is None
    return a is b or (a.shape == b.shape and bool(np.array_equal(a, b)))


@dataclass
class Session:
    config: Config
    tokens: list[str]
    params: Parameters
    view: ViewState = field(default_factory=ViewState)
    mask: np.ndarray | None = None  # optional extra n×n block mask (True = blocked)
    source: str = ""  # where the numbers came from, e.g. "gpt2 · layer 5 of 12"

    def __post_init__(self) -> None:
        self.source = validate_source(self.source)
        self.tokens = validate_tokens(self.tokens, self.config.n)
        self.params = self.params.validated(self.config)
        self.view = self.view.validated(self.config)
        if self.mask is not None:
            self.mask = np.asarray(self.mask)
            if self.mask.dtype != bool or self.mask.shape != (self.config.n, self.config.n):
                raise ValueError(f"mask must be a boolean {self.config.n}×{self.config.n} matrix")

    def run(self) -> Trace:
        """The forward pass of this session's numbers."""
        return forward(
            **self.params.forward_kwargs(),
            mask=self.mask,
            causal=self.config.causal,
            scale=self.config.scale,
            rope=self.config.rope_spec,
            ablate=self.config.ablate,
        )

    def checked(self) -> Session:
        """This session's numbers validated again, in a new Session that shares them
        (writable float64 arrays are not copied): for a session nobody else holds on to.
        A read-only array (a view of a file, say) is copied, since it will be edited."""
        session = Session(
            self.config,
            list(self.tokens),
            self.params,
            self.view.copy(),
            self.mask,
            self.source,
        )
        for name, array in session.params.as_dict().items():
            if not array.flags.writeable:
                setattr(session.params, name, array.copy())
        return session

    def copy(self, trusted: bool = False) -> Session:
        """An independent copy, validated again unless `trusted`: a document's own
        session, whose every edit was checked, need not be (n = 2048, d_model 768: the
        checks cost ~10 ms of the UI thread's time per copy)."""
        parts = (
            self.config,
            list(self.tokens),
            self.params.copy(),
            self.view.copy(),
            None if self.mask is None else self.mask.copy(),
            self.source,
        )
        if not trusted:
            return Session(*parts)
        twin = object.__new__(Session)
        twin.config, twin.tokens, twin.params, twin.view, twin.mask, twin.source = parts
        return twin

    def copy_into(self, target: Session, names=None) -> Session:
        """This session's contents written into `target`'s arrays (same config): a copy
        that touches no new memory (n = 2048: ~5 ms, against ~40 ms of page faults for
        fresh arrays). `names`, if given, are the only parameters that may differ (the
        others are known equal and not copied: a one-matrix edit copies one matrix)."""
        for name, array in self.params.as_dict().items():
            if names is None or name in names:
                np.copyto(getattr(target.params, name), array)
        if self.mask is not None and target.mask is not None:
            np.copyto(target.mask, self.mask)
        else:
            target.mask = None if self.mask is None else self.mask.copy()
        target.tokens, target.view, target.source = list(self.tokens), self.view.copy(), self.source
        return target

    def _repr_svg_(self) -> str:
        """A notebook cell whose value is a session shows its stage figure (export code)."""
        from mha_gui.export.notebook import session_svg

        return session_svg(self)

    def _repr_png_(self) -> bytes:
        from mha_gui.export.notebook import session_png

        return session_png(self)

    def same_contents(self, other: Session) -> bool:
        """Would the two be written as the same file (config, tokens, numbers, mask)?"""
        if (self.config, list(self.tokens), self.source) != (
            other.config,
            list(other.tokens),
            other.source,
        ):
            return False
        mine, theirs = self.params.as_dict(), other.params.as_dict()
        return (
            mine.keys() == theirs.keys()
            and all(same_array(mine[k], theirs[k]) for k in mine)
            and same_array(self.mask, other.mask)
        )


def validate_source(source) -> str:
    """A session's provenance line: one line of at most MAX_SOURCE_LENGTH characters."""
    if not isinstance(source, str):
        raise ValueError(f"source must be a string, got {type(source).__name__}")
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in source):
        raise ValueError("source must be one line of text (no newline, tab or control character)")
    if len(source) > MAX_SOURCE_LENGTH:
        raise ValueError(
            f"source is {len(source)} characters long; at most {MAX_SOURCE_LENGTH} are allowed"
        )
    return source


# Unicode's control characters (category Cc) are exactly these code points; one regular
# expression search per token instead of a category lookup per character (n = 2048: 4 ms).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def validate_tokens(tokens, n: int) -> list[str]:
    if not isinstance(tokens, (list, tuple)):
        raise ValueError(f"tokens must be a list of {n} strings")
    if len(tokens) != n:
        raise ValueError(f"tokens has {len(tokens)} entries but n={n} needs {n}")
    for i, tok in enumerate(tokens):
        if not isinstance(tok, str):
            raise ValueError(f"tokens[{i}] must be a string, got {tok!r}")
        if not tok.strip():
            raise ValueError(f"tokens[{i}] is empty: every token needs a label")
        if CONTROL.search(tok):
            raise ValueError(
                f"tokens[{i}] contains a control character (newline, tab...): "
                f"a token label is one line of text"
            )
        if len(tok) > MAX_TOKEN_LENGTH:
            raise ValueError(f"tokens[{i}] is longer than {MAX_TOKEN_LENGTH} characters")
    return [str(t) for t in tokens]


def default_tokens(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]
