"""The MHA / GQA / MQA figure (export/figures/kv_cache.py): its numbers are the hand
formulas, it names who shares what, a narrow width stacks the bars, the CLI writes it."""

import pytest

from mha_gui.cli import main
from mha_gui.engine import load_preset
from mha_gui.engine.panels.stage_panels import SessionData
from mha_gui.export.figures.kv_cache import (
    KvCacheDrawing,
    VariantRow,
    group_text,
    kv_cache_drawing,
)


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


def test_a_narrow_dock_stacks_the_bars_and_keeps_the_numbers():
    c = load_preset("bert-base").config
    wide, narrow = KvCacheDrawing(c), KvCacheDrawing(c, 600)
    assert not wide.stacked and narrow.stacked
    assert narrow.width <= 640 and wide.width <= 1600
    assert narrow.cache_text == wide.cache_text and narrow.params_text == wide.params_text
