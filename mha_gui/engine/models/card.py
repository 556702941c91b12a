"""A model card's title and first sentence, for a list of models (no Qt, no markdown library).

Hugging Face model cards are README.md files: YAML front matter between `---` lines, a
`# title`, then prose. A list of models shows the title and one line of that prose, so a
user picks the built-in model knowing what it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_LINE = 160
MAX_CARD_BYTES = 1 << 20


@dataclass(frozen=True)
class CardSummary:
    title: str  # "" when the card has no `# title`
    line: str  # the first sentence of the first paragraph, at most MAX_LINE characters
    sentence: str  # that sentence whole


def _plain(text: str) -> str:
    """Markdown emphasis, code and links to plain text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\*\*?([^*]+?)\*\*?", r"\1", text)
    text = re.sub(r"(?<!\w)_([^_]+?)_(?!\w)", r"\1", text)  # not d_model's underscore
    return " ".join(text.split())


def read_card(folder) -> CardSummary | None:
    """The card of a model folder, or None when it has no readable README.md."""
    path = Path(folder) / "README.md"
    try:
        if path.stat().st_size > MAX_CARD_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        lines = lines[end + 1 :] if end is not None else []
    title, paragraph = "", []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("# ") and not title and not paragraph:
            title = _plain(stripped[2:])
        elif stripped.startswith("#") or not stripped:
            if paragraph:
                break
        else:
            paragraph.append(stripped)
    prose = _plain(" ".join(paragraph))
    match = re.match(r"(.+?[.!?])(\s|$)", prose)
    sentence = match.group(1) if match else prose
    line = sentence
    if len(line) > MAX_LINE:
        line = line[: MAX_LINE - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return CardSummary(title, line, sentence)
