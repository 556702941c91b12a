"""A lesson as printable lecture notes: one A4 page per step — the step's title and
text, its task and hint, and the figure of what the step shows (the stage figure of the
numbers the step opens, at its stage, inspected head and query), and on a step without a
task, in the room left, the followed query's worked example (as the stage handout
prints it; a task's step would give its answer away) — then a page of answers for the
teacher (each task's condition or the value to type, and what Show me does).

The page machinery is the stage handout's (export/handout.py: A4 in points, margins,
the QPdfWriter and its painter); the figure is the PDF export's scene without its title
block. Light theme only: it is printed. Written atomically: a failure leaves no file.
"""

from __future__ import annotations

from pathlib import Path

from mha_gui import theme
from mha_gui.engine.layer.numbers import num
from mha_gui.engine.layer.session import atomic_write
from mha_gui.engine.lessons.check import StepState, situation, with_view
from mha_gui.engine.lessons.conditions import cell_value
from mha_gui.engine.lessons.format import Lesson, Step
from mha_gui.engine.lessons.markup import to_html
from mha_gui.engine.panels.stages import STAGES
from mha_gui.engine.teaching.worked_example import worked_example
from mha_gui.export import figure
from mha_gui.export.handout import MARGIN, PAGE_H, PAGE_W, draw_worked_example
from mha_gui.export.painter import painter_on
from mha_gui.export.text import qcolor

TEXT_PX = 10.5
MIN_FIGURE_H = 200.0  # points: below this the figure would not be readable on paper


def write_lesson_handout(path, lesson: Lesson, states: list[StepState], **kw) -> int:
    """Write the handout of a checked lesson (`check_lesson`'s states) to `path`
    atomically; the number of pages."""
    pages = len(states) + 1
    atomic_write(Path(path), lambda tmp: _write(tmp, lesson, states, **kw))
    return pages


def _write(path, lesson: Lesson, states, colormap: str = theme.DEFAULT_COLORMAP) -> None:
    from PySide6.QtCore import QRectF

    figure.ensure_app()
    pal = theme.palette("light")
    writer = figure.pdf_writer(path, PAGE_W, PAGE_H, lesson.title)
    total = len(states) + 1
    with painter_on(writer, "the handout", path) as painter:
        unit = writer.resolution() / 72.0
        for k, state in enumerate(states):
            if k:
                writer.newPage()
            painter.resetTransform()
            painter.scale(unit, unit)
            painter.fillRect(QRectF(0, 0, PAGE_W, PAGE_H), qcolor(pal.background))
            _step_page(painter, lesson, state, pal, colormap)
            _footer(painter, lesson, k + 1, total, pal)
        writer.newPage()
        painter.resetTransform()
        painter.scale(unit, unit)
        painter.fillRect(QRectF(0, 0, PAGE_W, PAGE_H), qcolor(pal.background))
        _answers_page(painter, lesson, states, pal)
        _footer(painter, lesson, total, total, pal)


