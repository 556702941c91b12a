"""A model card's title and first line, as the Open model list shows them."""

from __future__ import annotations

from mha_gui.engine.models.builtin import builtin_model_path
from mha_gui.engine.models.card import MAX_LINE, read_card


def test_the_built_in_card():
    card = read_card(builtin_model_path())
    assert card.title == "classroom — a tiny GPT-2 whose heads show the textbook's roles"
    assert card.sentence.startswith("The model that ships with mha-gui (--model builtin): a GPT-2")
    assert "d_model 128" in card.sentence  # an underscore inside a word is not emphasis
    assert card.sentence.endswith("need one attention head.")
    assert len(card.line) <= MAX_LINE and card.line.endswith("…")
    assert card.sentence.startswith(card.line[:-1])


def test_front_matter_markdown_and_missing_cards(tmp_path):
    assert read_card(tmp_path) is None
    (tmp_path / "README.md").write_text(
        "---\nlicense: mit\n---\n\n# My *model*\n\nA [small](http://x) `gpt2` for _tests_. "
        "More text.\n\n## Use\n\nignored\n",
        encoding="utf-8",
    )
    card = read_card(tmp_path)
    assert (card.title, card.line) == ("My model", "A small gpt2 for tests.")
    (tmp_path / "README.md").write_bytes(b"\xff\xfe not utf-8")
    assert read_card(tmp_path) is None
