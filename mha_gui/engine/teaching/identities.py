"""Five identities of multi-head attention, checked on a session's own numbers.

Each function returns an `Identity`: the statement, the matrices of both sides (grouped in
rows for a figure) and `checks`, the largest |left − right| of each comparison. The sides
are computed two different ways (one packed product against h thin ones, a permuted layer
against the original, …), so a difference of 0 or about 1e-16 — a float64 rounding — is
the demonstration. No Qt here: a notebook can call these. The result types and the
reshapes they share are engine/teaching/identity_parts.py (re-exported here).

1. `packed_projection`: X·W^Q_packed (+ b^Q_packed), W^Q_packed = [W^Q_0 | … | W^Q_{h−1}]
   (d_model × h·d_k), split into blocks of d_k columns, is every head's Q_i.
2. `split_concat`: H split into blocks of d_v columns gives each head's Z_i, and
   concatenating the blocks again gives H back, bit for bit.
3. `permute_heads` / `permutation_identity`: renumbering the query heads — W^Q, b^Q, W_O's
   row blocks, the ablated set, and with GQA/MQA the K/V groups with them — leaves Y
   unchanged (only the order of a sum changes).
4. `fold_scale`: W^Q·scale and b^Q·scale with the scale set to 1 give the same scores and
   weights (RoPE is a rotation, linear, so it commutes with the factor).
5. `softmax_shift`: adding a constant c to one row of S_i leaves that row's softmax as it
   was (blocked keys stay −∞, weight 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mha_gui.engine.attention.steps import softmax_step
from mha_gui.engine.attention.validation import check_index
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.numbers import sub
from mha_gui.engine.layer.session import Session
from mha_gui.engine.teaching.identity_parts import (
    NAMES,
    Check,
    Identity,
    Part,
    PartRow,
    compare,
    packed,
    side_by_side,
    split,
)

# ------------------------------------------------------------- 1. packed ---------
PROJECTIONS = {"Q": ("W_Q", "b_Q", "q"), "K": ("W_K", "b_K", "k"), "V": ("W_V", "b_V", "v")}


def packed_projection(session: Session, which: str = "Q", trace=None) -> Identity:
    """X·W_packed (+ b_packed) split into blocks equals every head's projection."""
    if which not in PROJECTIONS:
        raise ValueError(f"unknown projection {which!r}; choose Q, K or V")
    c = session.config
    w_name, b_name, attr = PROJECTIONS[which]
    p = session.params.as_dict()
    t = trace if trace is not None else session.run()
    w = p[w_name]
    heads = w.shape[0]
    d = w.shape[2]
    one = np.asarray(session.params.X, float) @ packed(w)
    if c.bias:
        one = one + p[b_name].reshape(-1)
    per_head = getattr(t, attr)
    sym = "g" if which != "Q" and c.variant != "MHA" else "i"
    rows = (
        PartRow(
            f"one product: X · W^{which}_packed{' + b' if c.bias else ''}"
            f" ({c.d_model} × {heads}·{d}), heads side by side",
            (Part(f"X W^{which}_packed", one, blocks=heads, block_symbol=which),),
            scale_group="proj",
        ),
        PartRow(
            f"{heads} products: {which}_{sym} = X W^{which}_{sym}"
            f"{' + b_' + sym if c.bias else ''}, one per head",
            tuple(
                Part(f"{which}{sub(g)}", per_head[g], g if which == "Q" else None)
                for g in range(heads)
            ),
            scale_group="proj",
        ),
    )
    notes = [
        f"W^{which}_packed = [W^{which}_0 | … | W^{which}_{heads - 1}]: column block {sym} "
        f"({d} columns) is head {sym}'s W^{which}_{sym}."
    ]
    if c.rope:
        notes.append(
            f"RoPE rotates each head's {which} after this projection, pair by pair within the "
            f"head's {d} features, so the rotated blocks also agree; compared here are the "
            "projections before rotation."
            if which != "V"
            else "RoPE does not touch V."
        )
    if which != "Q" and c.variant != "MHA":
        notes.append(f"{c.variant}: {heads} K/V heads for {c.h} query heads.")
    check = compare(f"X·W^{which}_packed vs {which}_{sym}", one, side_by_side(per_head))
    return Identity(
        "packed",
        "Packed projection",
        f"X W^{which}_packed = [{which}_0 | {which}_1 | … | {which}_{heads - 1}]",
        rows,
        (check,),
        tuple(notes),
        f"X: {c.n}×{c.d_model} · W^{which}_packed: {c.d_model}×{heads * d} · "
        f"{which}_{sym}: {c.n}×{d}",
    )


