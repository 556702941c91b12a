"""The Qt-side model: owns the session, its cached trace and the undo stack.

Views never write arrays. An edit goes one way: a view calls a `set_*` method here (the
numbers already parsed and checked by the view), which pushes one undo command; the
command's redo() and undo() apply it through the `write_*` methods (and
`replace_session`), the only code that changes the session; each tells the recompute
part what it touched, and the document emits one signal per kind of change (values,
shape, config, tokens, mask, view), only when something really changed. Recomputation
is coalesced: any number of edits in one event-loop turn cost one incremental refresh
and one `traceChanged`.

The document is assembled from three parts it owns, each given what it needs:
`self.recompute` (recompute.py: the incremental trace, on a worker for large layers),
`self.saver` (saving.py: background File ▸ Save and shared snapshots) and `self.files`
(files.py: opening sessions, files and presets; where a save writes).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from mha_gui.document import sessions
from mha_gui.document.cells import block_index, edited_head, readonly, w_o_heads
from mha_gui.document.commands import (
    ReplaceSessionCommand,
    SetAblatedCommand,
    SetMaskCommand,
    SetTokensCommand,
    SetValuesCommand,
    UndoHistory,
)
from mha_gui.document.files import Files
from mha_gui.document.recompute import Recompute
from mha_gui.document.saving import BackgroundSave
from mha_gui.engine.attention.forward import Trace
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.parameters import Parameters
from mha_gui.engine.layer.presets import DEFAULT_PRESET, load_preset
from mha_gui.engine.layer.session import (
    Session,
    ViewState,
    same_array,
    validate_tokens,
)
from mha_gui.engine.layer.values import parse_value
from mha_gui.engine.panels.stages import STAGES


class Document(QObject):
    """The session being edited, read through a read-only surface (config, tokens, view,
    mask, `matrix()`, `parameters`, `trace()`, `contribution()`), edited through the
    `set_*` methods (one undo command each), changed only by those commands through the
    `write_*` methods, and observed through one signal per kind of change. Made on a
    session (taken as is: the document edits it) or the default preset; `path`, `preset`
    and `origin` say where it came from, as for `open_session`."""

    valuesChanged = Signal(str)  # a matrix's numbers changed (its name)
    # Some array changed shape. Always followed, in the same call, by configChanged
    # (shapes follow from the config): a view that rebuilds on any config change needs
    # configChanged alone; shapeChanged is for models that must reset first.
    shapeChanged = Signal()
    # Any config field changed (causal, scale, bias, dims, RoPE, ablated heads…). Comes
    # after shapeChanged when shapes changed too, and also without it.
    configChanged = Signal()
    tokensChanged = Signal()
    maskChanged = Signal()  # the extra block mask changed (the causal switch is config)
    viewChanged = Signal()  # stage, inspected head or query token
    # recomputed: a TraceChange (the query heads whose Z changed, with .contributions),
    # or EVERYTHING (None) when everything changed
    traceChanged = Signal(object)
    fileStateChanged = Signal()  # path or modified flag
    busyChanged = Signal(bool)  # a large layer is being recomputed off the UI thread
    computeFailed = Signal(str)  # a recompute raised (e.g. overflow): the reason
    saveFinished = Signal(str, str)  # a background save ended: its path, "" or the error

    def __init__(
        self,
        session: Session | None = None,
        parent: QObject | None = None,
        *,
        path: Path | None = None,
        preset: str | None = None,
        origin=None,
    ):
        super().__init__(parent)
        self.session = session if session is not None else load_preset(DEFAULT_PRESET)
        self.preset_name: str | None = DEFAULT_PRESET if session is None else preset
        self.path: Path | None = None if path is None else Path(path)
        # the model folder and sentence of File ▸ Open model… (an engine ModelOrigin) while
        # its layer is the open session; None for presets and files (the model view reads it)
        self.model_origin = origin
        # how many sessions open_session has started: a view that opened one (a lesson
        # step) tells whether the session shown is still that one
        self.opened_count = 0
        self.undo_stack = UndoHistory(self)  # within a byte budget (commands.py)
        self.undo_stack.cleanChanged.connect(self.fileStateChanged)
        self.files = Files(self)
        self.saver = BackgroundSave(
            self, lambda: self.session, adopt=self.files.saved_as, finished=self.saveFinished.emit
        )
        self.recompute = Recompute(
            self,
            lambda: self.session,
            on_change=self.traceChanged.emit,
            on_busy=self.busyChanged.emit,
            on_failure=self.computeFailed.emit,
        )

    # ------------------------------------------------------------------ reading ----
    @property
    def config(self) -> Config:
        return self.session.config

    @property
    def tokens(self) -> list[str]:
        return list(self.session.tokens)

    @property
    def view(self) -> ViewState:
        return self.session.view

    def matrix(self, name: str) -> np.ndarray:
        """A read-only view of a parameter (X, W_Q, …); write through the set_* methods."""
        return readonly(self.session.params.as_dict()[name])

    @property
    def parameters(self) -> Parameters:
        """Every parameter as read-only views (for explanations that read several)."""
        return Parameters(**{k: readonly(v) for k, v in self.session.params.as_dict().items()})

    @property
    def mask(self) -> np.ndarray | None:
        """The extra n×n block mask (True = blocked), read-only; None when there is none."""
        return None if self.session.mask is None else readonly(self.session.mask)

    def snapshot(self) -> Session:
        """A copy of the whole session, to save or export without holding the live one."""
        return self.session.copy(trusted=True)

    def trace(self) -> Trace:
        """The up-to-date trace (see Recompute.trace: a large layer's may be waited for)."""
        return self.recompute.trace()

    def shown_trace(self) -> Trace:
        """The trace on screen: a large layer's last reported one, never recomputed on
        the UI thread (see Recompute.shown_trace); a small layer's is `trace()`."""
        return self.recompute.shown_trace()

    def contribution(self, head: int) -> np.ndarray:
        """C_i = Z_i W_O[i·d_v:(i+1)·d_v, :], head i's share of Y (read-only), computed
        once per change of Z_i or of that block of W_O: a one-head edit at the output
        stage recomputes one contribution, not h."""
        return self.recompute.contribution(head)

    # the recompute part's, under the names the views use (see Recompute)
    def frozen_data(self):
        return self.recompute.frozen_data()

    def run_off_thread(self, work, done) -> None:
        self.recompute.run_off_thread(work, done)

    @property
    def computing(self) -> bool:
        return self.recompute.computing

    @property
    def busy(self) -> bool:
        return self.recompute.busy  # the worker runs (a recompute or a view's preparation)

    @property
    def recompute_count(self) -> int:
        return self.recompute.count

    @property
    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def display_name(self) -> str:
        if self.path is not None:
            return self.path.name
        return f"{self.preset_name} (preset)" if self.preset_name else "untitled"

    # ------------------------------------------------------------ user edits ----
    # Each pushes one undo command (nothing when nothing would change); ValueError,
    # changing nothing, for what cannot be done.
    def set_value(self, name: str, index: tuple, value, merge_key=None) -> bool:
        """Set one cell (`index` into the whole parameter, see cells.cell_index) to a
        number; False (nothing changes) if it is not acceptable. The editors hand over
        numbers they parsed; text is accepted too, for scripts, and parsed here.

        Raises nothing for bad text: the caller asks `check_value` for the reason.
        """
        try:
            number = parse_value(value)  # a number is only checked: finite, in range
        except ValueError:
            return False
        if float(self.session.params.as_dict()[name][index]) == number:
            return True
        label = f"Edit {name}{list(index)}" if merge_key is None else f"Scrub {name}{list(index)}"
        self.undo_stack.push(
            SetValuesCommand(self, name, tuple(index), np.float64(number), label, merge_key)
        )
        return True

    @staticmethod
    def check_value(value) -> str | None:
        """Why `value` would be refused, or None if it is acceptable."""
        try:
            parse_value(value)
        except ValueError as exc:
            return str(exc)
        return None

    def set_block(self, name: str, head, row: int, col: int, block, label="Paste") -> None:
        """Write a 2-D block at (row, col) of a matrix (of `head`'s slice for the per-head
        parameters, cells.HEADED; `head` is ignored for the others).

        Raises ValueError, changing nothing, if the block does not fit or holds bad values.
        """
        full = self.session.params.as_dict()[name]
        index, block = block_index(name, full, head, row, col, block)
        if np.array_equal(full[index], block):
            return
        self.undo_stack.push(SetValuesCommand(self, name, index, block, f"{label} into {name}"))

    def set_matrix(self, name: str, value: np.ndarray, label: str | None = None) -> None:
        full = self.session.params.as_dict()[name]
        value = np.asarray(value, dtype=np.float64)
        if value.shape != full.shape:
            raise ValueError(f"{name} has shape {full.shape}, got {value.shape}")
        if np.array_equal(value, full):
            return
        label = label or f"Set {name}"
        self.undo_stack.push(SetValuesCommand(self, name, (Ellipsis,), value, label))

    def set_tokens(self, tokens: list[str]) -> None:
        tokens = validate_tokens(list(tokens), self.config.n)
        if tokens != self.session.tokens:
            self.undo_stack.push(SetTokensCommand(self, tokens, "Rename tokens"))

    def set_token(self, i: int, text: str) -> None:
        tokens = self.tokens
        tokens[i] = str(text).strip()
        self.set_tokens(tokens)

    def set_config(
        self, config: Config | None = None, label: str = "Change dimensions", **changes
    ) -> None:
        """Change dimensions or switches as one undo step, keeping every overlapping value.
        A change of the ablated heads alone is a SetAblatedCommand (recomputed in part).

        Raises ValueError (nothing changes) for impossible combinations.
        """
        old = self.config
        new = (config or old).with_changes(**changes) if changes else (config or old)
        if new == old:
            return
        if new == old.with_changes(ablate=new.ablate):
            self.undo_stack.push(SetAblatedCommand(self, new.ablate, label))
        else:
            session = sessions.resized(self.session, new)
            self.undo_stack.push(ReplaceSessionCommand(self, session, label))

    def set_mask(self, mask: np.ndarray | None, label: str = "Edit mask") -> None:
        """Replace the extra n×n block mask (True = blocked; None = no extra mask).

        One undo step; raises ValueError (nothing changes) for a wrong shape or dtype.
        The causal switch stays separate: a position is blocked if either blocks it.
        """
        mask = sessions.checked_mask(mask, self.config.n)
        if not same_array(mask, self.session.mask):
            self.undo_stack.push(SetMaskCommand(self, mask, label))

    def toggle_blocked(self, query: int, key: int) -> None:
        """Block or unblock one (query, key) pair of the extra mask, as one undo step."""
        mask = sessions.toggled(self.session.mask, self.config.n, query, key)
        verb = "Block" if mask[query, key] else "Unblock"
        self.set_mask(mask, f"{verb} {self.tokens[query]} → {self.tokens[key]}")

    def set_causal(self, causal: bool) -> None:
        self.set_config(causal=bool(causal), label=f"Causal mask {'on' if causal else 'off'}")

    def set_ablated(self, head: int, off: bool) -> None:
        """Switch query head `head` off (Z_i = 0) or back on, as one undo step."""
        heads = sessions.switched(self.config, head, off)
        self.set_config(ablate=heads, label=f"Switch {'off' if off else 'on'} head {head}")

    def set_rope(self, on: bool, theta: float | None = None) -> None:
        """Rotary position embeddings on or off (and their base θ), as one undo step;
        ValueError (nothing changes) when d_k is odd or θ is not a positive number."""
        changes: dict = {"rope": bool(on)}
        if theta is not None:
            changes["rope_theta"] = theta
        self.set_config(label="RoPE on" if on else "RoPE off", **changes)

    def randomize(self, seed: int = 0, include_x: bool = False) -> None:
        session = sessions.randomized(self.session, seed, include_x)
        self.undo_stack.push(ReplaceSessionCommand(self, session, "Randomize weights"))

    def reset_to_preset(self, name: str | None = None) -> None:
        name = name or self.preset_name or DEFAULT_PRESET
        session = load_preset(name)
        self.undo_stack.push(ReplaceSessionCommand(self, session, f"Reset to {name}"))

    # ------------------------------------------------- what commands apply ----
    # The only code that changes the session. Undo commands call these from redo() and
    # undo(), with numbers the set_* methods checked; views never do (no undo step).
    def values_at(self, name: str, index: tuple) -> np.ndarray:
        """A copy of what `write_values(name, index, …)` would overwrite (for its undo)."""
        return np.array(self.session.params.as_dict()[name][index], dtype=np.float64)

    def write_values(self, name: str, index: tuple, values: np.ndarray) -> None:
        """Write numbers into one parameter at `index`; only the heads that the index
        reaches are recomputed."""
        self._own_arrays()  # another thread may be reading these very arrays
        self.session.params.as_dict()[name][index] = values
        c = self.config
        reached = w_o_heads(index[0], c.d_v, c.h) if name == "W_O" else ()
        self.recompute.values_changed(name, edited_head(name, index), reached)
        self.valuesChanged.emit(name)
        self.recompute.schedule()

    def write_tokens(self, tokens: list[str]) -> None:
        self.session.tokens = list(tokens)  # replaced whole: a shared snapshot keeps its own
        self.tokensChanged.emit()

    def write_mask(self, mask: np.ndarray | None) -> None:
        """Replace the extra mask (None: none): only the query rows whose blocked keys
        changed are recomputed, in every head."""
        own = None if mask is None else np.array(mask, dtype=bool)
        self.session = sessions.twin(self.session, mask=own)
        self.recompute.switched(self.session)
        self.maskChanged.emit()
        self.recompute.schedule()

    def write_ablation(self, heads) -> None:
        """Switch off exactly the query heads `heads` (the others on): only the switched
        heads' Z (and Y) are recomputed."""
        config = self.config.with_changes(ablate=tuple(heads))
        self.session = sessions.twin(self.session, config=config)
        self.recompute.switched(self.session)
        self.configChanged.emit()
        self.recompute.schedule()

    def replace_session(self, session: Session) -> None:
        """Take `session` (the document's own from now on) and recompute everything."""
        old = self.session
        self.session = session
        self.recompute.reset(session)
        for signal, *args in sessions.changes(old, session):
            getattr(self, signal).emit(*args)
        self.recompute.schedule()

    def _own_arrays(self) -> None:
        """Before an edit in place, while another thread reads the document's arrays (the
        worker's first recompute of an opened layer, a file being written): the document
        moves to a copy first."""
        shared = self.session
        if self.recompute.reads(shared.params) or self.saver.reads(shared.params):
            self.session = shared.copy(trusted=True)
            self.recompute.moved(shared, reusable=not self.saver.reads(shared.params))

    # ------------------------------------------------------------ view state --------
    def set_stage(self, stage: int) -> None:
        self._set_view(stage=max(0, min(int(stage), len(STAGES) - 1)))

    def set_head(self, head: int) -> None:
        self._set_view(head=max(0, min(int(head), self.config.h - 1)))

    def set_query(self, query: int) -> None:
        self._set_view(query=max(0, min(int(query), self.config.n - 1)))

    def _set_view(self, **changes) -> None:
        new = dataclasses.replace(self.session.view, **changes)
        if new != self.session.view:
            self.session.view = new
            self.viewChanged.emit()

    # ------------------------------------------------------------------ files -------
    # the files part's (files.py), under the names the window uses
    def open_session(
        self, session: Session, path=None, preset=None, origin=None, *, owned: bool = False
    ) -> None:
        self.files.open_session(session, path, preset, origin, owned=owned)

    def open_file(self, path) -> None:
        self.files.open_file(path)  # a large file is read on a thread

    def open_preset(self, name: str) -> None:
        self.files.open_preset(name)

    def save_target(self, path=None) -> Path:
        return self.files.save_target(path)

    def save(self, path=None) -> Path:
        return self.files.save(path)  # now

    def start_save(self, path=None) -> Path:
        return self.files.start_save(path)  # on the writer thread: saveFinished when done

    # the saver's, under the names the window and autosave use (see BackgroundSave)
    def wait_for_saves(self) -> None:
        self.saver.wait()  # until every background save asked for is on disk

    @property
    def saving(self) -> bool:
        return self.saver.saving

    def wants_background_save(self) -> bool:
        return self.saver.wants_background()

    def shared_snapshot(self) -> Session:
        return self.saver.shared_snapshot()  # sharing the arrays until release(snapshot)

    def release(self, snapshot: Session) -> None:
        self.saver.release(snapshot)
