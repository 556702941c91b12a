"""Train one head's attention pattern by gradient descent (issue 10), NumPy only.

A student picks a head i and a target pattern T (n×n: "attend to the previous token",
"to the first token", …) and descends the cross-entropy between T's rows and the head's
attention rows. Only W_i^Q and the W_g^K of the head's key/value group g = g(i) move (and
b_i^Q, b_g^K with biases): the values, W_O and X never change.

The loss, exactly (so it can be checked by hand)::

    T̂[j,:] = T[j,:] / Σ_k T[j,k]                  rows normalised
    R      = {j : Σ_k T[j,k] > 0}                 rows that ask for something
    loss   = −(1/|R|) Σ_{j∈R} Σ_k T̂[j,k] · log A_i[j,k]

Its gradient with respect to the scores is the familiar "prediction minus target":
∂loss/∂S_i[j,:] = (A_i[j,:] − T̂[j,:]) / |R| for j in R (zero for the other rows), and it
flows back through S_i = scale · Q_i K_gᵀ, Q_i = X W_i^Q + b_i^Q, K_g = X W_g^K + b_g^K.
The smallest possible loss is the entropy of T̂'s rows (0 for one-hot rows), reached only
in the limit of infinitely sharp scores: `Trainer.floor` holds it.

Something the gradients teach: **without RoPE the key bias b_g^K gets a zero gradient,
whatever the numbers and the target.** It adds q_j · b_g^K · scale to every score of row
j — the same constant across the row — and a softmax does not change when a row is
shifted by a constant. So no target can ever be reached or missed through b^K (the query
bias b^Q, by contrast, does matter: it is dotted with different keys). With RoPE the key
bias is rotated differently at every position, so it is no longer a per-row constant and
its gradient is generally not zero.

Pure functions and small state objects, for the window's train panel and `mha-gui train`:

    target = make_target("previous", n, blocked)           # or load_target("t.npy", …)
    loss, grads = attention_loss(session, head, target)    # grads keyed like parameters
    trainer = Trainer(session, head, target)               # Adam, lr default_lr(config)
    losses = trainer.step(10)                              # one GUI timer tick
    trainer.plateau                                        # stuck away from the floor?
    trainer.changed()      # {"W_Q": full array, "W_K": …}: apply as one undo step
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mha_gui.engine import rope
from mha_gui.engine.forward import blocked_positions
from mha_gui.engine.parameters import VALUE_LIMIT, Parameters
from mha_gui.engine.session import Session

TARGET_KINDS = ("previous", "first", "self", "uniform", "token")
OPTIMIZERS = ("adam", "sgd")
DEFAULT_OPTIMIZER = "adam"
DEFAULT_LR = {"adam": 0.05, "sgd": 0.5}  # up to d_model = 16: see default_lr
DEFAULT_STEPS = 300
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
# Plateau: over the last PLATEAU_WINDOW steps the loss moved by less than PLATEAU_FLAT of
# what is left above the floor (at that pace the floor is > 20 windows away) while more
# than PLATEAU_NEAR of the whole way down is still left. Measured on the toy preset's
# head 0 (previous token, Adam): flagged from step ~180 on, at ~20 % of the start.
PLATEAU_WINDOW = 50
PLATEAU_FLAT = 0.05
PLATEAU_NEAR = 0.10
PLATEAU_DONE = 0.01  # nats above the floor: close enough, whatever the start
PLATEAU_HINT = (
    "The loss has stopped falling far above its minimum: this head sits in a basin it "
    "cannot leave by small steps. Re-initialise its W^Q/W^K with a seed and train again."
)


class TrainingDiverged(ValueError):
    """The last step would have made a parameter infinite or larger than VALUE_LIMIT."""


# ------------------------------------------------------------------ targets --------
def session_blocked(session: Session) -> np.ndarray:
    """The session's blocked (query, key) pairs: its extra mask OR the causal mask."""
    return blocked_positions(session.config.n, session.mask, session.config.causal)


