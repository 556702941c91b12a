"""The memory a layer is refused for (Config.bytes_needed, against MAX_MEMORY_BYTES) is
what the window really holds at its peak, measured with tracemalloc (NumPy reports its
arrays to it) on a moderate layer: open it, look at the scores and the weights, edit a
cell, switch the causal mask on (a new session: a second trace while the first is
shown), train a step. One forward's arrays alone were half of it (BERT-base at n = 4096:
estimated 3.7 GB, 8.6 GB reached)."""

import gc
import tracemalloc

import numpy as np
import pytest

from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import random_parameters
from mha_gui.engine.layer.session import Session
from mha_gui.engine.panels.stages import STAGE_NAMES
from mha_gui.engine.teaching.training import Trainer

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def settled(window) -> bool:
    doc = window.document
    idle = not (doc.busy or doc.computing) and window.query_strip.settled
    return idle and window.attention_view.settled


def test_the_estimate_covers_the_windows_peak_on_a_moderate_layer(qtbot, window):
    n = 320
    config = Config(n=n, d_model=768, h=12, h_kv=12, d_k=64, d_v=64)  # BERT-base's shape
    session = Session(config, [f"t{i}" for i in range(n)], random_parameters(config, 0))
    window.resize(1280, 720)
    window.show()
    qtbot.waitUntil(lambda: settled(window))
    doc, bar = window.document, window.stage_bar
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        doc.open_session(session)
        qtbot.waitUntil(lambda: settled(window), timeout=60_000)
        for stage in ("scores", "weights"):
            bar.stage_slider.setValue(STAGE_NAMES.index(stage))
            qtbot.waitUntil(lambda: settled(window), timeout=60_000)
        doc.set_value("W_Q", (0, 0, 0), 0.125)
        qtbot.waitUntil(lambda: settled(window), timeout=60_000)
        window.config_panel.causal.click()
        qtbot.waitUntil(lambda: doc.config.causal and settled(window), timeout=60_000)
        Trainer(doc.session, 0, np.eye(n)).step(1)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    need = config.bytes_needed()
    assert peak <= need, (peak / 1e6, need / 1e6)
    assert need <= 2 * peak, (peak / 1e6, need / 1e6)  # honest, not merely large
    # what a forward alone holds is far below the peak: it was the estimate before
    assert 8 * config.values_in_memory() < 0.8 * peak
