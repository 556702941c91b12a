"""Turn a sentence into token ids with the model folder's tokenizer.json, and label them.

Labels are what the window prints beside each row: GPT-2's byte-level pieces are decoded
back to text, a leading space (GPT-2's 'Ġ', SentencePiece's '▁') becomes a visible '␣',
a newline '↵' and a tab '⇥', so every label is one readable line.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

from mha_gui.engine.layer.session import MAX_TOKEN_LENGTH

TOKENIZER_NAME = "tokenizer.json"
SPACE_MARK = "␣"
VISIBLE = {" ": SPACE_MARK, "\n": "↵", "\r": "↵", "\t": "⇥", "▁": SPACE_MARK}


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte ↔ printable-character table, inverted (character → byte)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = list(printable)
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def _uses_byte_level(data) -> bool:
    if isinstance(data, dict):
        if data.get("type") == "ByteLevel":
            return True
        return any(_uses_byte_level(v) for v in data.values())
    if isinstance(data, list):
        return any(_uses_byte_level(v) for v in data)
    return False


class TokenizerFile:
    """The `tokenizers` tokenizer of a model folder, with readable labels."""

    def __init__(self, path: str | Path):
        path = Path(path)
        try:
            from tokenizers import Tokenizer
        except ImportError:  # pragma: no cover - a declared dependency
            raise ValueError("reading tokenizer.json needs the 'tokenizers' package") from None
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
            self._tok = Tokenizer.from_str(text)
        except Exception as exc:  # OSError, bad JSON, the library's own errors
            raise ValueError(f"cannot read {path}: {str(exc).splitlines()[0][:200]}") from None
        # Long texts are refused with a reason, never cut silently; one sentence, no padding.
        self._tok.no_truncation()
        self._tok.no_padding()
        self.byte_level = isinstance(data, dict) and (
            _uses_byte_level(data.get("pre_tokenizer")) or _uses_byte_level(data.get("decoder"))
        )
        self.special = {t.content for t in self._tok.get_added_tokens_decoder().values()}

    def encode(self, text: str) -> tuple[list[int], list[str]]:
        """Token ids of `text` (special tokens included, e.g. [CLS] … [SEP]) and labels."""
        enc = self._tok.encode(text)
        return list(enc.ids), [self.label(t, i) for t, i in zip(enc.tokens, enc.ids, strict=True)]

    def labels(self, ids: list[int]) -> list[str]:
        return [self.label(self._tok.id_to_token(i), i) for i in ids]

    def label(self, token: str | None, token_id: int) -> str:
        if token is None:
            return f"#{token_id}"
        if token in self.special:
            text = token
        elif self.byte_level:
            table = _byte_decoder()
            if all(ch in table for ch in token):
                text = bytes(table[ch] for ch in token).decode("utf-8", errors="backslashreplace")
            else:
                text = token
        else:
            text = _byte_fallback(token)
        return readable(text, token_id)


def _byte_fallback(token: str) -> str:
    """SentencePiece byte pieces '<0x0A>' → the character when it is one ASCII byte."""
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            value = int(token[3:5], 16)
        except ValueError:
            return token
        if value < 0x80:
            return chr(value)
    return token


def readable(text: str, token_id: int) -> str:
    """One visible line of at most MAX_TOKEN_LENGTH characters, never empty."""
    out = []
    for ch in text:
        if ch in VISIBLE:
            out.append(VISIBLE[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    label = "".join(out)
    if not label.strip():
        return f"#{token_id}"
    if len(label) > MAX_TOKEN_LENGTH:
        label = label[: MAX_TOKEN_LENGTH - 1] + "…"
    return label


def id_labels(ids: list[int]) -> list[str]:
    """Labels when there is no tokenizer: '#id'."""
    return [f"#{i}" for i in ids]
