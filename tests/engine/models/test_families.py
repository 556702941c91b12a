"""The family registry: every list of supported models is derived from the architectures."""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_gui.cli import main
from mha_gui.engine.models import SUPPORTED
from mha_gui.engine.models.families import (
    ARCHITECTURES,
    FAMILIES,
    FAMILY_NAMES,
    family_titles,
    parse_config,
)
from tests.engine.models.builders import DEFAULTS, make_config


def test_every_model_type_of_every_architecture_is_supported_once():
    types = [t for arch in FAMILIES for t in arch.titles]
    assert len(types) == len(set(types))
    assert list(SUPPORTED) == types == list(ARCHITECTURES) == list(FAMILY_NAMES)
    for arch in FAMILIES:
        for model_type, title in arch.titles.items():
            assert ARCHITECTURES[model_type] is arch and FAMILY_NAMES[model_type] == title
    assert set(SUPPORTED) == set(DEFAULTS)  # the test checkpoints cover every family


def test_the_titles_read_as_a_sentence():
    titles = list(FAMILY_NAMES.values())
    assert family_titles() == ", ".join(titles[:-1]) + " or " + titles[-1]
    assert family_titles(", ") == ", ".join(titles)
    assert family_titles() == "GPT-2, BERT, Llama, Mistral or Qwen2"


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_each_family_parses_its_own_config(model_type):
    info = parse_config(make_config(model_type), Path("/m"), "tiny", True)
    assert info.family == model_type and info.family_name == FAMILY_NAMES[model_type]
    assert model_type in info.summary() or FAMILY_NAMES[model_type] in info.summary()


def test_an_unknown_family_is_refused_with_the_derived_list():
    with pytest.raises(ValueError) as err:
        parse_config({"model_type": "t5"}, Path("/m"), "t5", False)
    assert f"(supported: {', '.join(SUPPORTED)})" in str(err.value)


def test_the_command_line_names_every_family(capsys):
    with pytest.raises(SystemExit):
        main(["info", "--help"])
    assert f"options of --model ({family_titles(', ')})" in capsys.readouterr().out
