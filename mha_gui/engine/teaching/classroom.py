"""The "classroom language": a tiny grammar whose sentences each need one attention head.

The built-in model (resources/models/classroom/) was trained on this text, so that its
heads show the roles a textbook names, on sentences a class can read:

- previous token and first token: any text (plain sentences make these patterns grow);
- induction: a span of words repeated ("... tom sings near the cats ... tom sings near");
- subject–verb agreement across a distracting noun: "the cat near the dogs runs" — at
  "dogs" (the token just before the verb: the model is causal, so that is where the verb's
  form is chosen) the number of the subject "cat" must be looked up;
- a pronoun's antecedent of the right gender: "mary met tom at the park . she is mary" — at
  "is" the model must name the antecedent, the one name of the pronoun's gender.

Everything is deterministic from a seed (Python's `random.Random`, no global state), pure
Python, no Qt and no torch. Positions in a `RoleSentence` index the token sequence the
model sees, which starts with the first token `<bos>` that the tokenizer adds.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

UNK, BOS = "<unk>", "<bos>"
SPECIAL = (UNK, BOS)

FEMALE = ("mary", "anna", "lisa", "emma", "sara", "kate")
MALE = ("tom", "john", "paul", "mark", "jack", "bob")
NOUNS = (  # (singular, plural)
    ("cat", "cats"),
    ("dog", "dogs"),
    ("bird", "birds"),
    ("frog", "frogs"),
    ("horse", "horses"),
    ("boy", "boys"),
    ("girl", "girls"),
    ("duck", "ducks"),
)
VERBS = (  # (agrees with a singular subject, with a plural one)
    ("runs", "run"),
    ("sits", "sit"),
    ("sleeps", "sleep"),
    ("jumps", "jump"),
    ("sings", "sing"),
    ("swims", "swim"),
)
MEETS = ("met", "saw", "helped", "called")
PLACES = ("park", "school", "garden", "river", "house", "shop")
NEAR = ("near", "with", "behind", "beside")
ADJECTIVES = ("big", "small", "old", "young", "happy", "little")
FUNCTION = ("the", "at", "in", "is", "she", "he", "and", "then", ".")
PRONOUN = {"she": FEMALE, "he": MALE}

ROLES = ("previous", "induction", "agreement", "antecedent")


def words() -> tuple[str, ...]:
    """Every word of the language (no special tokens), in the tokenizer's id order."""
    out: list[str] = list(FUNCTION)
    out += FEMALE + MALE
    for pair in NOUNS + VERBS:
        out += pair
    out += MEETS + PLACES + NEAR + ADJECTIVES
    return tuple(out)


def vocabulary() -> tuple[str, ...]:
    """Token strings by id: the special tokens first (`<unk>` = 0, `<bos>` = 1)."""
    return SPECIAL + words()