def check_target(target, blocked: np.ndarray) -> np.ndarray:
    """`target` as a float64 n×n array, or a ValueError saying in one sentence what is wrong.

    Entries must be finite and ≥ 0, not all zero, and 0 wherever `blocked` is True (a
    head cannot attend there, so asking for it can never be learned).
    """
    n = blocked.shape[0]
    try:
        t = np.asarray(target, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("the target must be an n×n array of numbers") from None
    if t.shape != (n, n):
        raise ValueError(
            f"the target has shape {t.shape} but this layer has n={n}: it needs ({n}, {n})"
        )
    if not np.all(np.isfinite(t)):
        r, k = (int(v) for v in np.argwhere(~np.isfinite(t))[0])
        raise ValueError(f"target[{r},{k}] is {t[r, k]}: every entry must be a finite number")
    if np.any(t < 0):
        r, k = (int(v) for v in np.argwhere(t < 0)[0])
        raise ValueError(f"target[{r},{k}] is {t[r, k]:g}: weights cannot be negative")
    if not np.any(t > 0):
        raise ValueError("the target is all zeros: give at least one row something to attend to")
    bad = (t > 0) & blocked
    if bad.any():
        r, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"target[{r},{k}] is {t[r, k]:g} but query {r} cannot see key {k} (blocked by "
            f"the mask): a target must be 0 at blocked positions"
        )
    return t


