"""The head contributions figure from the command line (export/figures/contributions.py):
switched-off heads are said and drawn, a head that does not exist is refused."""

import pytest

from mha_gui.cli import main


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_export_view_contributions_with_ablation(capsys, tmp_path, suffix):
    out = tmp_path / f"c{suffix}"
    code = main(
        [
            "export", "--preset", "gqa", "--view", "contributions", "--ablate", "1,3",
            "--out", str(out),
        ]
    )  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 0, err
    assert out.stat().st_size > 1000
    if suffix == ".svg":
        svg = out.read_text()
        assert "heads 1, 3 off" in svg and "head 1 · off" in svg


def test_export_contributions_refuses_a_bad_head(capsys, tmp_path):
    out = tmp_path / "c.png"
    code = main(
        ["export", "--preset", "gqa", "--view", "contributions", "--ablate", "9", "--out", str(out)]
    )
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("mha-gui: error:") and err.count("\n") == 1
    assert not out.exists()
