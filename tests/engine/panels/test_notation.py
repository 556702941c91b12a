"""The one typesetter of formula text (engine/panels/notation.py): rich text for Qt labels and
figures, Unicode for menus and dock titles."""

import pytest

from mha_gui.engine import load_preset
from mha_gui.engine.panels.notation import LAYER_TITLES, rich_text, unicode_text
from mha_gui.engine.panels.stages import STAGES, formula_for


@pytest.mark.parametrize(
    "text, html",
    [
        (
            "A_i = softmax(Q_i K_iᵀ / √d_k)",
            "A<sub>i</sub> = softmax(Q<sub>i</sub> K<sub>i</sub>ᵀ / √d<sub>k</sub>)",
        ),
        (
            "W_0^Q (d_model × d_k = 4 × 2)",
            "W<sub>0</sub><sup>Q</sup> (d<sub>model</sub> × d<sub>k</sub> = 4 × 2)",
        ),
        # `model` stays in the superscript (smaller), never a subscript of ℝ
        ("X ∈ ℝ^(n×d_model)", "X ∈ ℝ<sup>n×d<small>model</small></sup>"),
        ("H = Concat(Z_0, …, Z_{h−1})", "H = Concat(Z<sub>0</sub>, …, Z<sub>h−1</sub>)"),
        # the answer key's working: a decimal exponent and an indexed one, whole
        (
            "e^4.243 / Σ_j e^S_1[0,j]",
            "e<sup>4.243</sup> / Σ<sub>j</sub> e<sup>S<small>1</small>[0,j]</sup>",
        ),
        ("10^{−5}", "10<sup>−5</sup>"),
        ("<s> & co", "&lt;s&gt; &amp; co"),
    ],
)
def test_rich_text(text, html):
    assert rich_text(text) == html


def test_unicode_text_sets_what_unicode_has_and_keeps_the_rest():
    assert unicode_text("H = Concat(Z_0, …, Z_{h−1})") == "H = Concat(Z₀, …, Zₕ₋₁)"
    assert unicode_text("W^K") == "Wᴷ" and unicode_text("W_0^V") == "W₀ⱽ"
    assert unicode_text("W^Q") == "W^Q"  # no superscript Q exists: never a wrong letter
    assert unicode_text("A_1[cat, the]") == "A₁[cat, the]"


def test_every_stage_formula_typesets_without_a_stray_mark():
    for preset in ("toy", "causal-6x16", "gqa"):
        c = load_preset(preset).config
        for s in STAGES:
            html = rich_text(formula_for(s, c))
            assert "_" not in html and "^" not in html, (preset, s.name, html)
    assert "_" not in LAYER_TITLES["H"] and "Zₕ₋₁" in LAYER_TITLES["H"]


def test_a_quoted_token_keeps_its_underscores_and_carets():
    from mha_gui.engine.panels.notation import rich_text

    text = rich_text('token "snake_case", “x^2” and W_0^Q')
    assert '"snake_case"' in text and "“x^2”" in text
    assert "W<sub>0</sub><sup>Q</sup>" in text
