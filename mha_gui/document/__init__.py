"""The Qt-side model of the layer being edited (model–view–controller's M).

document.py   Document: owns the session, the undo stack and its two parts below; the
              set_* methods views call, the write_* methods commands call; one signal
              per kind of change
commands.py   the undo commands every user edit goes through
cells.py      which parameters are per head, and which heads an edit's index touches
sessions.py   the sessions and masks an edit asks for, and the signals a new session emits
recompute.py  Recompute (document.recompute): when and where the trace is recomputed
saving.py     BackgroundSave (document.saver): File ▸ Save of large layers on a writer
              thread, shared snapshots
later.py      Later: work done once on the next event-loop turn

EVERYTHING is the one spelling of "every head changed" (what `traceChanged` carries
when a change is not confined to some heads); it is None.
"""

from mha_gui.document.document import Document
from mha_gui.document.later import Later
from mha_gui.engine.attention.incremental import EVERYTHING

__all__ = ["EVERYTHING", "Document", "Later"]
