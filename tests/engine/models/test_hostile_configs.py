"""Every field of a model's config.json set to a hostile value: the folder is refused with
one sentence (ValueError/OSError) or opened sanely — never another exception, never a hang.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mha_gui.engine.models import describe_model, open_layer
from tests.engine.models.builders import SENTENCE, build_model, make_config

HOSTILE = [{}, [], None, "x", -1, 0, 1.5, True, 10**30, [1, 2], {"a": 1}, "1e999"]
FAMILIES = ["gpt2", "bert", "llama", "qwen2"]


def _cases():
    for family in FAMILIES:
        for key in sorted(make_config(family)):
            for value in HOSTILE:
                yield family, key, value
            yield family, key, "<deleted>"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_field_of_every_family_survives_every_hostile_value(tmp_path, family):
    folder = tmp_path / family
    build_model(folder, family)
    good = json.loads((folder / "config.json").read_text())
    crashed = []
    for fam, key, value in _cases():
        if fam != family:
            continue
        cfg = dict(good)
        if value == "<deleted>":
            cfg.pop(key, None)
        else:
            cfg[key] = value
        (folder / "config.json").write_text(json.dumps(cfg))
        try:
            describe_model(folder)
            session = open_layer(folder, 0, text=SENTENCE)
            assert all(np.isfinite(a).all() for a in session.params.as_dict().values())
        except (ValueError, OSError) as exc:
            message = str(exc)
            assert message and "\n" not in message.strip(), (key, value, message)
        except Exception as exc:  # the point of the test: nothing else may escape
            crashed.append(f"{key}={value!r}: {type(exc).__name__}: {exc}")
    assert crashed == []
