"""Fixtures of the export tests."""

from __future__ import annotations

import pytest

from mha_gui.export import figure


@pytest.fixture
def rich_texts(monkeypatch) -> list[str]:
    """Every rich text a figure or page draws from now on (figure.draw_rich), in order."""
    drawn: list[str] = []
    real = figure.draw_rich

    def spy(painter, x, y, text, *a, **k):
        drawn.append(text)
        return real(painter, x, y, text, *a, **k)

    monkeypatch.setattr(figure, "draw_rich", spy)
    return drawn
