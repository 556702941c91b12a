"""A lesson's step text: a small, safe subset of Markdown turned into Qt rich text.

Teachers write plain text with a few marks; nothing they write is ever read as HTML
(every character is escaped first, so `<s>` stays a token, not a strike-through):

    blank line          a new paragraph
    - item              a bullet list (consecutive lines)
    **bold**  *italic*  `code` (code keeps underscores and carets as typed)
    A_0  W_i^Q  d_model  Z_{h-1}  ℝ^(n×d_model)    sub- and superscripts, as the window
    sqrt(d_k)  √d_k     a square root sign

`to_html` gives rich text for a QLabel / QTextDocument; `to_plain` the text without marks
(accessible descriptions, the CLI).
"""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`\n]*)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])")


def _scripts(s: str) -> str:
    """Sub/superscripts of already-escaped text: `W_i^Q` → W<sub>i</sub><sup>Q</sup>."""
    s = re.sub(r"\bsqrt\(([^()]*)\)", "√\\1", s)
    s = re.sub(r"\^\(([^()]*)\)", lambda m: "<sup>" + _scripts(m.group(1)) + "</sup>", s)
    s = re.sub(r"(?<=[\w)\]])_\{([^{}]*)\}", r"<sub>\1</sub>", s)
    s = re.sub(r"(?<=[\w)\]])\^\{([^{}]*)\}", r"<sup>\1</sup>", s)
    s = re.sub(r"(?<=[A-Za-z0-9)\]])_([A-Za-z0-9]+)", r"<sub>\1</sub>", s)
    s = re.sub(r"(?<=[A-Za-z0-9)\]>])\^([A-Za-z0-9]+|ᵀ)", r"<sup>\1</sup>", s)
    return s


def inline_html(text: str) -> str:
    """One line of lesson text as rich text (escaped, then marked up)."""
    parts = []
    last = 0
    for m in _CODE.finditer(text):
        parts.append(_marks(text[last : m.start()]))
        parts.append("<code>" + html.escape(m.group(1), quote=False) + "</code>")
        last = m.end()
    parts.append(_marks(text[last:]))
    return "".join(parts)


def _marks(text: str) -> str:
    s = html.escape(text, quote=False)
    s = _BOLD.sub(r"<b>\1</b>", s)
    s = _ITALIC.sub(r"<i>\1</i>", s)
    return _scripts(s)


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """The text as ("p", [lines]) paragraphs and ("ul", [items]) lists."""
    out: list[tuple[str, list[str]]] = []
    for chunk in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.strip() for ln in chunk.splitlines() if ln.strip()]
        current: tuple[str, list[str]] | None = None
        for line in lines:
            kind = "ul" if line.startswith(("- ", "* ")) else "p"
            body = line[2:].strip() if kind == "ul" else line
            if current is not None and current[0] == kind:
                current[1].append(body)
            else:
                current = (kind, [body])
                out.append(current)
    return out


def to_html(text: str) -> str:
    """The whole step text as Qt rich text."""
    out = []
    for kind, lines in blocks(text):
        if kind == "ul":
            out.append("<ul>" + "".join(f"<li>{inline_html(i)}</li>" for i in lines) + "</ul>")
        else:
            out.append("<p>" + " ".join(inline_html(ln) for ln in lines) + "</p>")
    return "".join(out)


def to_plain(text: str) -> str:
    """The text without marks: for accessible descriptions and one-line summaries."""
    s = _CODE.sub(r"\1", text)
    s = _BOLD.sub(r"\1", s)
    s = _ITALIC.sub(r"\1", s)
    return re.sub(r"\s+", " ", s).strip()
