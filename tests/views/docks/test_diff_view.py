"""A/B snapshot: Edit ▸ Pin snapshot and the "Now − snapshot" dock (diffView)."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.engine.layer.session import save_session
from mha_gui.export.figures.registry import figure_spec
from mha_gui.views.docks.diff.diff_view import snapshot_store
from mha_gui.views.window import registry
from tests.views.docks.drawing_views import make_view


def spec(name):
    return {a.object_name: a for a in registry.actions()}[name]


@pytest.fixture
def view(window, show_widget):
    return show_widget(make_view("diff", window.document), 900, 500)


def settle(qtbot, view):
    """Let the document recompute and the view rebuild (both coalesce on timers)."""
    qtbot.wait(5)
    qtbot.waitUntil(lambda: not (view.document.recompute.pending or view._timer.isActive()))
    view.grab()  # paint, as the user would see it


def panels(view):
    return {p.title.split(" · max")[0]: p for r in view.drawing.layout.scene.rows for p in r.panels}


def test_registered_with_its_shortcut_and_view():
    action = spec("action.snapshot")
    assert action.menu in ("Edit", "View") and action.shortcut == "Ctrl+Alt+P"
    view = registry.view_spec("diff")
    assert view.object_name == "diffView" and view.figure == "diff"
    assert figure_spec(view.figure).requires == ("against",)


def test_the_shortcut_is_free_in_the_window(window):
    from PySide6.QtGui import QAction, QKeySequence

    taken = {
        k.toString()
        for a in window.findChildren(QAction)
        if a.objectName() != "action.snapshot"
        for k in a.shortcuts()
    }
    assert QKeySequence("Ctrl+Alt+P").toString() not in taken


def test_without_a_snapshot_it_says_how_to_pin(view, qtbot):
    settle(qtbot, view)
    assert view.drawing.title == "No snapshot pinned"
    assert "Ctrl+Alt+P" in view.drawing.description


def test_pinning_changes_no_number_and_is_no_undo_step(window, view, qtbot):
    doc = window.document
    before = {k: v.copy() for k, v in doc.parameters.as_dict().items()}
    count, clean = doc.undo_stack.count(), doc.undo_stack.isClean()
    spec("action.snapshot").trigger(window)
    assert doc.undo_stack.count() == count and doc.undo_stack.isClean() == clean
    for k, v in doc.parameters.as_dict().items():
        assert np.array_equal(v, before[k])
    settle(qtbot, view)
    assert view.drawing.layout.scene.title.startswith("now − snapshot")
    assert "no number of this stage differs" in view.drawing.layout.scene.info


def test_an_edit_after_pinning_shows_now_minus_snapshot_for_every_stage(window, view, qtbot):
    doc = window.document
    spec("action.snapshot").trigger(window)
    then = snapshot_store(doc).session.run()
    doc.set_value("W_Q", (1, 0, 1), float(doc.matrix("W_Q")[1, 0, 1]) + 0.7)
    doc.set_value("W_O", (0, 2), float(doc.matrix("W_O")[0, 2]) - 0.4)
    settle(qtbot, view)
    now = doc.snapshot().run()  # independent: a fresh forward pass of the edited numbers
    expected = {
        "weights": {f"head {i} · ΔA{'₀₁'[i]}": now.weights[i] - then.weights[i] for i in (0, 1)},
        "scores": {f"head {i} · ΔS{'₀₁'[i]}": now.scores[i] - then.scores[i] for i in (0, 1)},
        "mixing": {f"head {i} · ΔZ{'₀₁'[i]}": now.heads[i] - then.heads[i] for i in (0, 1)},
        "concat": {"ΔH": now.concat - then.concat},
        "output": {"ΔY": now.output - then.output},
    }
    stages = {"scores": 2, "weights": 3, "mixing": 4, "concat": 5, "output": 6}
    for name, matrices in expected.items():
        doc.set_stage(stages[name])
        settle(qtbot, view)
        shown = panels(view)
        for title, diff in matrices.items():
            np.testing.assert_allclose(shown[title].matrix, diff, rtol=1e-12, atol=1e-12)
            largest = float(np.abs(diff).max())
            from mha_gui.export.figures.difference import change_text

            assert shown[title].title.endswith(f"max|Δ| {change_text(largest)}"), title
    # the edit of head 1 changed A₁, not A₀
    doc.set_stage(3)
    settle(qtbot, view)
    assert panels(view)["head 0 · ΔA₀"].title.endswith("max|Δ| 0")
    assert not panels(view)["head 1 · ΔA₁"].title.endswith("max|Δ| 0")


def test_a_further_edit_changes_the_views_model(window, view, qtbot):
    doc = window.document
    spec("action.snapshot").trigger(window)
    doc.set_stage(6)
    settle(qtbot, view)
    first = panels(view)["ΔY"].matrix.copy()
    doc.set_value("X", (0, 0), float(doc.matrix("X")[0, 0]) + 1.0)
    settle(qtbot, view)
    second = panels(view)["ΔY"].matrix
    assert not np.array_equal(first, second) and np.abs(second).max() > 0
    doc.undo_stack.undo()
    settle(qtbot, view)
    assert np.abs(panels(view)["ΔY"].matrix).max() == 0


def test_a_snapshot_of_other_dimensions_is_explained(window, view, qtbot):
    doc = window.document
    spec("action.snapshot").trigger(window)
    doc.set_config(n=5)
    settle(qtbot, view)
    assert view.drawing.title == "The snapshot has other dimensions"
    assert "n=4 (now 5)" in view.drawing.description
    view.grab()  # paints without raising
    doc.undo_stack.undo()
    settle(qtbot, view)
    assert view.drawing.layout.scene.title.startswith("now − snapshot")


def test_clear_and_context_menu(window, view, qtbot):
    spec("action.snapshot").trigger(window)
    menu = view.build_menu()
    names = {a.objectName(): a for a in menu.actions()}
    assert names["diff.export"].isEnabled() and names["diff.clear"].isEnabled()
    names["diff.clear"].trigger()
    settle(qtbot, view)
    assert view.drawing.title == "No snapshot pinned"
    assert not view.build_menu().actions()[1].isEnabled()
    spec("action.snapshot").trigger(window)
    spec("action.snapshot.clear").trigger(window)
    assert snapshot_store(window.document).session is None


def test_export_from_the_right_click_menu(window, view, qtbot, dialogs, tmp_path):
    doc = window.document
    spec("action.snapshot").trigger(window)
    doc.set_value("W_V", (0, 0, 0), 2.0)
    doc.set_stage(4)
    for suffix in (".png", ".svg", ".pdf"):
        dialogs.save_path = str(tmp_path / f"diff{suffix}")
        assert view.export_figure() == dialogs.save_path
        assert (tmp_path / f"diff{suffix}").stat().st_size > 1000
    assert "ΔZ" in (tmp_path / "diff.svg").read_text()


def test_light_and_dark(window, view, qtbot, tmp_path):
    spec("action.snapshot").trigger(window)
    window.document.set_value("W_Q", (0, 0, 0), 1.5)
    window.document.set_stage(3)
    images = []
    for name in ("light", "dark"):
        view.set_theme(name)
        settle(qtbot, view)
        img = view.grab().toImage()
        images.append(img.pixelColor(3, 3).lightness())
    assert images[0] > 200 and images[1] < 80


def test_cli_export_and_refusal(tmp_path, capsys, qapp):
    from mha_gui.cli import main
    from mha_gui.engine.layer.presets import load_preset

    now, other = load_preset("toy"), load_preset("toy")
    other.params.W_K[0, 1, 1] += 1.0
    save_session(now, tmp_path / "now.json")
    save_session(other, tmp_path / "other.json")
    out = tmp_path / "d.png"
    argv = ["export", "--session", str(tmp_path / "now.json"), "--view", "diff"]
    code = main([*argv, "--against", str(tmp_path / "other.json"), "--stage", "weights",
                 "--out", str(out)])  # fmt: skip
    assert code == 0 and out.stat().st_size > 1000
    capsys.readouterr()
    save_session(load_preset("gqa"), tmp_path / "gqa.json")
    bad = tmp_path / "bad.png"
    code = main([*argv, "--against", str(tmp_path / "gqa.json"), "--out", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("mha-gui: error:") and err.count("\n") == 1, err
    assert "the --against session has d_model=8 (now 4)" in err and "same shapes" in err
    assert not bad.exists()
    code = main([*argv, "--out", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "--view diff needs --against" in err and not bad.exists()
