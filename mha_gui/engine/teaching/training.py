"""Train one head's attention pattern by gradient descent (issue 10), NumPy only.

A student picks a head i and a target pattern T (n×n: "attend to the previous token",
"to the first token", …) and descends the cross-entropy between T's rows and the head's
attention rows. Only W_i^Q and the W_g^K of the head's key/value group g = g(i) move (and
b_i^Q, b_g^K with biases): the values, W_O and X never change.

The loss is the mean cross-entropy of T's normalised rows against A_i's rows; its exact
formula and gradients are in engine/teaching/training_loss.py. The smallest possible loss is the
entropy of T's rows (0 for one-hot rows), reached only in the limit of infinitely sharp
scores: `Trainer.floor` holds it.

Something the gradients teach: **without RoPE the key bias b_g^K gets a zero gradient,
whatever the numbers and the target.** It adds q_j · b_g^K · scale to every score of row
j — the same constant across the row — and a softmax does not change when a row is
shifted by a constant. So no target can ever be reached or missed through b^K (the query
bias b^Q, by contrast, does matter: it is dotted with different keys). With RoPE the key
bias is rotated differently at every position, so it is no longer a per-row constant and
its gradient is generally not zero.

The module is split by job: the targets are engine/teaching/training_targets.py, the loss and its
gradients engine/teaching/training_loss.py (both re-exported here), the optimisers, the plateau
rule and the Trainer this module. Pure functions and small state objects, for the
window's train panel and `mha-gui train`:

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

import numpy as np

from mha_gui.engine.layer.parameters import VALUE_LIMIT, Parameters
from mha_gui.engine.layer.session import Session
from mha_gui.engine.teaching.training_loss import HeadProblem, attention_loss, check_head
from mha_gui.engine.teaching.training_targets import (
    TARGET_KINDS,
    check_target,
    load_target,
    make_target,
    session_blocked,
    target_floor,
)

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
        self._problem = HeadProblem.of(self._session, head, target)
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
    i = check_head(session, head)
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


__all__ = [
    "DEFAULT_LR",
    "DEFAULT_OPTIMIZER",
    "DEFAULT_STEPS",
    "OPTIMIZERS",
    "PLATEAU_HINT",
    "TARGET_KINDS",
    "SGD",
    "Adam",
    "TrainResult",
    "Trainer",
    "TrainingDiverged",
    "attention_loss",
    "check_target",
    "default_lr",
    "is_plateau",
    "load_target",
    "make_optimizer",
    "make_target",
    "reinitialise_head",
    "session_blocked",
    "target_floor",
    "train_steps",
    "with_parameters",
]
