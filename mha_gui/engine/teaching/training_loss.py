"""One head's training loss and its analytic gradients (engine/teaching/training.py), NumPy only.

The loss, exactly (so it can be checked by hand)::

    T̂[j,:] = T[j,:] / Σ_k T[j,k]                  rows normalised
    R      = {j : Σ_k T[j,k] > 0}                 rows that ask for something
    loss   = −(1/|R|) Σ_{j∈R} Σ_k T̂[j,k] · log A_i[j,k]

Its gradient with respect to the scores is the familiar "prediction minus target":
∂loss/∂S_i[j,:] = (A_i[j,:] − T̂[j,:]) / |R| for j in R (zero for the other rows), and it
flows back through S_i = scale · Q_i K_gᵀ, Q_i = X W_i^Q + b_i^Q, K_g = X W_g^K + b_g^K
(and through RoPE's rotation, a linear map whose gradient is its transpose).
Why the key bias gets a zero gradient without RoPE: see engine/teaching/training.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_gui.engine.attention import rope
from mha_gui.engine.attention.validation import check_index
from mha_gui.engine.layer.parameters import Parameters
from mha_gui.engine.layer.session import Session
from mha_gui.engine.teaching.training_targets import check_target, normalise_rows, session_blocked


def check_head(session: Session, head) -> int:
    """`head` as an int, or a ValueError when it is not one of the layer's query heads."""
    return check_index("head", head, session.config.h, "heads")


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
class HeadProblem:
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
    def of(cls, session: Session, head, target) -> HeadProblem:
        i = check_head(session, head)
        blocked = session_blocked(session)
        t = check_target(target, blocked)
        t_hat, rows = normalise_rows(t)
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
    key/value group g(head) (W_K, b_K). grads["b_K"] is always zero without RoPE (see
    engine/teaching/training.py's docstring: softmax ignores a per-row constant). With GQA/MQA, W_g^K is shared:
    changing it moves the other heads of the group too, though the loss sees only this one.
    """
    problem = HeadProblem.of(session, head, target)
    loss, head_grads, _ = problem.evaluate(problem.head_values(session.params))
    grads = {}
    for name, g in head_grads.items():
        full = np.zeros_like(getattr(session.params, name))
        full[problem.index(name)] = g
        grads[name] = full
    return loss, grads
