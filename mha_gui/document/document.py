"""The Qt-side model: owns the session, its cached trace and the undo stack.

Views never write arrays. They call the methods here, each of which pushes a
QUndoCommand whose redo() performs the change; the document then emits one signal per
kind of change (values, shape, config, tokens, view) and only when something really
changed. Recomputation is coalesced: any number of edits in one event-loop turn cost one
incremental refresh and one `traceChanged`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from mha_gui.document.commands import ReplaceSessionCommand, SetTokensCommand, SetValuesCommand
from mha_gui.document.recompute import Recompute
from mha_gui.document.saving import BackgroundSave
from mha_gui.engine.config import Config
from mha_gui.engine.incremental import IncrementalTrace
from mha_gui.engine.parameters import (
    Parameters,
    random_parameters,
    resize_mask,
    resize_parameters,
)
from mha_gui.engine.presets import DEFAULT_PRESET, load_preset
from mha_gui.engine.session import (
    Session,
    ViewState,
    default_tokens,
    load_session,
    same_array,
    save_session,
)
from mha_gui.engine.stages import STAGES
from mha_gui.engine.values import parse_value

# Parameters whose first axis is a head (or K/V group) index.
HEADED = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V")


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class Document(Recompute, BackgroundSave, QObject):
    """The session being edited, read through a read-only surface (config, tokens, view,
    mask, `matrix()`, `parameters`, `trace()`, `contribution()`), written through methods
    that push undo commands, and observed through one signal per kind of change."""

    valuesChanged = Signal(str)  # a matrix's numbers changed (its name)
    shapeChanged = Signal()  # some array changed shape: views rebuild their models
    configChanged = Signal()  # any config field changed (causal, scale, bias, dims…)
    tokensChanged = Signal()
    maskChanged = Signal()  # the extra block mask changed (the causal switch is config)
    viewChanged = Signal()  # stage, inspected head or query token
    # recomputed: a TraceChange (the query heads whose Z changed, with .contributions),
    # or None when everything changed
    traceChanged = Signal(object)
    fileStateChanged = Signal()  # path or modified flag
    busyChanged = Signal(bool)  # a large layer is being recomputed off the UI thread
    computeFailed = Signal(str)  # a recompute raised (e.g. overflow): the reason
    saveFinished = Signal(str, str)  # a background save ended: its path, "" or the error

    def __init__(self, session: Session | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session if session is not None else load_preset(DEFAULT_PRESET)
        self.preset_name: str | None = DEFAULT_PRESET if session is None else None
        self.path: Path | None = None
        # the model folder and sentence of File ▸ Open model… (an engine ModelOrigin) while
        # its layer is the open session; None for presets and files (the model view reads it)
        self.model_origin = None
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self.fileStateChanged)
        self._engine = IncrementalTrace(self.session)
        self._changed_heads: set[int] | None = set()
        self._changed_contributions: set[int] = set()
        self._contributions: dict[int, np.ndarray] = {}  # head → Z_i W_O[i], until stale
        self.opened_count = 0  # sessions opened: a background save ending knows if it is ours
        self._init_recompute()
        self._init_saving()

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
        return _readonly(self.session.params.as_dict()[name])

    @property
    def parameters(self) -> Parameters:
        """Every parameter as read-only views (for explanations that read several)."""
        return Parameters(**{k: _readonly(v) for k, v in self.session.params.as_dict().items()})

    @property
    def mask(self) -> np.ndarray | None:
        """The extra n×n block mask (True = blocked), read-only; None when there is none."""
        return None if self.session.mask is None else _readonly(self.session.mask)

    def snapshot(self) -> Session:
        """A copy of the whole session, to save or export without holding the live one."""
        return self.session.copy(trusted=True)

    def contribution(self, head: int) -> np.ndarray:
        """C_i = Z_i W_O[i·d_v:(i+1)·d_v, :], head i's share of Y (read-only), computed
        once per change of Z_i or of that block of W_O: a one-head edit at the output
        stage recomputes one contribution, not h."""
        trace = self.trace()
        cached = self._contributions.get(head)
        if cached is None:
            d_v = self.config.d_v
            cached = _readonly(trace.heads[head] @ trace.w_o[head * d_v : (head + 1) * d_v])
            self._contributions[head] = cached
        return cached

    @property
    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def display_name(self) -> str:
        if self.path is not None:
            return self.path.name
        return f"{self.preset_name} (preset)" if self.preset_name else "untitled"

    # ------------------------------------------------------------------ editing ----
    def set_value(self, name: str, index: tuple, value, merge_key=None) -> bool:
        """Set one cell from a number or text; False (nothing changes) if not acceptable.

        Raises nothing for bad text: the caller asks `check_value` for the reason.
        """
        try:
            number = parse_value(value)
        except ValueError:
            return False
        current = self.session.params.as_dict()[name][index]
        if float(current) == number:
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

    def set_block(
        self,
        name: str,
        head: int | None,
        row: int,
        col: int,
        block: np.ndarray,
        label: str = "Paste",
    ) -> None:
        """Write a 2-D block at (row, col) of a matrix (of `head`'s slice for W_Q/K/V).

        Raises ValueError, changing nothing, if the block does not fit or holds bad values.
        """
        full = self.session.params.as_dict()[name]
        target = full[head] if head is not None else full
        block = np.atleast_2d(np.asarray(block, dtype=np.float64))
        flat = target.ndim == 1  # a bias row: b_O, or one head's b_Q/b_K/b_V
        if flat:
            target = target[None, :]
        rows, cols = target.shape
        if row < 0 or col < 0 or row + block.shape[0] > rows or col + block.shape[1] > cols:
            raise ValueError(
                f"a {block.shape[0]}×{block.shape[1]} block does not fit in {name} "
                f"({rows}×{cols}) at row {row + 1}, column {col + 1}"
            )
        for v in block.flat:
            parse_value(float(v))
        if flat:
            index: tuple = (slice(col, col + block.shape[1]),)
            block = block[0]
        else:
            index = (slice(row, row + block.shape[0]), slice(col, col + block.shape[1]))
        if head is not None:
            index = (head, *index)
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
        self.undo_stack.push(
            SetValuesCommand(self, name, (Ellipsis,), value, label or f"Set {name}")
        )

    def set_tokens(self, tokens: list[str]) -> None:
        from mha_gui.engine.session import validate_tokens

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

        Raises ValueError (nothing changes) for impossible combinations.
        """
        old = self.config
        new = (config or old).with_changes(**changes) if changes else (config or old)
        if new == old:
            return
        params = self.session.params
        if new.parameter_shapes() != old.parameter_shapes():
            params = resize_parameters(params, old, new, seed=new.n * 131 + new.d_model)
        tokens = self.tokens[: new.n] + default_tokens(new.n)[len(self.tokens[: new.n]) :]
        view = ViewState(
            self.view.stage, min(self.view.head, new.h - 1), min(self.view.query, new.n - 1)
        )
        session = Session(
            new,
            tokens,
            params.copy(),
            view,
            resize_mask(self.session.mask, new.n),
            source=self.session.source,  # an edited model layer still names its model
        )
        self.undo_stack.push(ReplaceSessionCommand(self, session, label))

    def set_mask(self, mask: np.ndarray | None, label: str = "Edit mask") -> None:
        """Replace the extra n×n block mask (True = blocked; None = no extra mask).

        One undo step; raises ValueError (nothing changes) for a wrong shape or dtype.
        The causal switch stays separate: a position is blocked if either blocks it.
        """
        n = self.config.n
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.shape != (n, n):
                raise ValueError(f"a mask must be a boolean {n}×{n} matrix")
            if not mask.any():
                mask = None
        current = self.session.mask
        if (mask is None and current is None) or (
            mask is not None and current is not None and np.array_equal(mask, current)
        ):
            return
        s = self.session
        session = Session(s.config, list(s.tokens), s.params.copy(), s.view, mask, s.source)
        self.undo_stack.push(ReplaceSessionCommand(self, session, label))

    def toggle_blocked(self, query: int, key: int) -> None:
        """Block or unblock one (query, key) pair of the extra mask, as one undo step."""
        n = self.config.n
        if not (0 <= query < n and 0 <= key < n):
            raise ValueError(f"({query}, {key}) is outside the {n}×{n} mask")
        mask = np.zeros((n, n), bool) if self.session.mask is None else self.session.mask.copy()
        mask[query, key] = not mask[query, key]
        verb = "Block" if mask[query, key] else "Unblock"
        self.set_mask(mask, f"{verb} {self.tokens[query]} → {self.tokens[key]}")

    def set_causal(self, causal: bool) -> None:
        self.set_config(
            causal=bool(causal), label="Causal mask on" if causal else "Causal mask off"
        )

    def set_ablated(self, head: int, off: bool) -> None:
        """Switch query head `head` off (Z_i = 0) or back on, as one undo step."""
        h = self.config.h
        if not 0 <= head < h:
            raise ValueError(f"head {head} is out of range: this layer has heads 0..{h - 1}")
        heads = set(self.config.ablate)
        heads = heads | {head} if off else heads - {head}
        verb = "Switch off" if off else "Switch on"
        self.set_config(ablate=tuple(sorted(heads)), label=f"{verb} head {head}")

    def set_rope(self, on: bool, theta: float | None = None) -> None:
        """Rotary position embeddings on or off (and their base θ), as one undo step;
        ValueError (nothing changes) when d_k is odd or θ is not a positive number."""
        changes: dict = {"rope": bool(on)}
        if theta is not None:
            changes["rope_theta"] = theta
        self.set_config(label="RoPE on" if on else "RoPE off", **changes)

    def randomize(self, seed: int = 0, include_x: bool = False) -> None:
        fresh = random_parameters(self.config, seed=seed)
        params = (
            fresh
            if include_x
            else Parameters(**{**fresh.as_dict(), "X": self.session.params.X.copy()})
        )
        session = Session(self.config, self.tokens, params, self.view, self.session.mask)
        self.undo_stack.push(ReplaceSessionCommand(self, session, "Randomize weights"))

    def reset_to_preset(self, name: str | None = None) -> None:
        name = name or self.preset_name or DEFAULT_PRESET
        session = load_preset(name)
        self.undo_stack.push(ReplaceSessionCommand(self, session, f"Reset to {name}"))

    # ------------------------------------------------------------ view state --------
    def set_stage(self, stage: int) -> None:
        self._set_view(stage=max(0, min(int(stage), len(STAGES) - 1)))

    def set_head(self, head: int) -> None:
        self._set_view(head=max(0, min(int(head), self.config.h - 1)))

    def set_query(self, query: int) -> None:
        self._set_view(query=max(0, min(int(query), self.config.n - 1)))

    def _set_view(self, **changes) -> None:
        v = self.session.view
        new = ViewState(
            changes.get("stage", v.stage),
            changes.get("head", v.head),
            changes.get("query", v.query),
        )
        if new != v:
            self.session.view = new
            self.viewChanged.emit()

    # ------------------------------------------------------------------ files -------
    def open_session(
        self,
        session: Session,
        path: Path | None = None,
        preset: str | None = None,
        origin=None,
        *,
        owned: bool = False,
    ) -> None:
        """Start over on another session: a new file, so the undo history is cleared.
        `origin`: the ModelOrigin of a real model's layer (File ▸ Open model…).
        `owned=True`: the caller hands `session` over (made for this call, e.g. just read
        from a file, and kept by nobody else): it is checked again but not copied, which
        at n = 2048 spares the window a 28 MB copy."""
        fresh = session.checked() if owned else session.copy()  # refused: nothing changes
        self.opened_count += 1
        self.model_origin = origin
        self.undo_stack.clear()
        self._replace(fresh)
        self.path = Path(path) if path is not None else None
        self.preset_name = preset
        self.undo_stack.setClean()
        self.fileStateChanged.emit()

    def open_file(self, path) -> None:
        self.open_session(load_session(path), path=Path(path), owned=True)

    def open_preset(self, name: str) -> None:
        self.open_session(load_preset(name), preset=name, owned=True)

    def save(self, path=None) -> Path:
        target = self.save_target(path)
        self.wait_for_saves()  # an older background write must not land on top of this
        save_session(self.session, target)
        self.path = target
        self.preset_name = None
        self.undo_stack.setClean()
        self.fileStateChanged.emit()
        return target

    # -------------------------------------------------------------- internals -------
    def _write(self, name: str, index: tuple, value: np.ndarray) -> None:
        self._before_write()  # the worker may be reading these very arrays
        array = self.session.params.as_dict()[name]
        array[index] = value
        head = index[0] if name in HEADED and isinstance(index[0], (int, np.integer)) else None
        self._mark(name, None if head is None else int(head))
        if name == "W_O":
            self._changed_contributions |= self._w_o_heads(index[0])
        self.valuesChanged.emit(name)
        self._schedule()

    def _w_o_heads(self, rows) -> set[int]:
        """The heads whose row block of W_O an edit at `rows` touched."""
        d_v, h = self.config.d_v, self.config.h
        if isinstance(rows, (int, np.integer)):
            return {int(rows) // d_v}
        if isinstance(rows, slice):
            start, stop, _ = rows.indices(h * d_v)
            return set(range(start // d_v, (max(stop, start + 1) - 1) // d_v + 1))
        return set(range(h))

    def _set_tokens(self, tokens: list[str]) -> None:
        self.session.tokens = list(tokens)
        self.tokensChanged.emit()

    def _replace(self, session: Session) -> None:
        old = self.session
        self.session = session
        if self.busy:
            self._queued.append(("reset", session))
        else:
            self._engine.reset(session)
        self._changed_heads = None
        shape = old.config.parameter_shapes() != session.config.parameter_shapes()
        if shape:
            self.shapeChanged.emit()
        if old.config != session.config:
            self.configChanged.emit()
        if not shape:
            for name, array in session.params.as_dict().items():
                if not np.array_equal(array, old.params.as_dict().get(name)):
                    self.valuesChanged.emit(name)
        if old.tokens != session.tokens:
            self.tokensChanged.emit()
        if not same_array(old.mask, session.mask):
            self.maskChanged.emit()
        if old.view != session.view:
            self.viewChanged.emit()
        self._schedule()
