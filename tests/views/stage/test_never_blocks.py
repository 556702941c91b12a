"""Large layers recompute and prepare their images off the UI thread: the window stays
live, says "computing…", and what it settles on equals a fresh forward of its numbers."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.document import Document
from mha_gui.document import recompute as recompute_module
from mha_gui.engine.layer.presets import random_session
from mha_gui.views.stage import attention_view as view_module
from mha_gui.views.stage.attention_view import AttentionView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.fixture
def off_thread(monkeypatch):
    """Every layer counts as large: recomputes and image preparation go to the worker."""
    monkeypatch.setattr(recompute_module, "ASYNC_CELLS", 0)
    monkeypatch.setattr(view_module, "PREPARE_CELLS", 0)


def settled(qtbot, doc):
    qtbot.waitUntil(lambda: not doc.busy, timeout=20_000)
    for _ in range(3):
        qtbot.wait(5)
    assert not doc.busy


def test_opening_a_large_layer_returns_at_once_and_settles_exactly(qtbot, show_widget, off_thread):
    session = random_session(seed=4, tokens=7, d_model=8, heads=2)
    doc = Document(session.copy())
    assert doc.busy  # the first forward pass runs on the worker
    view = show_widget(AttentionView(doc), 800, 500)
    assert view.computing.isVisible()
    settled(qtbot, doc)
    assert not view.computing.isVisible()
    np.testing.assert_allclose(doc.trace().weights, session.run().weights, atol=1e-12)
    assert view.panels  # built from the finished trace


def test_edits_made_while_computing_are_not_lost(qtbot, show_widget, off_thread):
    doc = Document(random_session(seed=5, tokens=6, d_model=8, heads=4))
    view = show_widget(AttentionView(doc), 800, 500)
    settled(qtbot, doc)
    doc.set_stage(3)
    for k in range(12):  # a scrub: edits arrive while the worker is busy
        doc.set_value("W_Q", (1, 0, 0), 0.3 * k, merge_key="scrub")
        doc.set_value("X", (2, 1), -0.2 * k)
        qtbot.wait(1)
    settled(qtbot, doc)
    fresh = doc.snapshot().run()
    np.testing.assert_allclose(doc.trace().weights, fresh.weights, atol=1e-12)
    np.testing.assert_allclose(doc.trace().output, fresh.output, atol=1e-12)
    for head in range(4):  # what is drawn is that trace
        np.testing.assert_allclose(view.panels[("A", head)].matrix, fresh.weights[head])


def test_prepared_images_look_like_the_synchronous_ones(qtbot, show_widget, monkeypatch):
    session = random_session(seed=6, tokens=5, d_model=8, heads=2)
    sync_view = show_widget(AttentionView(Document(session.copy())), 700, 420)
    sync_view.document.set_stage(2)
    for _ in range(4):
        qtbot.wait(5)
    expected = sync_view.grab().toImage()
    monkeypatch.setattr(view_module, "PREPARE_CELLS", 0)
    doc = Document(session.copy())
    view = show_widget(AttentionView(doc), 700, 420)
    doc.set_stage(2)
    settled(qtbot, doc)
    got = view.grab().toImage()
    differ = sum(
        got.pixel(x, y) != expected.pixel(x, y)
        for x in range(0, got.width(), 3)
        for y in range(0, got.height(), 3)
    )
    assert differ < 0.01 * (got.width() // 3) * (got.height() // 3)


def test_a_large_panel_is_drawn_from_a_reduced_image_with_exact_tooltips(qtbot, show_widget):
    from mha_gui.views.stage.heatmap_panel import MAX_IMAGE_SIDE, block_mean, reduction

    assert reduction(2048, 2048) == (4, 4) and reduction(100, 64) == (1, 1)
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(block_mean(m, 2, 2), [[2.5, 4.5], [8.5, 10.5]])  # edge-padded
    doc = Document(random_session(seed=7, tokens=MAX_IMAGE_SIDE + 40, d_model=8, heads=1))
    view = show_widget(AttentionView(doc), 600, 420)
    doc.set_stage(3)
    settled(qtbot, doc)
    panel = view.panels[("A", 0)]
    assert panel.step == (2, 2) and panel.image.image.shape == (276, 276)
    assert "A_0[300,7]" in view.cell_tooltip("A", 0, 300, 7)


def test_every_worker_recompute_equals_a_fresh_forward_across_masks_and_configs(qtbot, off_thread):
    """The worker reuses its copy of the numbers between jobs: a mask, a new mask shape,
    a config change and plain edits each settle on exactly the fresh forward."""
    doc = Document(random_session(seed=8, tokens=5, d_model=8, heads=2))
    settled(qtbot, doc)

    def exact():
        settled(qtbot, doc)
        fresh = doc.snapshot().run()
        np.testing.assert_allclose(doc.trace().weights, fresh.weights, atol=1e-12)
        np.testing.assert_allclose(doc.trace().output, fresh.output, atol=1e-12)

    doc.set_value("X", (1, 1), 0.7)
    exact()
    doc.toggle_blocked(3, 1)
    exact()
    doc.toggle_blocked(2, 0)  # a second block: the worker's mask is overwritten
    exact()
    doc.toggle_blocked(3, 1)
    exact()
    doc.set_value("W_O", (0, 2), -0.4)
    exact()
    doc.set_causal(True)
    exact()
    doc.open_session(random_session(seed=9, tokens=7, d_model=8, heads=2))
    exact()
    doc.toggle_blocked(6, 2)
    doc.set_value("W_V", (1, 3, 0), 1.5)
    exact()
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    exact()


def test_an_edit_while_the_worker_reads_the_opened_numbers_leaves_them_alone(
    qtbot, off_thread, monkeypatch
):
    """The first recompute of an opened layer reads the document's own arrays (no copy);
    an edit made meanwhile moves the document to a copy instead of writing under the
    worker, and the result that arrives is recomputed with the edit."""
    import threading

    from mha_gui.engine.attention import incremental

    doc = Document(random_session(seed=10, tokens=5, d_model=8, heads=2))
    settled(qtbot, doc)
    gate, seen = threading.Event(), []
    refresh = incremental.IncrementalTrace.refresh

    def slow_refresh(engine):
        gate.wait(10)  # the worker holds on until the edit below is made
        seen.append(float(engine.session.params.X[0, 0]))
        return refresh(engine)

    monkeypatch.setattr(incremental.IncrementalTrace, "refresh", slow_refresh)
    opened = random_session(seed=11, tokens=6, d_model=8, heads=2)
    original = float(opened.params.X[0, 0])
    doc.open_session(opened, owned=True)  # handed over: its arrays are the document's
    try:
        qtbot.waitUntil(lambda: doc.busy)  # its recompute starts in the next turn
        doc.set_value("X", (0, 0), 4.25)
        assert opened.params.X[0, 0] == original  # the worker's arrays were not written
    finally:
        gate.set()
    settled(qtbot, doc)
    assert seen[0] == original and 4.25 in seen  # then a job with the edit
    fresh = doc.snapshot().run()
    assert fresh.output is not None and doc.matrix("X")[0, 0] == 4.25
    np.testing.assert_allclose(doc.trace().output, fresh.output, atol=1e-12)


def test_the_query_strip_shows_a_large_layer_opened_while_a_stage_prepares_its_images(
    qtbot, show_widget, off_thread
):
    """Opening a large layer: the recompute, then the stage's images prepared on the
    worker; the query strip (which waits for the recompute) must not wait for the images
    forever, and shows the new layer's numbers."""
    from mha_gui.views.stage.query_strip import QueryStrip

    doc = Document(random_session(seed=5, tokens=4, d_model=8, heads=2))
    view = show_widget(AttentionView(doc), 700, 400)
    strip = show_widget(QueryStrip(doc), 700, 160)
    settled(qtbot, doc)
    doc.open_session(random_session(seed=12, tokens=9, d_model=8, heads=3), owned=True)
    qtbot.waitUntil(lambda: not doc.busy and not view.building, timeout=20_000)
    settled(qtbot, doc)
    t, v = doc.trace(), doc.view
    np.testing.assert_allclose(strip.panels["s"].matrix, t.scores[v.head, v.query][None])
    assert strip.panels["heads"].matrix.shape == (3, 9)