def _html_block(painter, x: float, y: float, width: float, html: str, px: float, color: str):
    """Rich text (the lesson's own markup, already escaped) wrapped to `width`; the height."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(figure.make_font(px))
    doc.setDefaultStyleSheet(f"p, li {{ color: {color}; }} p {{ margin-bottom: 6px; }}")
    doc.setTextWidth(width)
    doc.setHtml(f'<div style="color:{color}">{html}</div>')
    if painter is not None:
        painter.save()
        painter.translate(x, y)
        doc.drawContents(painter)
        painter.restore()
    return doc.size().height()


def _step_page(painter, lesson: Lesson, state: StepState, pal, colormap: str) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPen

    step = state.step
    inner = PAGE_W - 2 * MARGIN
    y = MARGIN
    figure.draw_rich(painter, MARGIN, y, _head_line(lesson, step), 8.5, pal.muted)
    y += 16
    figure.draw_rich(painter, MARGIN, y, f"{step.number}. {step.title}", 18, pal.text, True)
    y += 30
    y += _html_block(painter, MARGIN, y, inner, to_html(step.text), TEXT_PX, pal.text) + 6
    if step.do is not None:
        task_html = f"<p><b>Task:</b> {_inline(step.do.task)}</p>" + (
            f"<p><i>Hint:</i> {_inline(step.do.hint)}</p>"
        )
        height = _html_block(None, 0, 0, inner - 16, task_html, TEXT_PX, pal.text)
        box = QRectF(MARGIN, y, inner, height + 12)
        painter.save()
        painter.setPen(QPen(qcolor(pal.muted), 0.8))
        painter.drawRoundedRect(box, 4, 4)
        painter.restore()
        _html_block(painter, MARGIN + 8, y + 6, inner - 16, task_html, TEXT_PX, pal.text)
        y += box.height() + 10
    session = with_view(state.session, state.view)
    stage = STAGES[state.view.stage]
    caption = f"{stage.heading}: {_formula(stage, session)}"
    figure.draw_rich(painter, MARGIN, y, caption, 11, pal.text, True)
    y += 18
    trace = session.run()
    scene = figure.build_scene(session, stage, query=state.view.query, trace=trace)
    lay = figure.layout_scene(scene, vector=True, header=False)
    bottom = PAGE_H - MARGIN - 30
    room = max(MIN_FIGURE_H, bottom - y)
    s = min(inner / lay.width, room / lay.height)
    painter.save()
    painter.translate(MARGIN + (inner - lay.width * s) / 2, y)
    painter.scale(s, s)
    figure.paint_scene(painter, lay, "light", colormap)
    painter.restore()
    y += lay.height * s + 8
    note = _pointer_note(step)
    if note and y < PAGE_H - MARGIN - 20:
        figure.draw_rich(painter, MARGIN, y, note, 9, pal.muted)
        y += 14
    if step.do is None:  # a step with a task keeps its answer to itself
        example = worked_example(session, stage, state.view.head, state.view.query, trace)
        draw_worked_example(painter, example, y + 12, pal)


def _formula(stage, session) -> str:
    from mha_gui.engine.panels.stages import formula_for

    return formula_for(stage, session.config)


def _inline(text: str) -> str:
    from mha_gui.engine.lessons.markup import inline_html

    return inline_html(text)


def _head_line(lesson: Lesson, step: Step) -> str:
    return f"{lesson.title} · step {step.number} of {len(lesson.steps)}"


def _pointer_note(step: Step) -> str:
    """What the window points at, said in words under the figure."""
    p = step.point
    parts = [c.text() for c in p.cells]
    if p.panel:
        parts.append(p.panel)
    if p.control:
        parts.append(f"the control '{p.control}'")
    if not parts and not p.callout:
        return ""
    where = ", ".join(parts)
    return (
        "In the window: " + (f"{where}" if where else "") + (f" — {p.callout}" if p.callout else "")
    )


def _answers_page(painter, lesson: Lesson, states, pal) -> None:
    inner = PAGE_W - 2 * MARGIN
    y = MARGIN
    figure.draw_rich(painter, MARGIN, y, f"{lesson.title} · for the teacher", 8.5, pal.muted)
    y += 16
    figure.draw_rich(painter, MARGIN, y, "Answers", 18, pal.text, True)
    y += 30
    items = []
    for state in states:
        task = state.step.do
        if task is None:
            continue
        if task.answer is not None:
            here = situation(state.session, state.view, state.session.run())
            solution = (
                f"{_inline(task.answer.text())} = <b>{num(cell_value(task.answer, here))}</b>"
            )
        else:
            solution = f"checked: <code>{_inline(task.condition)}</code>"
        items.append(
            f"<li><b>Step {state.step.number}</b>: {_inline(task.task)}<br>{solution}</li>"
        )
    if not items:
        items.append("<li>This lesson has no tasks.</li>")
    html = "<p>Each task as the app checks it:</p><ul>" + "".join(items) + "</ul>"
    _html_block(painter, MARGIN, y, inner, html, TEXT_PX, pal.text)


def _footer(painter, lesson: Lesson, page: int, total: int, pal) -> None:
    from PySide6.QtCore import QRectF, Qt

    painter.setFont(figure.make_font(8))
    painter.setPen(qcolor(pal.muted))
    name = lesson.name or Path(lesson.file).name
    painter.drawText(
        QRectF(MARGIN, PAGE_H - MARGIN + 8, PAGE_W - 2 * MARGIN, 14),
        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
        f"mha-gui lesson {name} · page {page} of {total}",
    )