# -------------------------------------------------------------- 2. split ---------
def split_concat(session: Session, trace=None) -> Identity:
    """H split into h blocks of d_v columns is Z_0 … Z_{h−1}; concatenated back it is H."""
    c = session.config
    t = trace if trace is not None else session.run()
    h_matrix = np.asarray(t.concat)
    blocks = split(h_matrix, c.h)
    again = side_by_side(blocks)
    rows = (
        PartRow(
            f"H = Concat(Z₀ … Z_{{{c.h - 1}}}) (n × h·d_v = {c.n} × {c.h * c.d_v})",
            (Part("H", h_matrix, blocks=c.h),),
            scale_group="h",
        ),
        PartRow(
            f"split H into {c.h} blocks of d_v = {c.d_v} columns",
            tuple(Part(f"block {i} of H", blocks[i], i) for i in range(c.h)),
            scale_group="h",
        ),
        PartRow(
            "concatenate the blocks again",
            (Part("Concat(split(H))", again, blocks=c.h),),
            scale_group="h",
        ),
    )
    checks = (
        compare("Concat(split(H)) vs H", again, h_matrix),
        compare("block i of H vs Z_i", blocks, t.heads),
    )
    notes = ["Split and concatenation only move numbers: the difference is exactly 0."]
    if c.ablate:
        off = ", ".join(str(i) for i in c.ablate)
        notes.append(f"Switched-off heads ({off}) have Z_i = 0, so their blocks of H are 0.")
    return Identity(
        "split",
        "Split, then concat",
        "Concat(split(H)) = H,  split(H)_i = Z_i",
        rows,
        checks,
        tuple(notes),
        f"H: {c.n}×{c.h * c.d_v} · split(H)_i, Z_i: {c.n}×{c.d_v}",
    )


# ------------------------------------------------------------ 3. permute ---------
def check_permutation(config: Config, perm: Sequence[int]) -> tuple[int, ...]:
    """`perm` as a tuple (new head j is old head perm[j]); ValueError saying why not.

    With GQA/MQA the K/V groups must stay valid: the query heads that share a K/V head
    must move together onto another group's places (the groups are then renumbered with
    them), or stay within their group."""
    h = config.h
    try:
        perm = tuple(int(p) for p in perm)
    except (TypeError, ValueError):
        raise ValueError("a permutation is a list of head numbers, e.g. 1 0 3 2") from None
    if sorted(perm) != list(range(h)):
        raise ValueError(
            f"a permutation of {h} heads lists each of 0..{h - 1} exactly once, got "
            f"{' '.join(str(p) for p in perm) or 'nothing'}"
        )
    group_map(config, perm)
    return perm


