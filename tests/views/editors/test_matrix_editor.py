"""Matrix models and editors: typing, refusing, undo, paste, copy, scrub, tokens, heads."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QTableView

from mha_gui.document import Document
from mha_gui.engine.layer.presets import load_preset
from mha_gui.engine.layer.values import to_tsv
from mha_gui.views.editors.matrix_editor import MatrixEditor


@pytest.fixture
def doc(qtbot):
    return Document(load_preset("toy"))


@pytest.fixture
def editor(qtbot, doc):
    def make(name, bias=None):
        e = MatrixEditor(doc, name, bias=bias)
        qtbot.addWidget(e)
        e.resize(420, 320)
        e.show()
        return e

    return make


def cell_texts(table: QTableView) -> list[list[str]]:
    m = table.model()
    return [[m.index(r, c).data() for c in range(m.columnCount())] for r in range(m.rowCount())]


def test_typing_a_value_changes_the_cell_and_the_trace(editor, doc):
    e = editor("W_Q")
    model = e.table.model()
    before = doc.trace().q.copy()
    assert model.setData(model.index(0, 0), "3")
    assert model.index(0, 0).data() == "3"
    x = doc.matrix("X")
    expected = x @ doc.matrix("W_Q")[0]
    after = doc.trace().q
    np.testing.assert_allclose(after[0], expected)
    assert not np.array_equal(before, after)
    np.testing.assert_array_equal(after[1], before[1])  # the other head is untouched


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-inf", "", "   ", "2e6", "1,2,3"])
def test_bad_text_is_refused_with_a_reason_and_changes_nothing(editor, doc, qtbot, text):
    e = editor("X")
    model = e.table.model()
    shown = cell_texts(e.table)
    before = doc.matrix("X").copy()
    messages = []
    e.message.connect(messages.append)
    assert model.setData(model.index(1, 2), text) is False
    assert messages and "X[1, 2]" in messages[0]
    np.testing.assert_array_equal(doc.matrix("X"), before)
    assert doc.undo_stack.count() == 0
    assert cell_texts(e.table) == shown


def test_undo_and_redo_restore_exactly_what_was_shown(editor, doc, qtbot):
    e = editor("W_O")
    model = e.table.model()
    qtbot.wait(1)
    first = e.table.grab().toImage()
    texts = cell_texts(e.table)
    original = doc.matrix("W_O").copy()
    for i, value in enumerate(("0.125", "-2.5", "7")):
        assert model.setData(model.index(i, i), value)
    edited = doc.matrix("W_O").copy()
    qtbot.wait(1)
    edited_image = e.table.grab().toImage()
    assert edited_image != first
    for _ in range(3):
        doc.undo_stack.undo()
    qtbot.wait(1)
    np.testing.assert_array_equal(doc.matrix("W_O"), original)
    assert cell_texts(e.table) == texts
    assert e.table.grab().toImage() == first
    for _ in range(3):
        doc.undo_stack.redo()
    qtbot.wait(1)
    np.testing.assert_array_equal(doc.matrix("W_O"), edited)
    assert e.table.grab().toImage() == edited_image


def test_paste_a_block_at_the_current_cell_is_one_undo_step(editor, doc):
    e = editor("W_Q")
    table = e.table
    table.setCurrentIndex(table.model().index(1, 0))
    original = doc.matrix("W_Q").copy()
    assert table.paste_text("1.5\t-2\n3\t4.25\n")
    np.testing.assert_array_equal(doc.matrix("W_Q")[0, 1:3, :], [[1.5, -2], [3, 4.25]])
    np.testing.assert_array_equal(doc.matrix("W_Q")[1], original[1])
    assert cell_texts(table)[1] == ["1.5", "-2"]
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    np.testing.assert_array_equal(doc.matrix("W_Q"), original)


@pytest.mark.parametrize(
    "text, why",
    [
        ("1\t2\t3", "does not fit"),  # three columns into a two-column matrix
        ("1\t2\n3\t4\n5\t6\n7\t8", "does not fit"),  # four rows from row 1 of four
        ("1\tabc", "not a number"),
        ("1\t2\n3", "different lengths"),
        ("", "no numbers"),
    ],
)
def test_a_wrong_block_is_refused_with_a_message(editor, doc, text, why):
    e = editor("W_K")
    table = e.table
    table.setCurrentIndex(table.model().index(1, 0))
    messages = []
    e.message.connect(messages.append)
    original = doc.matrix("W_K").copy()
    assert table.paste_text(text) is False
    assert why in messages[-1]
    np.testing.assert_array_equal(doc.matrix("W_K"), original)
    assert doc.undo_stack.count() == 0


def test_copy_puts_the_selection_on_the_clipboard_as_tsv(editor, doc):
    e = editor("X")
    table = e.table
    m = table.model()
    table.selectionModel().select(
        table._range(1, 1, 2, 3), table.selectionModel().SelectionFlag.ClearAndSelect
    )
    text = table.copy_selection()
    assert text == to_tsv(doc.matrix("X")[1:3, 1:4])
    assert QGuiApplication.clipboard().text() == text
    # and it pastes back exactly somewhere else
    table.setCurrentIndex(m.index(0, 0))
    table.selectionModel().clearSelection()
    table.setCurrentIndex(m.index(0, 0))
    assert table.paste_text(text)
    np.testing.assert_array_equal(
        doc.matrix("X")[0:2, 0:3],
        doc.matrix("X")[1:3, 1:4] * 0
        + np.array([[float(v) for v in row.split("\t")] for row in text.split("\n")]),
    )


def _mouse(kind, pos, button, buttons, modifiers=Qt.KeyboardModifier.NoModifier):
    p = QPointF(pos)
    return QMouseEvent(kind, p, p, button, buttons, modifiers)


def test_scrub_drag_changes_a_cell_continuously_as_one_undo_step(editor, doc, qtbot):
    e = editor("X")
    table = e.table
    vp = table.viewport()
    rect = table.visualRect(table.model().index(2, 1))
    start = rect.center()
    before = doc.matrix("X")[2, 1]
    alt = Qt.KeyboardModifier.AltModifier
    left = Qt.MouseButton.LeftButton
    QApplication.sendEvent(vp, _mouse(QEvent.Type.MouseButtonPress, start, left, left, alt))
    seen = []
    for dy in range(5, 60, 5):
        QApplication.sendEvent(
            vp,
            _mouse(
                QEvent.Type.MouseMove, start - QPoint(0, dy), Qt.MouseButton.NoButton, left, alt
            ),
        )
        qtbot.wait(1)
        seen.append(float(doc.matrix("X")[2, 1]))
    QApplication.sendEvent(
        vp,
        _mouse(
            QEvent.Type.MouseButtonRelease,
            start - QPoint(0, 55),
            left,
            Qt.MouseButton.NoButton,
            alt,
        ),
    )
    assert seen == sorted(seen) and seen[-1] > before  # dragging up increases the value
    assert len(set(seen)) == len(seen)  # it changed at every step
    assert table.model().index(2, 1).data() == f"{seen[-1]:g}"
    assert doc.undo_stack.count() == 1  # the whole drag is one step
    doc.undo_stack.undo()
    assert doc.matrix("X")[2, 1] == before
    # a second drag is a second undo step
    QApplication.sendEvent(
        vp,
        _mouse(
            QEvent.Type.MouseButtonPress,
            start,
            Qt.MouseButton.MiddleButton,
            Qt.MouseButton.MiddleButton,
        ),
    )
    QApplication.sendEvent(
        vp,
        _mouse(
            QEvent.Type.MouseMove,
            start + QPoint(0, 30),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.MiddleButton,
        ),
    )
    QApplication.sendEvent(
        vp,
        _mouse(
            QEvent.Type.MouseButtonRelease,
            start + QPoint(0, 30),
            Qt.MouseButton.MiddleButton,
            Qt.MouseButton.NoButton,
        ),
    )
    assert doc.matrix("X")[2, 1] < before
    assert doc.undo_stack.count() == 1  # the undone step was replaced by the new drag


def test_ctrl_wheel_nudges_the_cell_under_the_mouse(editor, doc):
    e = editor("W_V")
    table = e.table
    pos = QPointF(table.visualRect(table.model().index(0, 1)).center())
    before = doc.matrix("W_V")[0, 0, 1]

    def wheel(notches):
        ev = QWheelEvent(
            pos,
            QPointF(table.viewport().mapToGlobal(pos.toPoint())),
            QPoint(),
            QPoint(0, 120 * notches),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.ControlModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(table.viewport(), ev)

    wheel(1)
    wheel(1)
    after = doc.matrix("W_V")[0, 0, 1]
    assert after == pytest.approx(before + 0.2)
    wheel(-1)
    assert doc.matrix("W_V")[0, 0, 1] == pytest.approx(before + 0.1)
    assert doc.undo_stack.count() == 1


def test_tokens_can_be_renamed_added_and_removed(editor, doc, dialogs, qtbot):
    e = editor("X")
    header = e.table.model().headerData
    assert header(1, Qt.Orientation.Vertical) == "cat"
    dialogs.text = "dog"
    e.rename_token(1)
    assert header(1, Qt.Orientation.Vertical) == "dog"
    dialogs.text = "   "
    messages = []
    e.message.connect(messages.append)
    e.rename_token(1)
    assert "empty" in messages[-1] and doc.tokens[1] == "dog"
    x = doc.matrix("X").copy()
    qtbot.mouseClick(e.add_token_button, Qt.MouseButton.LeftButton)
    assert e.table.model().rowCount() == 5
    np.testing.assert_array_equal(doc.matrix("X")[:4], x)
    assert e.title.accessibleName().startswith("X  (n × d_model = 5 × 4)")
    qtbot.mouseClick(e.remove_token_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(e.remove_token_button, Qt.MouseButton.LeftButton)
    assert e.table.model().rowCount() == 3
    for _ in range(3):
        doc.undo_stack.undo()
    np.testing.assert_array_equal(doc.matrix("X"), x)
    assert e.table.model().rowCount() == 4 and doc.tokens[1] == "dog"


def test_head_tabs_follow_the_inspected_head_and_select_it(editor, doc):
    wq, wk, wo = editor("W_Q"), editor("W_K"), editor("W_O")
    assert wq.table.objectName() == "editor.W_Q"
    assert wq.title.accessibleName() == "W_0^Q  (d_model × d_k = 4 × 2)"
    # shown typeset: W₀^Q and d_model with real sub- and superscripts
    assert (
        wq.title.text() == "W<sub>0</sub><sup>Q</sup>  (d<sub>model</sub> × d<sub>k</sub> = 4 × 2)"
    )
    doc.set_head(1)
    assert wq.tabs.currentIndex() == 1 and wk.tabs.currentIndex() == 1
    assert wq.title.accessibleName().startswith("W_1^Q")
    np.testing.assert_array_equal(
        [[float(t) for t in row] for row in cell_texts(wq.table)], doc.matrix("W_Q")[1]
    )
    header = wo.table.model().headerData
    assert [header(r, Qt.Orientation.Vertical) for r in range(4)] == [
        "h0·0",
        "h0·1",
        "h1·0",
        "h1·1",
    ]
    bold = [bool(header(r, Qt.Orientation.Vertical, Qt.ItemDataRole.FontRole)) for r in range(4)]
    assert bold == [False, False, True, True]
    wk.tabs.setCurrentIndex(0)  # choosing a K head inspects it
    assert doc.view.head == 0 and wq.tabs.currentIndex() == 0


def test_gqa_kv_tabs_show_groups(qtbot):
    doc = Document(load_preset("gqa"))
    e = MatrixEditor(doc, "W_K")
    qtbot.addWidget(e)
    assert e.tabs.count() == 2
    assert "shared by heads 0–3" in e.title.accessibleName()
    doc.set_head(5)
    assert e.tabs.currentIndex() == 1 and "heads 4–7" in e.title.accessibleName()


def test_bias_row_appears_with_biases_and_takes_paste(editor, doc):
    e = editor("W_Q", bias="b_Q")
    assert not e.bias_table.isVisible()
    doc.set_config(bias=True)
    assert e.bias_table.isVisible() and e.bias_table.objectName() == "editor.b_Q"
    doc.set_head(1)
    e.bias_table.setCurrentIndex(e.bias_table.model().index(0, 0))
    assert e.bias_table.paste_text("0.5\t-0.5")
    np.testing.assert_array_equal(doc.matrix("b_Q")[1], [0.5, -0.5])
    assert e.bias_table.model().setData(e.bias_table.model().index(0, 1), "2")
    assert doc.matrix("b_Q")[1, 1] == 2


def test_cells_are_tinted_by_value(editor, doc):
    e = editor("X")
    m = e.table.model()
    hi = m.index(1, 1).data(Qt.ItemDataRole.BackgroundRole)  # X[1,1] = 2, the maximum
    zero = m.index(0, 1).data(Qt.ItemDataRole.BackgroundRole)
    assert hi.red() > hi.blue() and hi.alpha() < 255
    assert abs(zero.red() - zero.blue()) < 10  # zero is the neutral middle colour


def test_typing_in_the_cell_editor_commits_on_enter_and_letters_are_refused(editor, doc, qtbot):
    from PySide6.QtWidgets import QLineEdit

    e = editor("X")
    table = e.table
    index = table.model().index(3, 0)
    table.setCurrentIndex(index)
    table.edit(index)
    line = table.viewport().findChild(QLineEdit)
    assert line is not None and line.text() == "0"
    line.selectAll()
    qtbot.keyClicks(line, "x-0.5y")  # x and y can never be part of a number
    assert line.text() == "-0.5"
    qtbot.keyClick(line, Qt.Key.Key_Return)  # the delegate commits on the next event turn
    qtbot.waitUntil(lambda: doc.matrix("X")[3, 0] == -0.5, timeout=1000)
    assert table.model().index(3, 0).data() == "-0.5"
    # a number beyond range is let through the editor and refused by the model
    messages = []
    e.message.connect(messages.append)
    table.edit(index)
    line = table.viewport().findChild(QLineEdit)
    line.selectAll()
    qtbot.keyClicks(line, "5e9")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(messages), timeout=1000)
    assert doc.matrix("X")[3, 0] == -0.5 and "beyond" in messages[-1]
    assert doc.undo_stack.count() == 1


def test_token_tooltips_show_the_token_literally(editor, doc):
    from PySide6.QtGui import QTextDocument

    doc.set_token(0, "<s>")
    e = editor("X")
    model = e.table.model()
    rendered = QTextDocument()
    rendered.setHtml(model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole))
    assert "'<s>'" in rendered.toPlainText()
    rendered.setHtml(model.headerData(0, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole))
    assert "token 0: '<s>'" in rendered.toPlainText()
    assert model.headerData(0, Qt.Orientation.Vertical) == "<s>"


def test_typed_text_is_parsed_once(qtbot, doc, monkeypatch):
    """setData parses the text; the document is handed the number, not the text again."""
    import mha_gui.document.document
    import mha_gui.views.editors.matrix_model as matrix_model
    from mha_gui.engine.layer.values import parse_value

    texts = []

    def counting(value):
        if isinstance(value, str):
            texts.append(value)
        return parse_value(value)

    monkeypatch.setattr(matrix_model, "parse_value", counting)
    monkeypatch.setattr(mha_gui.document.document, "parse_value", counting, raising=False)
    monkeypatch.setattr(type(doc), "check_value", staticmethod(lambda v: counting(v) and None))
    model = matrix_model.MatrixModel(doc, "X", doc)
    assert model.setData(model.index(0, 1), " 2,5 ")
    assert doc.matrix("X")[0, 1] == 2.5
    assert texts == [" 2,5 "]
    reasons = []
    model.rejected.connect(reasons.append)
    assert not model.setData(model.index(0, 1), "abc")
    assert texts == [" 2,5 ", "abc"] and "not a number" in reasons[0]
    assert doc.matrix("X")[0, 1] == 2.5