def build_tokenizer():
    """A word-level `tokenizers.Tokenizer`: lower-cased, split on whitespace and
    punctuation, unknown words → `<unk>`, and `<bos>` put first on every text (a fixed
    first position that heads can rest on, as GPT-2 rests on its first token)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(vocabulary())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(list(SPECIAL))
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])]
    )
    return tok


# ------------------------------------------------------------------ sentences -----
@dataclass(frozen=True)
class Segment:
    """Some words of training text and the attention pairs its role needs.

    `pairs` are (query, key) indices into `words`: the key the role's head should read
    from the query position (several keys of one query appear as several pairs).
    """

    words: tuple[str, ...]
    role: str  # "plain", "agreement", "antecedent" or "induction"
    pairs: tuple[tuple[int, int], ...] = ()

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _place(rng: random.Random) -> list[str]:
    return [rng.choice(("at", "in")), "the", rng.choice(PLACES)]


def _noun_phrase(rng: random.Random, plural: bool) -> list[str]:
    phrase = ["the"]
    if rng.random() < 0.4:
        phrase.append(rng.choice(ADJECTIVES))
    phrase.append(rng.choice(NOUNS)[plural])
    return phrase


def plain(rng: random.Random) -> Segment:
    """A simple sentence: "the old dogs sleep .", "anna sings in the garden ."."""
    kind = rng.random()
    if kind < 0.45:
        plural = rng.random() < 0.5
        out = _noun_phrase(rng, plural) + [rng.choice(VERBS)[plural]]
    elif kind < 0.8:
        out = [rng.choice(FEMALE + MALE), rng.choice(VERBS)[0]]
    else:
        out = [rng.choice(("she", "he")), rng.choice(VERBS)[0]]
    if rng.random() < 0.5:
        out += _place(rng)
    return Segment(tuple(out + ["."]), "plain")


def agreement(rng: random.Random, distract: bool | None = None) -> Segment:
    """ "the cat near the dogs runs ." — pair: (the noun before the verb, the subject).

    `distract=True` gives the second noun the other number (the test sentences); by
    default it does half of the time, so the nearer noun alone never tells the form.
    """
    plural = rng.random() < 0.5
    if distract is None:
        distract = rng.random() < 0.5
    subject = _noun_phrase(rng, plural)
    other = _noun_phrase(rng, plural != distract)
    out = subject + [rng.choice(NEAR)] + other
    pair = (len(out) - 1, len(subject) - 1)
    out.append(rng.choice(VERBS)[plural])
    if rng.random() < 0.3:
        out += _place(rng)
    return Segment(tuple(out + ["."]), "agreement", (pair,))


def antecedent(rng: random.Random) -> Segment:
    """ "mary met tom at the park . she is mary ." — pair: ("is", the antecedent).

    One woman and one man, in either order, so only the pronoun's gender picks the name.
    """
    woman, man = rng.choice(FEMALE), rng.choice(MALE)
    first, second = (woman, man) if rng.random() < 0.5 else (man, woman)
    if rng.random() < 0.75:
        out = [first, rng.choice(MEETS), second]
    else:
        out = [first, "and", second, rng.choice(VERBS)[1]]
    out += _place(rng) + ["."]
    pronoun = rng.choice(("she", "he"))
    name = woman if pronoun == "she" else man
    pair = (len(out) + 1, out.index(name))
    out += [pronoun, "is", name, "."]
    return Segment(tuple(out), "antecedent", (pair,))


def repeated(rng: random.Random, span: int | None = None) -> Segment:
    """`span` distinct random words of the whole vocabulary, then the same words again.

    Pairs: every token of the second copy with the token after its first occurrence —
    what an induction head reads to predict the next word.
    """
    vocab = words()
    span = span or rng.randint(4, 24)
    chosen = rng.sample(vocab, span)
    pairs = tuple((span + m, m + 1) for m in range(span))
    return Segment(tuple(chosen + chosen), "induction", pairs)


MIX = (("plain", 0.3), ("agreement", 0.25), ("antecedent", 0.25), ("induction", 0.2))
_MAKERS = {"plain": plain, "agreement": agreement, "antecedent": antecedent, "induction": repeated}


def training_segments(seed: int, mix=MIX) -> Iterator[Segment]:
    """An endless stream of training segments drawn with the weights `mix` (role, weight)."""
    rng = random.Random(seed)
    roles = [r for r, _ in mix]
    weights = [w for _, w in mix]
    while True:
        yield _MAKERS[rng.choices(roles, weights)[0]](rng)


# --------------------------------------------------------------- evaluation -------
@dataclass(frozen=True)
class RoleSentence:
    """One evaluation text and the (query, key) token positions its role's head reads.

    Positions index `tokens`, the sequence the model sees: `<bos>` first, then the words.
    """

    role: str
    text: str
    tokens: tuple[str, ...]
    pairs: tuple[tuple[int, int], ...]


def _as_sentence(segment: Segment, role: str, pairs=None) -> RoleSentence:
    pairs = segment.pairs if pairs is None else pairs
    return RoleSentence(
        role,
        segment.text,
        (BOS, *segment.words),
        tuple((q + 1, k + 1) for q, k in pairs),
    )


def agreement_sentences(n: int = 100, seed: int = 0) -> list[RoleSentence]:
    """Agreement sentences whose second noun always has the other number (distracting)."""
    rng = random.Random(f"agreement-{seed}")
    return [_as_sentence(agreement(rng, distract=True), "agreement") for _ in range(n)]


def antecedent_sentences(n: int = 100, seed: int = 0) -> list[RoleSentence]:
    """Two names of different genders, then "she/he is" — the antecedent is the key."""
    rng = random.Random(f"antecedent-{seed}")
    return [_as_sentence(antecedent(rng), "antecedent") for _ in range(n)]


def _repeat_pairs(words_: list[str]) -> list[tuple[int, int]]:
    """(query, key) pairs of a text made of one span twice: each second-copy word with the
    word after its occurrence in the first copy, where that occurrence is unique."""
    size = len(words_) // 2
    first = words_[:size]
    return [(size + m, m + 1) for m in range(size) if first.count(words_[size + m]) == 1]


def induction_sentences(n: int = 100, seed: int = 0, span: int = 8) -> list[RoleSentence]:
    """A grammatical sentence or two repeated once: the second copy's tokens read the
    token after their first occurrence (pairs only where that occurrence is unique)."""
    rng = random.Random(f"induction-{seed}")
    out = []
    while len(out) < n:
        first = list(plain(rng).words)
        while len(first) < span:
            first += plain(rng).words
        words_ = first + first
        out.append(
            _as_sentence(Segment(tuple(words_), "induction"), "induction", _repeat_pairs(words_))
        )
    return out


def previous_sentences(n: int = 100, seed: int = 0) -> list[RoleSentence]:
    """Plain sentences; every token after the first reads the token before it."""
    rng = random.Random(f"previous-{seed}")
    out = []
    for _ in range(n):
        seg = Segment(plain(rng).words + plain(rng).words, "plain")
        # +1 for <bos>: word m sits at position m+1, its previous token at m (<bos> for m=0)
        pairs = tuple((m, m - 1) for m in range(len(seg.words)))
        out.append(_as_sentence(seg, "previous", pairs))
    return out


EVALUATIONS = {
    "previous": previous_sentences,
    "induction": induction_sentences,
    "agreement": agreement_sentences,
    "antecedent": antecedent_sentences,
}


def ready_sentences() -> dict[str, tuple[RoleSentence, ...]]:
    """A few good example sentences per role (for a dialog's "try one" list)."""

    def fixed(role: str, words_: str, pairs) -> RoleSentence:
        return _as_sentence(Segment(tuple(words_.split()), role), role, pairs)

    def repeat(words_: str) -> RoleSentence:
        span = words_.split()
        return fixed("induction", " ".join(span + span), _repeat_pairs(span + span))

    return {
        "previous": (
            fixed(
                "previous", "the small cat sleeps in the house .", [(m, m - 1) for m in range(8)]
            ),
            fixed("previous", "anna sings at the river .", [(m, m - 1) for m in range(6)]),
        ),
        "induction": (
            repeat("tom sings near the cats ."),
            repeat("frog park she happy swims met ."),
        ),
        "agreement": (
            fixed("agreement", "the cat near the dogs runs .", [(4, 1)]),
            fixed("agreement", "the birds behind the old horse sing .", [(5, 1)]),
            fixed("agreement", "the little girl with the boys jumps .", [(5, 2)]),
        ),
        "antecedent": (
            fixed("antecedent", "mary met tom at the park . she is mary .", [(8, 0)]),
            fixed("antecedent", "john saw kate in the garden . he is john .", [(8, 0)]),
            fixed("antecedent", "paul and lisa sing at the school . she is lisa .", [(9, 2)]),
        ),
    }
