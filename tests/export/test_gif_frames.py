"""Walkthrough GIF frames are slides: 16:9, each stage's content centred and filling the
frame (a tall page layout — the projections' Q, K, V rows, the output's Y over the
contributions — is set in columns instead of shrinking to a strip in the middle)."""

from __future__ import annotations

import numpy as np
import pytest

from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.export.animation import stage_frames

SESSIONS = {
    "toy": lambda: load_preset("toy"),
    "causal-6x16": lambda: load_preset("causal-6x16"),
    "gqa": lambda: load_preset("gqa"),
    "20 tokens": lambda: random_session(0, 20, 16, 4),
}


@pytest.mark.parametrize("name", list(SESSIONS))
def test_every_frame_is_filled_and_centred(qapp, name):
    frames = stage_frames(SESSIONS[name](), width=600)
    assert len(frames) == 7
    for number, frame in enumerate(frames, start=1):
        f = np.asarray(frame).astype(int)
        h, w = f.shape[:2]
        assert (w, h) == (600, 338)
        ink = np.argwhere(np.abs(f - f[0, 0]).sum(axis=2) > 30)
        (top, left), (bottom, right) = ink.min(axis=0), ink.max(axis=0)
        wide, high = (right - left) / w, (bottom - top) / h
        # as large as the frame allows one way, and no thin strip the other way
        assert max(wide, high) >= 0.85 and wide * high >= 0.45, (number, wide, high)
        assert abs(left - (w - 1 - right)) <= 0.05 * w, (number, left, right)
        assert abs(top - (h - 1 - bottom)) <= 0.05 * h, (number, top, bottom)
