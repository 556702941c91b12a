"""With RoPE on, the query strip follows the rotated query the scores are made of."""

import numpy as np
import pytest

from mha_gui.document import Document
from mha_gui.views.stage.query_strip import QueryStrip

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def settle(qtbot):
    for _ in range(4):
        qtbot.wait(5)


def test_the_strip_shows_q_tilde_and_its_dot_products_give_the_scores(qtbot, show_widget):
    strip = show_widget(QueryStrip(Document()), 1200, 200)
    doc = strip.document
    doc.set_rope(True)
    doc.set_head(1)
    doc.set_query(3)
    settle(qtbot)
    t = doc.trace()
    shown = strip.panels["q"].matrix[0]
    np.testing.assert_array_equal(shown, t.q_rot[1, 3])
    assert not np.allclose(shown, t.q[1, 3])  # position 3 is turned: not the projection
    k = t.k_rot[doc.config.kv_group(1)]
    np.testing.assert_allclose(shown @ k.T * t.scale, strip.panels["s"].matrix[0])
    assert "q\u0303" in strip.titles["q"].text and "K\u0303" in strip.titles["s"].text
    doc.undo_stack.undo()  # RoPE off again: back to the projection, plain names
    settle(qtbot)
    np.testing.assert_array_equal(strip.panels["q"].matrix[0], doc.trace().q[1, 3])
    assert "\u0303" not in strip.titles["s"].text
