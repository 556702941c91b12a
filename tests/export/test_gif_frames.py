"""Walkthrough GIF frames are slides: 16:9, the title in one place on every frame and
each stage's content centred under it, filling the frame (a tall page layout — the
projections' Q, K, V rows, the output's Y over the contributions — is set in columns
instead of shrinking to a strip in the middle)."""

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
def test_every_frame_is_filled_with_its_body_centred_under_a_fixed_title(qapp, name):
    frames = stage_frames(SESSIONS[name](), width=600)
    assert len(frames) == 7
    corners = set()
    for number, frame in enumerate(frames, start=1):
        f = np.asarray(frame).astype(int)
        h, w = f.shape[:2]
        assert (w, h) == (600, 338)
        inked = np.abs(f - f[0, 0]).sum(axis=2) > 30
        ink = np.argwhere(inked)
        (top, left), (bottom, right) = ink.min(axis=0), ink.max(axis=0)
        wide, high = (right - left) / w, (bottom - top) / h
        # as large as the frame allows one way, and no thin strip the other way
        assert max(wide, high) >= 0.85 and wide * high >= 0.45, (number, wide, high)
        # the title's first line starts at one place on every frame
        title_rows = np.flatnonzero(inked.any(axis=1))
        first = title_rows[: np.argmax(np.diff(title_rows) > 2) + 1]
        corners.add((int(first[0]) // 3, int(np.flatnonzero(inked[first].any(axis=0))[0]) // 3))
        # the body (below the title block's three lines) centred from side to side
        lines = _text_lines(frame, with_rows=True)
        body = inked[lines[3][0] :]
        cols = np.flatnonzero(body.any(axis=0))
        assert abs(cols[0] - (w - 1 - cols[-1])) <= 0.05 * w, (number, cols[0], cols[-1])
    assert len(corners) == 1, corners


def _text_lines(frame, with_rows: bool = False) -> list[tuple[int, int]]:
    """(height, width) of the frame's lines of ink from the top, split at blank rows
    (`with_rows`: (top, bottom) rows instead)."""
    f = np.asarray(frame).astype(int)
    ink = np.abs(f - f[0, 0]).sum(axis=2) > 60
    rows = np.flatnonzero(ink.any(axis=1))
    bands, start, last = [], rows[0], rows[0]
    for y in rows[1:]:
        if y - last > 2:
            bands.append((start, last))
            start = y
        last = y
    bands.append((start, last))
    if with_rows:
        return [(int(top), int(bottom)) for top, bottom in bands]
    out = []
    for top, bottom in bands:
        cols = np.flatnonzero(ink[top : bottom + 1].any(axis=0))
        out.append((int(bottom - top + 1), int(cols.max() - cols.min() + 1)))
    return out


@pytest.mark.parametrize("name", list(SESSIONS))
def test_the_title_block_has_one_size_on_every_frame(qapp, name):
    """The settings line under the title (n, d_model, heads …) reads the same on every
    stage: drawn as wide on every frame, the title block does not grow and shrink as the
    walkthrough plays (it did, 142–387 px wide at 600 px frames)."""
    widths = [_text_lines(frame)[2][1] for frame in stage_frames(SESSIONS[name](), width=600)]
    assert max(widths) - min(widths) <= 3, widths
    assert min(widths) >= 250  # and large: about half the frame's width


def test_a_slide_prints_no_number_too_small_to_read(qapp, monkeypatch):
    """Cell numbers a slide would print below VALUE_MIN_FRAME_PX are left out: the
    projections of causal-6x16 printed theirs at ~5 px on a 1200 px frame. The toy's
    large cells keep theirs."""
    from mha_gui.export import animation

    drawn = []
    real = animation.render_drawing

    def spy(fig, size, *args):
        drawn.append((fig.layout.scene.title, [g.value_px for g in fig.layout.panels], size))
        return real(fig, size, *args)

    monkeypatch.setattr(animation, "render_drawing", spy)
    stage_frames(SESSIONS["causal-6x16"](), width=1200)
    last = {}
    for title, values, _size in drawn:
        last[title.split(" · ")[-1]] = values
    assert any(v > 0 for v in drawn[1][1])  # the page layout prints them …
    assert all(v == 0 for v in last["Projections"])  # … the slide does not
    drawn.clear()
    stage_frames(SESSIONS["toy"](), width=1200)
    assert any(v > 0 for title, values, _size in drawn if "weights" in title for v in values)


def _slide_label_px(monkeypatch) -> list[float]:
    """Run with it patched in: the frame px of the smallest token label on each slide,
    in stage order, filled in as frames are made (the last render of each stage, scaled
    as its slide scales it)."""
    from mha_gui.export import animation

    renders, drawn = [], []
    real_render, real_frame = animation.render_drawing, animation._frame

    def render_spy(fig, size, *args):
        renders.append(min(g.label_px for g in fig.layout.panels) * size / fig.width)
        return real_render(fig, size, *args)

    def frame_spy(w, h, margin, bg, header, bands, pad):
        drawn.append(renders[-1] * animation._frame_body(w, h, margin, bg, header, bands, pad)[1])
        return real_frame(w, h, margin, bg, header, bands, pad)

    monkeypatch.setattr(animation, "render_drawing", render_spy)
    monkeypatch.setattr(animation, "_frame", frame_spy)
    return drawn


@pytest.mark.parametrize("name", list(SESSIONS))
def test_a_slides_token_labels_print_at_10_px_where_a_narrower_layout_allows(
    qapp, monkeypatch, name
):
    """causal-6x16's projections slide (twelve panels) printed its token and axis labels
    at ~7 px on a 1200 px frame: its page layout, 1162 units wide, scaled to fit. A
    slide whose labels would print below 10 px is laid out narrower (smaller cells, text
    the same size): no slide's labels are smaller than its page layout's, and
    causal-6x16's projections print theirs at 10 px or more."""
    from mha_gui.export import animation

    page = _slide_label_px(monkeypatch)
    monkeypatch.setattr(animation, "NARROWER_WIDTHS", (), raising=False)
    stage_frames(SESSIONS[name](), width=1200)
    monkeypatch.undo()
    slide = _slide_label_px(monkeypatch)
    stage_frames(SESSIONS[name](), width=1200)
    assert all(s >= p - 0.01 for s, p in zip(slide, page, strict=True)), (page, slide)
    assert all(s >= 10 for s, p in zip(slide, page, strict=True) if p >= 10)
    if name == "causal-6x16":
        assert page[1] < 8 and slide[1] >= 10, (page[1], slide[1])
