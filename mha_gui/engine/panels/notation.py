"""How a panel is named: its symbol in every notation, its title and its row's caption.

The window, the figures, LaTeX and the tooltips all name a matrix through `symbol`, so
S₁ on screen is S_{1} in LaTeX and S_1 in a copied matrix; K and V of query head i are
its group's K_g, V_g (GQA/MQA), and a caption says which heads share them.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.numbers import sub
from mha_gui.engine.panels.panel_kinds import KINDS, check_kind
from mha_gui.engine.panels.stages import K_ROT, Q_ROT, Stage, as_stage, plan_for


@dataclass(frozen=True)
class Symbol:
    """One matrix's name in every notation a consumer needs."""

    text: str  # plain, short: S_1, K_0, C_1 (tooltips, copied matrices, Σ_i C_i)
    pretty: str  # Unicode subscripts for figures: S₁
    html: str  # Qt rich text: S<sub>1</sub>
    latex: str  # amsmath: S_{1}


# The rotated projections' letters (Unicode with a combining tilde, LaTeX).
ROTATED = {"QR": (Q_ROT, r"\tilde{Q}"), "KR": (K_ROT, r"\tilde{K}")}

# Layer panels' titles, in Unicode so that plain and rich text show the same
# (`Concat(Z₀, …, Zₕ₋₁)`, as the stage formula reads).
LAYER_TITLES = {"X": "input X", "H": "H = Concat(Z₀, …, Zₕ₋₁)", "Y": "output Y"}


def symbol(kind: str, head: int | None, config: Config) -> Symbol:
    """The name of panel (kind, head); K and V of query head i are its group's K_g, V_g."""
    spec = check_kind(kind)
    if head is None or spec.per is None:
        return Symbol(kind, kind, kind, kind)
    if kind == "C":
        lo, hi = head * config.d_v, (head + 1) * config.d_v
        return Symbol(
            f"C_{head}",
            f"Z{sub(head)} W_O[{lo}:{hi},:]",
            f"Z<sub>{head}</sub>W<sub>O</sub>[{lo}:{hi},:]",
            rf"Z_{{{head}}} W_O[{lo}{{:}}{hi},:]",
        )
    index = config.kv_group(head) if spec.per == "group" else head
    letter, tex = ROTATED.get(kind, (kind, kind))
    return Symbol(
        f"{letter}_{index}",
        f"{letter}{sub(index)}",
        f"{letter}<sub>{index}</sub>",
        f"{tex}_{{{index}}}",
    )


def panel_title(kind: str, head: int | None, config: Config, html: bool = False) -> str:
    """The title over a panel: `head 1 · S₁` (a head's), `output Y` (the layer's)."""
    if head is None or KINDS[kind].per is None:
        return LAYER_TITLES.get(kind, kind)
    sym = symbol(kind, head, config)
    return f"head {head} · {sym.html if html else sym.pretty}"


def rope_note(config: Config) -> str:
    """What RoPE's captions add: which features pair up and by how much they turn."""
    scaled = " (llama3-scaled)" if config.rope_scaling else ""
    return (
        f"pairs (j, j+{config.d_k // 2}) turn by t·θ^(−2j/{config.d_k}), "
        f"θ = {config.rope_theta:g}{scaled}"
    )


def caption(stage: Stage | int | str, kind: str, config: Config) -> str:
    """A row's caption adapted to the config (GQA's shared K/V heads, biases)."""
    s = as_stage(stage)
    text = next(r.caption for r in plan_for(s, config).rows if r.kind == kind)
    if kind in ROTATED:
        text += f" · {rope_note(config)}"
    if kind in ("K", "V", "KR") and config.variant != "MHA":
        letter = kind[0]
        text = text.replace(f"{letter}_i", f"{letter}_g").replace("W_i", "W_g")
        text = text.replace(f"{letter}\u0303_i", f"{letter}\u0303_g")
        text += f" · {_sharing(config, symbol(kind, 0, config).text[:-2])}"
    if kind == "C" and config.bias:
        text += " + b_O"
    return text