def test_a_file_being_written_and_the_worker_never_share_arrays_the_other_writes(
    qtbot, off_thread, monkeypatch
):
    """The worker's first recompute of an opened layer and a file being written both
    read the document's arrays; an edit moves the document to a copy, and the worker's
    later jobs must not write into the arrays the file is still being written from."""
    import threading

    from mha_gui.engine.attention import incremental

    doc = Document(random_session(seed=13, tokens=5, d_model=8, heads=2))
    settled(qtbot, doc)
    gate = threading.Event()
    refresh = incremental.IncrementalTrace.refresh

    def held(engine):
        gate.wait(10)
        return refresh(engine)

    monkeypatch.setattr(incremental.IncrementalTrace, "refresh", held)
    doc.open_session(random_session(seed=14, tokens=6, d_model=8, heads=2), owned=True)
    try:
        qtbot.waitUntil(lambda: doc.busy)  # the worker reads the document's own arrays
        snapshot = doc.shared_snapshot()  # and so does a file being written
        written = snapshot.params.X.copy()
        doc.set_value("X", (2, 2), -3.0)
    finally:
        gate.set()
    settled(qtbot, doc)
    doc.set_value("X", (3, 3), 5.0)  # the worker's next job copies into its own arrays
    settled(qtbot, doc)
    np.testing.assert_array_equal(snapshot.params.X, written)
    doc.release(snapshot)
    fresh = doc.snapshot().run()
    np.testing.assert_allclose(doc.trace().output, fresh.output, atol=1e-12)


