"""MHA / GQA / MQA side by side: the figure's numbers are the hand formulas, the widget
follows the configuration, and the command line writes the figure."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from mha_gui.cli import main
from mha_gui.document import Document
from mha_gui.engine import load_preset
from mha_gui.engine.stage_panels import SessionData
from mha_gui.views.docks.kv_cache.kv_cache_view import (
    KvCacheDrawing,
    KvCacheView,
    VariantRow,
    group_text,
    kv_cache_drawing,
)

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def test_the_figure_prints_the_hand_computed_numbers():
    s = load_preset("gqa")  # n 4, d_model 8, h 8, h_kv 2
    c = s.config
    d = kv_cache_drawing(SessionData(s))
    assert [v.h_kv for v in d.variants] == [8, 4, 2, 1]
    for v, cache, params in zip(d.variants, d.cache_text, d.params_text, strict=True):
        per_token = v.h_kv * (c.d_k + c.d_v)
        assert cache == f"{c.n * per_token:,} ({per_token:,} per token)"
        p = c.h * c.d_model * c.d_k + v.h_kv * c.d_model * (c.d_k + c.d_v)
        p += c.h * c.d_v * c.d_model
        assert params == f"{p:,}"
    assert [v.current for v in d.variants] == [False, False, True, False]
    tip = d.tooltip(VariantRow(2))
    assert "this layer" in tip and "heads 0–3 read K₀V₀, heads 4–7 read K₁V₁" in tip
    assert d.hit(d.width / 2, d.row_y(3) + 5) == VariantRow(3)
    assert d.width <= 1600


def test_group_text_names_who_shares_what():
    d = kv_cache_drawing(SessionData(load_preset("bert-base")))
    texts = [group_text(v, 12) for v in d.variants]
    assert texts[0] == "each query head reads its own K/V head"
    assert texts[-1] == "all 12 query heads read one K/V head"
    assert "each K/V head is read by 2 query heads" in texts[1]


def test_the_widget_follows_the_configuration(qtbot, show_widget):
    doc = Document(load_preset("toy"))
    view = show_widget(KvCacheView(doc), 800, 400)
    assert view.objectName() == "kvCacheView"
    qtbot.waitUntil(lambda: view.drawing is not None)
    assert [v.h_kv for v in view.drawing.variants] == [2, 1]
    doc.set_config(h=4, h_kv=4, d_model=8)
    qtbot.waitUntil(lambda: [v.h_kv for v in view.drawing.variants] == [4, 2, 1])
    doc.set_config(n=10)
    qtbot.waitUntil(lambda: view.drawing.variants[0].kv_cache == 10 * 4 * (2 + 2))
    doc.deleteLater()


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_export_view_kv_cache(capsys, tmp_path, suffix):
    out = tmp_path / f"kv{suffix}"
    code = main(["export", "--preset", "gqa", "--view", "kv-cache", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert out.stat().st_size > 1000
    if suffix == ".svg":
        svg = out.read_text()
        assert "320" in svg and "GQA" in svg and "<text" in svg


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


def test_a_narrow_dock_stacks_the_bars_and_keeps_the_numbers():
    c = load_preset("bert-base").config
    wide, narrow = KvCacheDrawing(c), KvCacheDrawing(c, 600)
    assert not wide.stacked and narrow.stacked
    assert narrow.width <= 640 and wide.width <= 1600
    assert narrow.cache_text == wide.cache_text and narrow.params_text == wide.params_text
