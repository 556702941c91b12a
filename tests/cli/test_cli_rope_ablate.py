"""`export --ablate I,J` for every format and `--rope` / `--rope-theta` on every source."""

import dataclasses
import json

import numpy as np
import pytest

from mha_gui.cli import EXPORT_SUFFIXES
from mha_gui.engine import load_preset, load_session
from tests.cli.cli_helpers import run


@pytest.mark.parametrize("suffix", EXPORT_SUFFIXES)
def test_ablate_works_for_every_format(capsys, tmp_path, suffix):
    path = tmp_path / f"a{suffix}"
    code, out, err = run(
        capsys,
        "export",
        "--preset",
        "gqa",
        "--stage",
        "output",
        "--ablate",
        "1,3",
        "--out",
        str(path),
    )
    assert code == 0, err
    assert path.stat().st_size > 0 and out.strip() == f"wrote {path}"


def test_ablated_npz_and_session_hold_the_ablated_numbers(capsys, tmp_path):
    npz, js = tmp_path / "a.npz", tmp_path / "a.json"
    for path in (npz, js):
        assert (
            run(capsys, "export", "--preset", "gqa", "--ablate", "3,1", "--out", str(path))[0] == 0
        )
    base = load_preset("gqa")
    full = base.run()
    with np.load(npz, allow_pickle=False) as z:
        assert z["ablate"].tolist() == [1, 3]
        assert not z["heads"][[1, 3]].any()
        np.testing.assert_array_equal(z["weights"], full.weights)
        kept = full.contributions[[0, 2, 4, 5, 6, 7]].sum(axis=0)  # h = 8
        np.testing.assert_allclose(z["output"], kept, atol=1e-12)
    assert json.loads(js.read_text())["config"]["ablate"] == [1, 3]
    assert load_session(js).config.ablate == (1, 3)


def test_rope_flags_on_presets_and_sessions(capsys, tmp_path):
    path = tmp_path / "r.npz"
    assert run(capsys, "export", "--preset", "toy", "--rope", "--out", str(path))[0] == 0
    base = load_preset("toy")
    rotated = dataclasses.replace(base, config=base.config.with_changes(rope=True)).run()
    with np.load(path, allow_pickle=False) as z:
        assert float(z["rope_theta"]) == 10000.0
        np.testing.assert_array_equal(z["Q_rot"], rotated.q_rot)
        np.testing.assert_array_equal(z["output"], rotated.output)
    session = tmp_path / "r.json"
    argv = ["export", "--preset", "toy", "--rope-theta", "50", "--out", str(session)]
    assert run(capsys, *argv)[0] == 0
    cfg = load_session(session).config
    assert cfg.rope and cfg.rope_theta == 50.0
    # --rope on a session that already has RoPE keeps its θ
    again = tmp_path / "again.json"
    argv = ["export", "--session", str(session), "--rope", "--out", str(again)]
    assert run(capsys, *argv)[0] == 0
    assert load_session(again).config.rope_theta == 50.0
    code, out, _ = run(capsys, "info", "--preset", "toy", "--rope-theta", "100")
    assert code == 0 and "RoPE θ=100" in out.splitlines()[1]


def test_info_names_ablated_heads(capsys, tmp_path):
    path = tmp_path / "a.json"
    assert run(capsys, "export", "--preset", "gqa", "--ablate", "1,3", "--out", str(path))[0] == 0
    code, out, _ = run(capsys, "info", "--session", str(path))
    assert code == 0 and "heads 1,3 off" in out.splitlines()[1]


@pytest.mark.parametrize("suffix", EXPORT_SUFFIXES)
@pytest.mark.parametrize(
    "flags, words",
    [
        (["--ablate", "2,8"], "--ablate 8 is out of range: this layer has heads 0..7"),
        (["--ablate", "1,x"], "'1,x' is not a comma-separated list of head numbers"),
        (["--ablate", "-1"], "is not a comma-separated list"),
        (["--ablate", ""], "is not a comma-separated list"),
        (["--ablate", "1.5"], "is not a comma-separated list"),
        (["--rope-theta", "abc"], "'abc' is not a number"),
        (["--rope-theta", "1"], "rope_theta must be greater than 1"),
    ],
)
def test_bad_flags_exit_2_with_one_line_and_no_file(capsys, tmp_path, suffix, flags, words):
    argv = ["export", "--preset", "gqa", *flags, "--out", str(tmp_path / f"x{suffix}")]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("mha-gui: error: ") and err.count("\n") == 1, err
    assert words in err
    assert list(tmp_path.iterdir()) == []


def test_rope_on_an_odd_head_width_is_refused(capsys, tmp_path):
    argv = ["export", "--preset", "random", "--d-model", "6", "--heads", "2", "--rope"]
    code, _, err = run(capsys, *argv, "--out", str(tmp_path / "x.npz"))
    assert code == 2 and "d_k must be even, got d_k=3" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".tex", ".svg"])
def test_ablation_changes_what_is_exported(capsys, tmp_path, suffix):
    texts = []
    for extra in ([], ["--ablate", "0"]):
        path = tmp_path / f"{len(extra)}{suffix}"
        argv = ["export", "--preset", "toy", "--stage", "output", *extra, "--out", str(path)]
        assert run(capsys, *argv)[0] == 0
        texts.append(path.read_text())
    assert texts[0] != texts[1]
