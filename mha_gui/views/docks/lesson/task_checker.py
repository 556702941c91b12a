"""A lesson step's task against the document: Check (a condition on the window's
numbers, or a typed value graded at the precision its panel shows), the answer Show me
reveals, and Show me's edits (ordinary undoable edits, one undo step).

`TaskChecker(document)` changes nothing but through the document's public edit API;
the lesson panel shows what it answers."""

from __future__ import annotations

import numpy as np

from mha_gui.engine.layer.numbers import num
from mha_gui.engine.lessons import Step, evaluate
from mha_gui.engine.lessons.check import query_position, situation
from mha_gui.engine.lessons.conditions import cell_value
from mha_gui.engine.panels.stage_panels import describe_stage
from mha_gui.engine.teaching.exercises import check_answer, shown_tolerance

# the stage whose panels show a kind of cell (a typed answer is graded at its precision)
KIND_STAGE = {"X": 0, "Q": 1, "K": 1, "V": 1, "S": 2, "A": 3, "Z": 4, "H": 5, "Y": 6, "C": 6}


class TaskChecker:
    def __init__(self, document):
        self.document = document

    def _here(self):
        doc = self.document
        return situation(doc.session, doc.view, doc.trace())

    def passes(self, step: Step) -> bool | None:
        """Whether the step's condition holds on the document's numbers now; None for an
        answer task (graded from what was typed) or no task."""
        if step.do is None or step.do.tree is None:
            return None
        return evaluate(step.do.tree, self._here())

    def check(self, step: Step, typed: str) -> tuple[bool, str]:
        """(right, what to say); ValueError when the task names what no longer exists."""
        task = step.do
        if task.tree is not None:
            if self.passes(step):
                return True, "Right!"
            return False, "Not yet: " + task.task[0].lower() + task.task[1:]
        return self.grade(step, typed)

    def grade(self, step: Step, typed: str) -> tuple[bool, str]:
        """A typed value against the cell the task asks for, within the tolerance the
        task gives or the precision its panel shows."""
        cell = step.do.answer
        value = cell_value(cell, self._here())
        tolerance = step.do.tolerance
        if tolerance is None:
            fmt = describe_stage(self.document, KIND_STAGE[cell.kind]).fmt
            tolerance = shown_tolerance(fmt)
        text = typed.strip()
        if not text:
            raise ValueError("Type a value first.")
        if not np.isfinite(value):
            right = text.replace("−", "-").lower() in (num(value), "-inf", "inf")
        else:
            right = check_answer(text, value, tolerance)
        if right:
            return True, f"Right: {cell.text()} = {num(value)}"
        return False, f"Not {text}: try again, or ask for a hint"

    def answer(self, step: Step) -> str:
        """The value an answer task asks for, as the panel would show it."""
        return num(cell_value(step.do.answer, self._here()))

    def show_me(self, step: Step) -> None:
        """Apply the task's Show me: its edits as one undo step ("Show me: …"), then the
        stage, head and query it names (view state). ValueError if an edit is refused."""
        task, doc = step.do, self.document
        me = task.show_me
        label = f"Show me: {task.task}"
        stack = doc.undo_stack
        stack.beginMacro(label)
        try:
            changes = me.config_changes()
            if changes:
                doc.set_config(label=label, **changes)
            for e in me.values:
                doc.set_value(e.matrix, e.at, e.value)
            if me.block:
                n = doc.config.n
                mask = np.zeros((n, n), bool) if doc.mask is None else np.array(doc.mask)
                for q, k in me.block:
                    mask[query_position(q, doc.tokens), query_position(k, doc.tokens)] = True
                doc.set_mask(mask, label)
        finally:
            stack.endMacro()
        if me.stage is not None:
            doc.set_stage(me.stage)
        if me.head is not None:
            doc.set_head(me.head)
        if me.query is not None:
            doc.set_query(query_position(me.query, doc.tokens))
