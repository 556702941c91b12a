"""User text (token labels, file names) inside Qt rich text, shown literally.

Qt guesses whether a label, tooltip or pyqtgraph title is HTML; a token such as `<s>` is
then read as a strike-through tag and disappears. Everything a user typed goes through
`esc` before it is put into rich text; plain texts that carry user text and end up in a
tooltip go through `tooltip_html`.
"""

from __future__ import annotations

import html


def esc(text) -> str:
    """`text` escaped for Qt rich text (`<s>` → `&lt;s&gt;`, quotes kept as they are)."""
    return html.escape(str(text), quote=False)


def tooltip_html(text: str) -> str:
    """A plain (possibly multi-line) text as rich text that Qt shows exactly as written."""
    if not text:
        return ""
    return "<div style='white-space:pre'>" + esc(text) + "</div>"