def test_an_edit_during_an_image_preparation_is_recomputed_on_the_worker_and_signalled(
    qtbot, show_widget, off_thread, monkeypatch
):
    """Each recompute makes the view prepare its images on the worker; an edit landing
    meanwhile must still bring a traceChanged, recomputed on the worker — not by the
    view reading the trace on the UI thread (a 2048-token layer: a second's freeze)."""
    import threading

    from mha_gui.engine.attention import incremental

    doc = Document(random_session(seed=15, tokens=6, d_model=8, heads=2))
    view = show_widget(AttentionView(doc), 700, 420)
    doc.set_stage(6)
    qtbot.waitUntil(lambda: not doc.busy and not view.building, timeout=20_000)
    on_ui_thread = []
    refresh = incremental.IncrementalTrace.refresh

    def watched(engine):
        on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return refresh(engine)

    monkeypatch.setattr(incremental.IncrementalTrace, "refresh", watched)
    # each preparation takes a moment, as a large layer's does: a 6-token layer's was
    # done — its report handled in the same turn as traceChanged — before the check
    # below on a busy machine
    run_off_thread = recompute_module.Recompute.run_off_thread

    def slow_preparation(self, work, done):
        def slow_work():
            threading.Event().wait(0.05)
            return work()

        run_off_thread(self, slow_work, done)

    monkeypatch.setattr(recompute_module.Recompute, "run_off_thread", slow_preparation)
    for k in range(4):
        with qtbot.waitSignal(doc.traceChanged, timeout=5_000):
            doc.set_value("X", (1, 1), 0.1 * k + 0.05)
        assert doc.busy  # the view's preparation is under way: the next edit lands in it
    settled(qtbot, doc)
    assert on_ui_thread and not any(on_ui_thread)
    fresh = doc.snapshot().run()
    np.testing.assert_allclose(view.panels[("Y", -1)].matrix, fresh.output, atol=1e-12)
