"""The neuron figure from the command line (export/figures/neuron.py): without --key it
takes the strongest key, a --key out of range writes nothing."""

from __future__ import annotations

from mha_gui.cli import main
from mha_gui.engine import load_preset
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.export.figures.neuron import NeuronDrawing


def test_cli_without_key_takes_the_strongest(tmp_path, capsys):
    out = tmp_path / "n.png"
    code = main(["export", "--preset", "gqa", "--view", "neuron", "--head", "5", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert out.stat().st_size > 10_000
    d = NeuronDrawing(SessionData(load_preset("gqa")), 5, 0, None)
    assert not d.neuron.chosen and d.neuron.group == 1


def test_cli_key_out_of_range_writes_nothing(tmp_path, capsys):
    out = tmp_path / "n.png"
    code = main(["export", "--preset", "toy", "--view", "neuron", "--key", "4", "--out", str(out)])
    assert code == 2 and "--key 4 is out of range" in capsys.readouterr().err
    assert not out.exists()