def _sharing(c: Config, sym: str) -> str:
    """Which query heads share each K/V head: `heads 0–3 share K_0, heads 4–7 share K_1`."""
    per = c.h // c.h_kv
    if c.h_kv == 1:
        return f"all {c.h} heads share {sym}_0"
    if c.h_kv > 3:
        return f"each {sym}_g is shared by {per} heads: head i uses g = i // {per}"
    return ", ".join(f"heads {g * per}–{(g + 1) * per - 1} share {sym}_{g}" for g in range(c.h_kv))


# ---- typesetting formula text -------------------------------------------------------
# The stages write formulas once, in plain Unicode with TeX-like scripts: `W_i^Q`,
# `K_iᵀ`, `√d_k`, `ℝ^(n×d_model)`, `Z_{h−1}`, `e^{S_1[0,j]}`. `rich_text` typesets them
# for Qt labels and figures (HTML <sub>/<sup>), `unicode_text` for places that show only
# plain text (menus, dock titles, window titles).

# A script: `_{…}` / `^{…}` / `^(…)` (the parentheses are the shape's, they are dropped),
# or a run of letters and digits after `_` / `^`.
_SCRIPT = re.compile(
    r"([_^])(?:\{([^{}]*)\}|\(([^()]*)\)"
    # an exponent that is an indexed entry (`e^S_1[2,j]`) or a signed decimal (`e^−0.7`)
    r"|(?<=\^)([A-Za-z]+_[A-Za-z0-9]+\[[^\[\]]*\]|[−-]?\d+(?:\.\d+)?(?![A-Za-z]))"
    r"|([A-Za-z0-9]+))"
)


def _scripts(text: str, depth: int) -> str:
    def one(m: re.Match) -> str:
        body = next(g for g in m.groups()[1:] if g is not None)
        inner = _scripts(body, depth + 1)
        if depth:  # Qt's rich text cannot raise or lower text twice: a script inside a
            return f"<small>{inner}</small>"  # script is set smaller on its baseline
        tag = "sub" if m.group(1) == "_" else "sup"
        return f"<{tag}>{inner}</{tag}>"

    return _SCRIPT.sub(one, text)


# A token quoted in a text ("snake_case", “x^2”) is the token as typed, never a formula.
_QUOTED = re.compile(r'("[^"\n]*"|“[^”\n]*”)')


def rich_text(text: str) -> str:
    """Formula text as Qt rich text: `W_i^Q` → W<sub>i</sub><sup>Q</sup>, `Z_{h−1}` →
    Z<sub>h−1</sub>, `ℝ^(n×d_model)` → ℝ<sup>n×d<small>model</small></sup> (Qt cannot nest
    a subscript in a superscript, so the inner script is smaller on the outer's line and
    `model` never falls under ℝ). Everything else is HTML-escaped, so `<s>` stays text,
    and text in double quotes (a token: "snake_case") keeps its _ and ^."""
    parts = _QUOTED.split(text)
    return "".join(
        html.escape(part, quote=False) if k % 2 else _scripts(html.escape(part, quote=False), 0)
        for k, part in enumerate(parts)
    )


_UNICODE_SUB = dict(
    zip("0123456789+−-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)
_UNICODE_SUP = dict(
    zip(
        "0123456789+−-=()ABDEGHIJKLMNOPRTUVWabcdefghijklmnoprstuvwxyz",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ",
        strict=True,
    )
)


def unicode_text(text: str) -> str:
    """Formula text for plain-text places (menus, dock titles): every script Unicode has
    characters for is set in them (`W_0^K` → W₀ᴷ, `Z_{h−1}` → Zₕ₋₁); a script it has no
    characters for keeps its mark (`W^Q`: there is no superscript Q), never a wrong letter."""

    def one(m: re.Match) -> str:
        body = next(g for g in m.groups()[1:] if g is not None)
        table = _UNICODE_SUB if m.group(1) == "_" else _UNICODE_SUP
        if all(ch in table for ch in body):
            return "".join(table[ch] for ch in body)
        return m.group(0)

    return _SCRIPT.sub(one, text)
