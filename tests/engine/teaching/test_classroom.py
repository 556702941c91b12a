"""The classroom language: deterministic, grammatical where it says so, and its scoring
positions point at the tokens its docstrings name (checked through the tokenizer)."""

from __future__ import annotations

import itertools
import json

import pytest

from mha_gui.engine.models.tokens import TokenizerFile
from mha_gui.engine.teaching import classroom as c

SINGULAR = {s for s, _ in c.NOUNS}
PLURAL = {p for _, p in c.NOUNS}
VERB_SG = {s for s, _ in c.VERBS}
VERB_PL = {p for _, p in c.VERBS}


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    c.build_tokenizer().save(str(path))
    return TokenizerFile(path)


def test_the_vocabulary_has_each_word_once_and_the_special_tokens_first():
    vocab = c.vocabulary()
    assert vocab[:2] == (c.UNK, c.BOS)
    assert len(set(vocab)) == len(vocab)


def test_the_apps_tokenizer_reader_gives_bos_then_one_token_per_word(tokenizer):
    ids, labels = tokenizer.encode("Mary met Tom at the park. She is mary")
    vocab = c.vocabulary()
    assert labels == ["<bos>", "mary", "met", "tom", "at", "the", "park", ".", "she", "is", "mary"]
    assert ids == [vocab.index(w) for w in labels]
    ids, labels = tokenizer.encode("the zebra runs")
    assert labels == ["<bos>", "the", "<unk>", "runs"] and ids[2] == 0
    data = json.loads(c.build_tokenizer().to_str())
    assert data["model"]["type"] == "WordLevel"


def test_the_text_is_the_same_for_a_seed_and_differs_between_seeds():
    def text(seed):
        stream = c.training_segments(seed)
        return [next(stream).text for _ in range(50)]

    a = text(3)
    assert a == text(3)
    assert a != text(4)
    assert c.agreement_sentences(5, 1) == c.agreement_sentences(5, 1)


def test_every_training_word_is_in_the_vocabulary():
    known = set(c.words())
    for seg in itertools.islice(c.training_segments(0), 2000):
        assert set(seg.words) <= known
        for q, k in seg.pairs:
            assert 0 <= k < q < len(seg.words)


def check_agreement(s):
    ((q, k),) = s.pairs
    verb = s.tokens[q + 1]
    assert s.tokens[q] in SINGULAR | PLURAL
    assert (s.tokens[k] in SINGULAR and verb in VERB_SG) or (
        s.tokens[k] in PLURAL and verb in VERB_PL
    )
    assert k < q and s.tokens[k + 1 : q].count("the") == 1  # one noun phrase in between


def check_antecedent(s):
    ((q, k),) = s.pairs
    assert s.tokens[q] == "is" and s.tokens[q + 1] == s.tokens[k]
    assert s.tokens[k] in c.PRONOUN[s.tokens[q - 1]]
    names = [t for t in s.tokens[: q - 1] if t in c.FEMALE + c.MALE]
    assert len(names) == 2 and sum(n in c.PRONOUN[s.tokens[q - 1]] for n in names) == 1


def check_induction(s):
    for q, k in s.pairs:
        earlier = [j for j in range(q - 1) if s.tokens[j] == s.tokens[q]]
        assert earlier and k == earlier[0] + 1


def check_previous(s):
    assert all(k == q - 1 for q, k in s.pairs) and s.pairs[0] == (1, 0)


CHECKS = {
    "agreement": check_agreement,
    "antecedent": check_antecedent,
    "induction": check_induction,
    "previous": check_previous,
}


@pytest.mark.parametrize("role", sorted(CHECKS))
def test_evaluation_sentences_point_at_what_their_role_needs(role, tokenizer):
    for s in c.EVALUATIONS[role](100, 0):
        assert s.role == role and s.pairs
        CHECKS[role](s)
        assert tokenizer.encode(s.text)[1] == list(s.tokens)


def test_agreement_test_sentences_always_distract():
    for s in c.agreement_sentences(100, 0):
        ((q, k),) = s.pairs
        assert (s.tokens[q] in PLURAL) != (s.tokens[k] in PLURAL)


def test_ready_sentences_are_good_examples_of_their_roles(tokenizer):
    ready = c.ready_sentences()
    assert set(ready) == set(c.ROLES)
    for role, items in ready.items():
        assert len(items) >= 2
        for s in items:
            CHECKS[role](s)
            assert tokenizer.encode(s.text)[1] == list(s.tokens)
