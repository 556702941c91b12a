"""Each heatmap panel is an accessible table: its cells say what they are, the number as
shown and the worked formula; blocked, blank and switched-off cells say so."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QAccessible

from mha_gui.engine.panels.stages import stage_by_name
from tests.views.accessibility.helpers import (
    DESCRIPTION,
    NAME,
    VALUE,
    cell,
    settle,
    shown,
    table,
    tables,
)

WEIGHTS = stage_by_name("weights").index


def at_weights(qtbot, window):
    shown(qtbot, window)
    window.document.set_stage(WEIGHTS)
    settle(qtbot, window)
    return window.attention_view.canvas


def test_every_panel_is_a_table_of_named_cells(window, qtbot):
    canvas = at_weights(qtbot, window)
    doc = window.document
    canvas_iface = QAccessible.queryAccessibleInterface(canvas)
    assert canvas_iface.text(NAME) == "Stage 4 · Attention weights: heatmaps"
    assert "Arrow keys" in canvas_iface.text(DESCRIPTION)
    names = [t.text(NAME) for t in tables(canvas)]
    assert names == ["A₀", "A₁"]
    a1 = table(canvas, "A₁")
    assert a1.role() == QAccessible.Role.Table
    n = doc.config.n
    assert a1.childCount() == n * n
    sat, down = doc.tokens.index("sat"), doc.tokens.index("down")
    c = cell(a1, sat, down, n)
    assert c.role() == QAccessible.Role.Cell
    assert c.text(NAME) == "A₁, query sat, key down"
    weight = doc.trace().weights[1][sat, down]
    assert float(c.text(VALUE)) == round(float(weight), 2)  # the number as printed
    assert c.text(DESCRIPTION).startswith(f"{c.text(VALUE)}. A_1[{sat},{down}] = softmax(")
    assert a1.indexOfChild(c) == sat * n + down
    assert c.parent().text(NAME) == "A₁"
    rect = c.rect()
    assert rect.width() > 5 and rect.height() > 5
    assert a1.rect().contains(rect.center())  # the cell lies inside its panel


def test_every_stage_is_readable_cell_by_cell(window, qtbot):
    shown(qtbot, window)
    doc = window.document
    for stage in range(7):
        doc.set_stage(stage)
        settle(qtbot, window)
        for t in tables(window.attention_view.canvas):
            assert t.childCount() > 0
            for i in range(t.childCount()):
                c = t.child(i)
                assert c.text(NAME).startswith(t.text(NAME) + ", ")
                assert c.text(VALUE)
                assert c.text(DESCRIPTION)


def test_blocked_cells_say_blocked(window, qtbot):
    canvas = at_weights(qtbot, window)
    window.document.set_causal(True)
    settle(qtbot, window)
    a0 = table(canvas, "A₀")
    n = window.document.config.n
    blocked, open_ = cell(a0, 0, 1, n), cell(a0, 1, 0, n)
    assert blocked.text(VALUE) == "blocked"
    assert "causal" in blocked.text(DESCRIPTION)
    assert open_.text(VALUE) != "blocked"


def test_an_exercise_blank_never_reveals_its_value(window, qtbot):
    canvas = at_weights(qtbot, window)
    view = window.attention_view
    view.set_cell_filter(lambda kind, head: {(2, 3)} if (kind, head) == ("A", 1) else set())
    a1 = table(canvas, "A₁")
    n = window.document.config.n
    blank = cell(a1, 2, 3, n)
    weight = window.document.trace().weights[1][2, 3]
    shown_number = f"{weight:.2f}".rstrip("0").rstrip(".")
    assert blank.text(VALUE).startswith("blank")
    for text in (blank.text(VALUE), blank.text(DESCRIPTION), blank.text(NAME)):
        assert shown_number not in text
    assert "exercise" in blank.text(DESCRIPTION)


def test_a_switched_off_head_is_spoken(window, qtbot):
    shown(qtbot, window)
    doc = window.document
    doc.set_stage(stage_by_name("mixing").index)
    doc.set_ablated(1, True)
    settle(qtbot, window)
    canvas = window.attention_view.canvas
    z1 = next(t for t in tables(canvas) if t.text(NAME) == "Z₁")
    assert "head switched off" in z1.text(DESCRIPTION)
    assert z1.child(0).text(VALUE).endswith("head switched off")
    z0 = next(t for t in tables(canvas) if t.text(NAME) == "Z₀")
    assert "switched off" not in z0.child(0).text(VALUE)
    assert np.isfinite(float(z0.child(0).text(VALUE)))


def test_the_query_strip_is_readable_too(window, qtbot):
    shown(qtbot, window)
    strip = window.query_strip.canvas
    names = [t.text(NAME) for t in tables(strip)]
    assert len(names) == 5
    heads = tables(strip)[-1]
    n = window.document.config.n
    c = heads.child(1 * n + 0)
    assert c.text(NAME).endswith("head 1, key the")
    assert c.text(VALUE)


def test_stages_built_while_a_screen_reader_listens_are_tables_too(window, qtbot):
    """With accessibility active (a screen reader running), Qt asks for a widget's
    interface as soon as it is named: a stage built then must still be served as tables
    (tools/accessibility_walk.py found plain widgets there once)."""
    shown(qtbot, window)
    QAccessible.setActive(True)
    try:
        for stage in (1, 3, 5):
            window.document.set_stage(stage)
            settle(qtbot, window)
            canvas = window.attention_view.canvas
            found = tables(canvas)
            assert found and all(t.role() == QAccessible.Role.Table for t in found)
            assert len(found) == len(window.attention_view.panels)
    finally:
        QAccessible.setActive(False)
