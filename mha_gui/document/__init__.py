"""The Qt-side model of the layer being edited (model–view–controller's M).

document.py   Document: owns the session, the undo stack and the incremental trace;
              emits one signal per kind of change
commands.py   the undo commands every user edit goes through
recompute.py  when and where the trace is recomputed (UI thread or a worker)
saving.py     File ▸ Save of large layers on a writer thread
"""

from mha_gui.document.document import Document

__all__ = ["Document"]
