"""Each head of a model's grid labelled by its role: where each role is measured, the
built-in model's four roles, and the labels, counts and notes the model view shows."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.engine.models import attention_maps
from mha_gui.engine.models.builtin import builtin_model_path
from mha_gui.engine.teaching import classroom, model_roles
from mha_gui.engine.teaching.head_roles import head_roles, role_scores, sentence_scores
from mha_gui.engine.teaching.model_roles import (
    MIN_REPEATED_ROWS,
    GridRoles,
    grid_roles,
    is_builtin,
    repeated_rows,
)
from tests.engine.models.builders import SENTENCE, build_model

AGREEMENT = "the cat near the dogs runs ."
REPEATED = "tom sings near the cats . tom sings near the cats ."


@pytest.fixture(scope="module")
def builtin():
    return builtin_model_path()


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("roles") / "gpt2"
    build_model(folder, "gpt2")
    return folder


def test_repeated_rows_count_the_rows_an_induction_score_averages():
    assert repeated_rows([1, 2, 3, 4]) == 0
    assert repeated_rows([1, 5, 2, 5]) == 1  # one repeat: one row, noise rather than a role
    assert repeated_rows([1, 2, 3, 1, 2, 3]) == 3


def test_a_text_with_few_repeats_takes_duplicate_and_induction_from_the_probe(builtin):
    maps = attention_maps(builtin, text=AGREEMENT)
    assert repeated_rows(maps.token_ids) < MIN_REPEATED_ROWS
    roles = grid_roles(maps, builtin, grammar=False)
    assert roles.repeats_on == "probe" and not roles.grammar
    own = role_scores(maps.weights, maps.token_ids)
    probe = head_roles(builtin, probe="repeated")  # the same probe: seed 0, 20 tokens twice
    for role in ("previous", "first", "self"):
        np.testing.assert_array_equal(roles.roles.scores[role], own[role])
    for role in ("duplicate", "induction"):
        np.testing.assert_allclose(roles.roles.scores[role], probe.scores[role], atol=1e-6)
    assert "repeated-tokens probe (this text repeats too few tokens)" in roles.note()
    assert roles.measured == ("previous", "induction", "first", "self", "duplicate")


def test_a_repeated_text_is_measured_on_itself(builtin):
    maps = attention_maps(builtin, text=REPEATED)
    roles = grid_roles(maps, builtin, grammar=False)
    assert roles.repeats_on == "text"
    own = role_scores(maps.weights, maps.token_ids)
    for role, values in own.items():
        np.testing.assert_array_equal(roles.roles.scores[role], values)
    assert "duplicate and induction on this text" in roles.note()


def test_the_built_in_model_shows_its_four_roles_as_its_card_says(builtin):
    assert is_builtin(builtin) and is_builtin(str(builtin))
    maps = attention_maps(builtin, text=AGREEMENT)
    roles = grid_roles(maps, builtin)
    assert roles.grammar
    assert roles.measured[:4] == ("previous", "induction", "agreement", "antecedent")
    # the card's heads: L0H0 previous, L1H0 induction, L2H1 agreement, L2H2 antecedent
    assert roles.label(0, 0).startswith("prev ") and roles.score("previous", 0, 0) >= 0.8
    assert roles.label(1, 0).startswith("induction ") and roles.score("induction", 1, 0) >= 0.6
    assert roles.label(2, 1) == "agreement 1.00"
    assert roles.label(2, 2) == "antecedent 1.00"
    assert roles.label(2, 2, "agreement") == "agreement 0.93"  # the card's stand-in head
    assert roles.label(0, 0, "agreement") == ""  # below the threshold: no chip
    assert roles.count("agreement") == 2 and roles.count("antecedent") == 1
    assert roles.summary(2, 1).startswith("agreement 1.00 · ")
    assert "agreement and antecedent on 100 classroom sentences each" in roles.note()
    # the scores are those of the classroom evaluation sentences, 100 of each
    whole = sentence_scores(builtin, classroom.agreement_sentences(100, 0))
    np.testing.assert_allclose(roles.roles.scores["agreement"], whole, atol=1e-9)


def test_grammar_scores_are_measured_once_per_model_file(builtin, monkeypatch):
    maps = attention_maps(builtin, text=AGREEMENT)
    grid_roles(maps, builtin)  # measured (or cached already)
    calls = []
    monkeypatch.setattr(model_roles, "sentence_scores", lambda *a: calls.append(a))
    steps = []
    again = grid_roles(maps, builtin, progress=lambda done, total: steps.append((done, total)))
    assert calls == [] and again.label(2, 1) == "agreement 1.00"
    assert steps == [(1, 1)]  # only the probe was left to do


def test_progress_counts_the_steps_and_raising_from_it_stops_the_work(builtin, monkeypatch):
    monkeypatch.setattr(model_roles, "_grammar_cache", {})
    maps = attention_maps(builtin, text=AGREEMENT)
    seen = []

    class Stop(Exception):
        pass

    def progress(done, total):
        seen.append((done, total))
        if done == 3:
            raise Stop

    with pytest.raises(Stop):
        grid_roles(maps, builtin, progress=progress)
    assert seen == [(1, 21), (2, 21), (3, 21)]  # the probe, then 10 sentences a step
    assert model_roles._grammar_cache == {}  # nothing half-measured is kept


def test_another_model_gets_the_five_roles_and_a_probe_that_fits_its_positions(gpt2):
    maps = attention_maps(gpt2, text=SENTENCE)
    roles = grid_roles(maps, gpt2)  # 40 positions: the probe's span shrinks to fit
    assert not roles.grammar and "agreement" not in roles.measured
    assert roles.roles.scores["induction"].shape == (3, 4)
    assert not np.isnan(roles.roles.scores["induction"]).any()
    assert isinstance(roles, GridRoles) and "classroom" not in roles.note()