def group_map(config: Config, perm: Sequence[int]) -> tuple[int, ...]:
    """The K/V group order σ that goes with a query-head permutation (new group G is old
    group σ[G]); ValueError when the permutation splits a group."""
    size = config.group_size
    sigma = []
    for g in range(config.h_kv):
        olds = {perm[j] // size for j in range(g * size, (g + 1) * size)}
        if len(olds) != 1:
            members = ", ".join(str(perm[j]) for j in range(g * size, (g + 1) * size))
            raise ValueError(
                f"{config.variant}: query heads {g * size}–{(g + 1) * size - 1} share K/V head "
                f"{g}, but the permutation puts heads {members} there, which read different "
                f"K/V heads; move whole groups of {size} (or permute within a group)"
            )
        sigma.append(olds.pop())
    return tuple(sigma)


def default_permutation(config: Config) -> tuple[int, ...]:
    """Heads in reverse order: always valid (reversing reverses the groups too)."""
    return tuple(range(config.h - 1, -1, -1))


def permute_heads(session: Session, perm: Sequence[int]) -> Session:
    """A copy of `session` whose new head j is old head perm[j]: W^Q, b^Q, W_O's row
    blocks and the ablated heads, with the K/V heads (W^K, W^V, b^K, b^V) following
    their query heads. Y is unchanged."""
    c = session.config
    perm = check_permutation(c, perm)
    sigma = list(group_map(c, perm))
    p = session.params.copy()
    p.W_Q = p.W_Q[list(perm)].copy()
    p.W_K = p.W_K[sigma].copy()
    p.W_V = p.W_V[sigma].copy()
    p.W_O = p.W_O.reshape(c.h, c.d_v, c.d_model)[list(perm)].reshape(c.h * c.d_v, c.d_model)
    if c.bias:
        p.b_Q = p.b_Q[list(perm)].copy()
        p.b_K = p.b_K[sigma].copy()
        p.b_V = p.b_V[sigma].copy()
    new_of_old = {old: new for new, old in enumerate(perm)}
    config = replace(c, ablate=tuple(sorted(new_of_old[i] for i in c.ablate)))
    out = session.copy()
    return Session(config, out.tokens, p, out.view, out.mask, out.source)


def permutation_identity(session: Session, perm: Sequence[int], trace=None) -> Identity:
    """Y of the session and Y after `permute_heads(session, perm)`."""
    c = session.config
    perm = check_permutation(c, perm)
    sigma = group_map(c, perm)
    before = (trace if trace is not None else session.run()).output
    after = permute_heads(session, perm).run().output
    moved = " ".join(str(p) for p in perm)
    rows = (
        PartRow("Y before (heads in their order)", (Part("Y", before),), scale_group="y"),
        PartRow(
            f"Y after: new head j is old head π(j), π = ({moved})",
            (Part("Y with heads permuted", after),),
            scale_group="y",
        ),
    )
    notes = [
        "Permuted together: W^Q_i"
        + (", b^Q_i" if c.bias else "")
        + ", W_O's row block i (rows i·d_v … (i+1)·d_v − 1)"
        + (" and which heads are switched off" if c.ablate else "")
        + ". Y = Σ_i Z_i W_O[block i] only adds the same terms in another order."
    ]
    if c.variant == "MHA":
        notes.append("MHA: each head has its own W^K_i, W^V_i, which move with it.")
    elif c.variant == "MQA":
        notes.append("MQA: all heads share K_0, V_0, so any order of the query heads works.")
    else:
        notes.append(
            f"GQA: heads i and j share a K/V head when i // {c.group_size} = j // "
            f"{c.group_size}; a valid permutation moves whole groups, their K/V heads with "
            "them (here "
            + ", ".join(f"K/V head {old} → {new}" for new, old in enumerate(sigma))
            + "), or permutes heads within a group."
        )
    return Identity(
        "permute",
        "Permuting heads",
        "Σ_j Z_{π(j)} W_O[block π(j)] = Σ_i Z_i W_O[block i]",
        rows,
        (compare("Y after vs Y before", after, before),),
        tuple(notes),
        f"π = ({moved}) · Y: {c.n}×{c.d_model} · W_O: {c.h}·{c.d_v}×{c.d_model}",
    )


# -------------------------------------------------------------- 4. scale ---------
def folded_scale(session: Session) -> Session:
    """A copy with W^Q (and b^Q) multiplied by the scale and the scale set to 1."""
    c = session.config
    s = c.effective_scale
    p = session.params.copy()
    p.W_Q = p.W_Q * s
    if c.bias:
        p.b_Q = p.b_Q * s
    out = session.copy()
    return Session(replace(c, scale=1.0), out.tokens, p, out.view, out.mask, out.source)


def fold_scale(session: Session, trace=None) -> Identity:
    """Scores and weights with the scale folded into W^Q equal the originals."""
    c = session.config
    t = trace if trace is not None else session.run()
    f = folded_scale(session).run()
    s = c.effective_scale
    scale_text = f"1/√{c.d_k}" if c.scale is None else f"{s:g}"
    blocked = t.mask if t.mask.any() else None
    rows = (
        PartRow(
            f"A_i = softmax(scale · Q_i K_iᵀ), scale = {scale_text} = {s:.4g}",
            tuple(Part(f"A{sub(i)}", t.weights[i], i, blocked) for i in range(c.h)),
            "weights",
        ),
        PartRow(
            f"A'_i with W^Q·scale{' and b^Q·scale' if c.bias else ''} and scale = 1"
            " (on a copy: the document is not changed)",
            tuple(Part(f"A'{sub(i)}", f.weights[i], i, blocked) for i in range(c.h)),
            "weights",
        ),
    )
    notes = [
        "(X W^Q·s)(X W^K)ᵀ = s · (X W^Q)(X W^K)ᵀ: the scale can live in W^Q. Scores agree "
        "too (compared below); the last digit may differ, the weights do not visibly."
    ]
    if c.bias:
        notes.append("With biases, b^Q is multiplied by the scale as well: Q = X W^Q + b^Q.")
    if c.rope:
        notes.append(
            "With RoPE the scores use the rotated Q; the rotation is linear, "
            "R(s·q) = s·R(q), so folding the scale still gives the same scores."
        )
    return Identity(
        "scale",
        "Folding the scale into W^Q",
        "softmax((X W^Q · s)(X W^K)ᵀ) = softmax(s · (X W^Q)(X W^K)ᵀ)",
        rows,
        (
            compare("scores S'_i vs S_i", f.scores, t.scores),
            compare("weights A'_i vs A_i", f.weights, t.weights),
        ),
        tuple(notes),
        f"s = {s:.6g} · W^Q: {c.h}×{c.d_model}×{c.d_k} · A_i: {c.n}×{c.n}",
    )


# -------------------------------------------------------------- 5. shift ---------
def softmax_shift(session: Session, head: int, query: int, c: float = 5.0, trace=None) -> Identity:
    """Row `query` of S_head plus `c`, and its softmax, against the original row."""
    cfg = session.config
    check_index("head", head, cfg.h, "heads")
    check_index("query", query, cfg.n, "tokens")
    c = float(c)
    if not np.isfinite(c) or abs(c) > 1e6:
        raise ValueError(f"the constant must be a finite number within ±1e6, got {c:g}")
    t = trace if trace is not None else session.run()
    row = np.array(t.scores[head, query : query + 1], dtype=float)  # (1, n)
    shifted = row + c  # −∞ stays −∞
    a, b = np.empty_like(row), np.empty_like(row)
    softmax_step(row[None], a[None])
    softmax_step(shifted[None], b[None])
    blocked = ~np.isfinite(row)
    blocked = blocked if blocked.any() else None
    token = session.tokens[query]
    rows = (
        PartRow(
            f"row {query} ('{token}') of S{sub(head)}, and the same row + c (c = {c:g})",
            (
                Part(f"S{sub(head)}[{query},:]", row, head, blocked),
                Part(f"S{sub(head)}[{query},:] + {c:g}", shifted, head, blocked),
            ),
            scale_group="s",
        ),
        PartRow(
            "their softmax",
            (
                Part(f"softmax(S{sub(head)}[{query},:])", a, head, blocked),
                Part(f"softmax(S{sub(head)}[{query},:] + {c:g})", b, head, blocked),
            ),
            "weights",
        ),
    )
    notes = [
        "e^(s_j + c) / Σ_k e^(s_k + c) = e^c e^(s_j) / (e^c Σ_k e^(s_k)): the factor e^c "
        "cancels. This is why softmax may subtract the row maximum before exponentiating.",
        "The constant must be the same for the whole row: a different constant per key "
        "(or a column of S) does change the weights.",
    ]
    if blocked is not None:
        notes.append("Blocked keys stay −∞ (−∞ + c = −∞) and keep weight 0.")
    return Identity(
        "shift",
        "Shifting a row of scores",
        "softmax(s + c) = softmax(s)",
        rows,
        (compare(f"softmax(S{sub(head)}[{query},:] + c) vs softmax(row)", b, a),),
        tuple(notes),
        f"s = row {query} ('{token}') of S_{head}: 1×{cfg.n} · c = {c:g}",
    )


def all_identities(session: Session, head: int = 0, query: int = 0) -> list[Identity]:
    """The five, on one session (the permutation: heads reversed)."""
    t = session.run()
    return [
        packed_projection(session, "Q", t),
        split_concat(session, t),
        permutation_identity(session, default_permutation(session.config), t),
        fold_scale(session, t),
        softmax_shift(session, head, query, trace=t),
    ]


__all__ = [
    "NAMES",
    "Check",
    "Identity",
    "Part",
    "PartRow",
    "all_identities",
    "check_permutation",
    "compare",
    "default_permutation",
    "fold_scale",
    "folded_scale",
    "group_map",
    "packed",
    "packed_projection",
    "permutation_identity",
    "permute_heads",
    "side_by_side",
    "softmax_shift",
    "split",
    "split_concat",
]