def make_target(kind: str, n: int, blocked: np.ndarray | None = None, token: int | None = None):
    """A ready-made n×n target pattern (rows are one-hot unless "uniform").

    "previous": query j → key j−1, query 0 → itself; "first": every query → key 0;
    "self": the diagonal; "uniform": equal weight on every key the query may see;
    "token": every query → key `token` (queries that cannot see it, e.g. earlier ones under
    a causal mask, are left out: their row is 0). `blocked` (n×n bool, True = blocked)
    defaults to nothing blocked; asking for a blocked pair is refused (ValueError).
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a whole number ≥ 1, got {n!r}")
    blocked = np.zeros((n, n), dtype=bool) if blocked is None else np.asarray(blocked, bool)
    t = np.zeros((n, n))
    rows = np.arange(n)
    if kind == "previous":
        t[rows, np.maximum(rows - 1, 0)] = 1.0
    elif kind == "first":
        t[:, 0] = 1.0
    elif kind == "self":
        t[rows, rows] = 1.0
    elif kind == "uniform":
        t[~blocked] = 1.0
    elif kind == "token":
        if isinstance(token, bool) or not isinstance(token, numbers.Integral):
            raise ValueError('the "token" target needs the index of the token to attend to')
        if not 0 <= token < n:
            raise ValueError(f"token {token} is out of range: this layer has tokens 0..{n - 1}")
        t[:, token] = 1.0
        t[blocked[:, token], token] = 0.0
        if not t.any():
            raise ValueError(f"no query may attend to token {token}: every one is blocked")
    else:
        raise ValueError(
            f"unknown target {kind!r}; choose one of: {', '.join(TARGET_KINDS)} or a .npy file"
        )
    return check_target(t, blocked)


def load_target(path, n: int, blocked: np.ndarray | None = None) -> np.ndarray:
    """An n×n target from a .npy file (no pickles), checked like `check_target`."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"target file {str(p)!r} does not exist")
    try:
        data = np.load(p, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{p.name} is not a readable .npy array ({exc})") from None
    if not isinstance(data, np.ndarray):  # an .npz archive
        raise ValueError(f"{p.name} holds several arrays: save one n×n array with np.save")
    if data.dtype.kind not in "biuf":
        raise ValueError(f"{p.name} holds {data.dtype} values: the target must hold numbers")
    blocked = np.zeros((n, n), dtype=bool) if blocked is None else np.asarray(blocked, bool)
    try:
        return check_target(data, blocked)
    except ValueError as exc:
        raise ValueError(f"{p.name}: {exc}") from None


def target_floor(target: np.ndarray) -> float:
    """The smallest loss the target allows: the mean entropy of its normalised rows."""
    t_hat, rows = _normalised(target)
    p = t_hat[rows]
    logs = np.log(np.where(p > 0, p, 1.0))
    return float(-(p * logs).sum() / rows.sum()) + 0.0


def _normalised(target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sums = target.sum(axis=1)
    rows = sums > 0
    t_hat = np.zeros_like(target)
    t_hat[rows] = target[rows] / sums[rows, None]
    return t_hat, rows


# --------------------------------------------------------------- loss and grads ----
def _check_head(session: Session, head) -> int:
    h = session.config.h
    if isinstance(head, bool) or not isinstance(head, numbers.Integral) or not 0 <= head < h:
        raise ValueError(f"head {head!r} is out of range: this layer has heads 0..{h - 1}")
    return int(head)


class _Rotation:
    """RoPE of one layer as a linear map on (n, d_k) rows: `apply` rotates each row to its
    position, `apply_transpose` is Rᵀ (the inverse rotation), which carries gradients back."""

    def __init__(self, spec, n: int, d_k: int):
        self.cos, self.sin = spec.tables(n, d_k)

    def apply(self, x: np.ndarray) -> np.ndarray:
        return rope.apply(x, self.cos, self.sin)

    def apply_transpose(self, x: np.ndarray) -> np.ndarray:
        return rope.apply(x, self.cos, -self.sin)


def _rope_of(session: Session) -> _Rotation | None:
    c = session.config
    if not c.rope:
        return None
    return _Rotation(c.rope_spec, c.n, c.d_k)


def _head_loss(x, wq, bq, wk, bk, scale, blocked, t_hat, rows, rotation):
    """Loss and the gradients of (wq, bq, wk, bk) for one head, given its operands."""
    q = x @ wq + (0.0 if bq is None else bq)
    k = x @ wk + (0.0 if bk is None else bk)
    qr, kr = (q, k) if rotation is None else (rotation.apply(q), rotation.apply(k))
    s = scale * (qr @ kr.T)
    s[blocked] = -np.inf
    peak = s.max(axis=1, keepdims=True)
    peak[~np.isfinite(peak)] = 0.0  # a row with every key blocked
    e = np.exp(s - peak)
    total = e.sum(axis=1, keepdims=True)
    total[total == 0] = 1.0
    a = e / total
    log_a = np.where(blocked, 0.0, s - peak - np.log(total))
    count = int(rows.sum())
    loss = float(-(t_hat[rows] * log_a[rows]).sum() / count) + 0.0  # never print -0
    ds = np.where(rows[:, None], a - t_hat, 0.0) / count
    dqr = scale * (ds @ kr)
    dkr = scale * (ds.T @ qr)
    if rotation is None:
        dq, dk = dqr, dkr
    else:  # the rotation is linear: its gradient is the transposed rotation
        dq, dk = rotation.apply_transpose(dqr), rotation.apply_transpose(dkr)
    grads = {"W_Q": x.T @ dq, "W_K": x.T @ dk}
    if bq is not None:
        grads["b_Q"] = dq.sum(axis=0)
        grads["b_K"] = dk.sum(axis=0)
    return loss, grads, a


@dataclass
class _Problem:
    """Everything fixed during a run: the operands that do not train and the target."""

    head: int
    group: int
    x: np.ndarray
    scale: float
    blocked: np.ndarray
    target: np.ndarray
    t_hat: np.ndarray
    rows: np.ndarray
    rotation: _Rotation | None

    @classmethod
    def of(cls, session: Session, head, target) -> _Problem:
        i = _check_head(session, head)
        blocked = session_blocked(session)
        t = check_target(target, blocked)
        t_hat, rows = _normalised(t)
        c = session.config
        return cls(
            i,
            c.kv_group(i),
            session.params.X,
            c.effective_scale,
            blocked,
            t,
            t_hat,
            rows,
            _rope_of(session),
        )

    def head_values(self, params: Parameters) -> dict[str, np.ndarray]:
        """The trained slices (copies): W_Q[i], W_K[g] (and b_Q[i], b_K[g])."""
        out = {"W_Q": params.W_Q[self.head].copy(), "W_K": params.W_K[self.group].copy()}
        if params.b_Q is not None:
            out["b_Q"] = params.b_Q[self.head].copy()
            out["b_K"] = params.b_K[self.group].copy()
        return out

    def evaluate(self, values: dict[str, np.ndarray]):
        return _head_loss(
            self.x,
            values["W_Q"],
            values.get("b_Q"),
            values["W_K"],
            values.get("b_K"),
            self.scale,
            self.blocked,
            self.t_hat,
            self.rows,
            self.rotation,
        )

    def index(self, name: str) -> int:
        return self.head if name.endswith("Q") else self.group


def attention_loss(session: Session, head: int, target) -> tuple[float, dict[str, np.ndarray]]:
    """The issue-10 loss of head `head` against `target`, and its analytic gradients.

    `grads` is keyed like the parameters — "W_Q", "W_K" and, with biases, "b_Q", "b_K" —
    each the full parameter's shape, zero outside head `head` (W_Q, b_Q) and outside its
    key/value group g(head) (W_K, b_K). grads["b_K"] is always zero without RoPE (see the
    module docstring: softmax ignores a per-row constant). With GQA/MQA, W_g^K is shared:
    changing it moves the other heads of the group too, though the loss sees only this one.
    """
    problem = _Problem.of(session, head, target)
    loss, head_grads, _ = problem.evaluate(problem.head_values(session.params))
    grads = {}
    for name, g in head_grads.items():
        full = np.zeros_like(getattr(session.params, name))
        full[problem.index(name)] = g
        grads[name] = full
    return loss, grads


# ----------------------------------------------------------------- optimisers -----
def _check_lr(lr) -> float:
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not math.isfinite(lr) or lr <= 0:
        raise ValueError(f"the learning rate must be a positive finite number, got {lr!r}")
    return float(lr)


def _check_optimizer(name) -> str:
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; choose one of: {', '.join(OPTIMIZERS)}")
    return name


def _check_steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps <= 0:
        raise ValueError(f"the number of steps must be a whole number ≥ 1, got {steps!r}")
    return int(steps)


@dataclass
class Adam:
    """Adam (Kingma & Ba) on a dict of arrays; the state lives between GUI ticks."""

    lr: float
    m: dict = field(default_factory=dict)
    v: dict = field(default_factory=dict)
    t: int = 0

    def update(self, values: dict, grads: dict) -> dict:
        b1, b2 = ADAM_BETAS
        self.t += 1
        out = {}
        for name, g in grads.items():
            m = self.m.get(name, 0.0) * b1 + (1 - b1) * g
            v = self.v.get(name, 0.0) * b2 + (1 - b2) * g * g
            self.m[name], self.v[name] = m, v
            m_hat = m / (1 - b1**self.t)
            v_hat = v / (1 - b2**self.t)
            out[name] = values[name] - self.lr * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
        return out


@dataclass
class SGD:
    """Plain gradient steps: value − lr · gradient."""

    lr: float

    def update(self, values: dict, grads: dict) -> dict:
        return {name: values[name] - self.lr * g for name, g in grads.items()}


def default_lr(config, optimizer: str = DEFAULT_OPTIMIZER) -> float:
    """The learning rate a run starts with unless told: DEFAULT_LR[optimizer] up to
    d_model = 16, then smaller as 1/√d_model. Adam moves every entry by about lr per step,
    so a wide layer's scores would swing too far (BERT-base with 0.05 oscillates up to 15×
    its starting loss; with this rule, 0.0072, it converges)."""
    return DEFAULT_LR[_check_optimizer(optimizer)] * min(1.0, math.sqrt(16 / config.d_model))


def make_optimizer(name: str = DEFAULT_OPTIMIZER, lr: float = DEFAULT_LR["adam"]):
    lr = _check_lr(lr)
    return Adam(lr) if _check_optimizer(name) == "adam" else SGD(lr)


# ----------------------------------------------------------------- plateau --------
def is_plateau(
    losses,
    floor: float,
    window: int = PLATEAU_WINDOW,
    flat: float = PLATEAU_FLAT,
    near: float = PLATEAU_NEAR,
) -> bool:
    """True when the curve is flat over the last `window` steps far above `floor`.

    Flat: over the window the loss stayed within `flat` × (what is left above the floor)
    — a rising or oscillating curve is not flat (that is a learning rate too large).
    Far: more than `near` × (the whole way from the first loss to the floor) is left, and
    more than PLATEAU_DONE nats.
    """
    if len(losses) <= window:
        return False
    start, last = losses[0] - floor, losses[-1] - floor
    if last <= max(near * start, PLATEAU_DONE):
        return False
    recent = losses[-1 - window :]
    return max(recent) - min(recent) < flat * last


# ------------------------------------------------------------------ trainer -------
class Trainer:
    """One training run of one head, stepped as often as the caller likes.

    The session given is copied: the trainer never changes it. `step(k)` makes k
    gradient steps and returns their losses (each measured before its step); `losses`
    holds the whole curve, ending with the loss of the current parameters. `changed()`
    gives the full W_Q/W_K (b_Q/b_K) arrays to apply as one undo step; `session()` a
    copy of the session with them applied. `weights` is the head's current n×n A_i (for a
    live weights panel), `floor` the lowest loss the target allows, `plateau` whether to
    show PLATEAU_HINT. The learning rate defaults to `default_lr(config, optimizer)`.
    """

    def __init__(
        self,
        session: Session,
        head: int,
        target,
        *,
        lr: float | None = None,
        optimizer: str = DEFAULT_OPTIMIZER,
    ):
        self._session = session.copy()
        self._problem = _Problem.of(self._session, head, target)
        self.optimizer_name = _check_optimizer(optimizer)
        self.lr = default_lr(session.config, optimizer) if lr is None else _check_lr(lr)
        self._optimizer = make_optimizer(optimizer, self.lr)
        self._values = self._problem.head_values(self._session.params)
        self.floor = target_floor(self._problem.target)
        loss, self._grads, self.weights = self._problem.evaluate(self._values)
        self.losses: list[float] = [loss]
        self.steps_done = 0

    @property
    def head(self) -> int:
        return self._problem.head

    @property
    def group(self) -> int:
        """The key/value group whose W^K (b^K) this run trains (shared under GQA/MQA)."""
        return self._problem.group

    @property
    def target(self) -> np.ndarray:
        return self._problem.target

    @property
    def loss(self) -> float:
        """The loss of the current parameters."""
        return self.losses[-1]

    @property
    def plateau(self) -> bool:
        """The curve is flat far above the floor: show PLATEAU_HINT (reinitialise_head)."""
        return is_plateau(self.losses, self.floor)

    def step(self, count: int = 1) -> list[float]:
        """`count` gradient steps; returns the loss before each. Raises TrainingDiverged
        (keeping the last good parameters) when a step leaves the allowed value range."""
        count = _check_steps(count)
        before = []
        for _ in range(count):
            new = self._optimizer.update(self._values, self._grads)
            for name, arr in new.items():
                if not np.all(np.isfinite(arr)) or np.abs(arr).max() > VALUE_LIMIT:
                    raise TrainingDiverged(
                        f"training diverged after {self.steps_done} steps ({name} left "
                        f"±{VALUE_LIMIT:g}): use a smaller learning rate than {self.lr:g}"
                    )
            loss, grads, weights = self._problem.evaluate(new)
            if not math.isfinite(loss):
                raise TrainingDiverged(
                    f"training diverged after {self.steps_done} steps (the loss is {loss}): "
                    f"use a smaller learning rate than {self.lr:g}"
                )
            before.append(self.losses[-1])
            self._values, self._grads, self.weights = new, grads, weights
            self.losses.append(loss)
            self.steps_done += 1
        return before

    def changed(self) -> dict[str, np.ndarray]:
        """Full-shape copies of every trained parameter with this run's values in place."""
        out = {}
        for name, value in self._values.items():
            full = getattr(self._session.params, name).copy()
            full[self._problem.index(name)] = value
            out[name] = full
        return out

    def session(self) -> Session:
        """A copy of the session with the trained parameters."""
        return with_parameters(self._session, self.changed())


def with_parameters(session: Session, changes: dict[str, np.ndarray]) -> Session:
    """A validated copy of `session` with some parameters replaced by full arrays."""
    arrays = session.params.as_dict()
    arrays.update(changes)
    out = session.copy()
    out.params = Parameters(**arrays).validated(session.config)
    return out


@dataclass
class TrainResult:
    changed: dict[str, np.ndarray]  # full W_Q, W_K (b_Q, b_K): one undo step
    losses: list[float]  # the first is before any step, the last after the last step
    plateau: bool
    floor: float


def train_steps(
    session: Session,
    head: int,
    target,
    steps: int = DEFAULT_STEPS,
    lr: float | None = None,
    optimizer: str = DEFAULT_OPTIMIZER,
) -> TrainResult:
    """Run `steps` steps from scratch and return what changed and the loss curve."""
    steps = _check_steps(steps)
    trainer = Trainer(session, head, target, lr=lr, optimizer=optimizer)
    trainer.step(steps)
    return TrainResult(trainer.changed(), list(trainer.losses), trainer.plateau, trainer.floor)


def reinitialise_head(session: Session, head: int, seed: int) -> dict[str, np.ndarray]:
    """New full W_Q, W_K (and b_Q, b_K) with head `head`'s slices drawn afresh from `seed`.

    Weights ~ N(0, 1/d_model) and biases ~ N(0, 0.1²), rounded to 2 decimals like a random
    preset; everything else is kept. Under GQA/MQA W_g^K is shared, so the other heads of
    the group change too. Apply the returned dict as one undo step.
    """
    i = _check_head(session, head)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"the seed must be a whole number ≥ 0, got {seed!r}")
    c = session.config
    g = c.kv_group(i)
    rng = np.random.default_rng([int(seed), i])
    p = session.params
    out = {"W_Q": p.W_Q.copy(), "W_K": p.W_K.copy()}
    out["W_Q"][i] = np.round(rng.normal(0, 1 / math.sqrt(c.d_model), (c.d_model, c.d_k)), 2)
    out["W_K"][g] = np.round(rng.normal(0, 1 / math.sqrt(c.d_model), (c.d_model, c.d_k)), 2)
    if c.bias:
        out["b_Q"], out["b_K"] = p.b_Q.copy(), p.b_K.copy()
        out["b_Q"][i] = np.round(rng.normal(0, 0.1, c.d_k), 2)
        out["b_K"][g] = np.round(rng.normal(0, 0.1, c.d_k), 2)
    return out
