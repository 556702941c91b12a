"""Checking what a caller hands the engine: every operand of `forward()` against the
dimensions the others imply, with a message that names the matrix and the shape it
needs — and any index (a head, a token) against its range, in one wording."""

from __future__ import annotations

import numbers

import numpy as np

from mha_gui.engine.attention.row_softmax import parallel_rows

# Above this many entries in all, `all_finite_many` shares its sums out between cores
# (n=512, d_model=768: the inputs are 2.8 M entries, 1.2 ms on one core in float64).
PARALLEL_FINITE_ABOVE = 1 << 18


# ------------------------------------------------------------------ indices -------
def out_of_range(what: str, value, count: int, items: str, owner: str = "this layer") -> str:
    """The one wording of a bad index: `head 4 is out of range: this layer has heads 0..1`.

    `what` names the index as the user gave it ("head", "--query", "ablate head"),
    `items` what it counts ("heads", "tokens"), `owner` what has them (a model's name,
    a matrix) when it is not the layer being edited.
    """
    return f"{what} {value} is out of range: {owner} has {items} 0..{count - 1}"


def check_index(what: str, value, count: int, items: str) -> int:
    """`value` as an index in 0..count-1, or a ValueError: not a whole number, or
    `out_of_range`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{what} must be a whole number, got {value!r}")
    if not 0 <= int(value) < count:
        raise ValueError(out_of_range(what, value, count, items))
    return int(value)


# ---------------------------------------------------------------- validation ------
def _shape_text(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _as_matrix(name: str, value, ndim: int, finite: bool | None = None) -> np.ndarray:
    """`value` as a real array with `ndim` axes and finite entries, or a ValueError.

    `finite` is all_finite(value) when the caller has already checked it.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested lists
        raise ValueError(
            f"{name} must be a rectangular array of numbers (every row the same length)"
        ) from None
    if arr.dtype == object:
        for index, item in np.ndenumerate(arr):
            if isinstance(item, bool) or not isinstance(item, numbers.Real):
                raise ValueError(f"{name} must hold numbers, got {item!r} at {list(index)}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}") from None
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must hold real numbers, got complex values")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {arr.shape}")
    if not (all_finite(arr) if finite is None else finite):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name}{list(bad)} is {arr[bad]}: every entry must be finite")
    return arr


def all_finite(arr: np.ndarray) -> bool:
    """True if no entry is NaN or ±inf.

    A sum is finite only if every term is (NaN and inf propagate), and summing reads the
    array once without the boolean temporary of isfinite(); only a sum that overflows
    from finite terms needs the exact entry-by-entry check.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(arr.sum()):
            return True
    return bool(np.isfinite(arr).all())


def all_finite_many(arrays) -> list[bool]:
    """[all_finite(a) for a in arrays], for large arrays on every core at once.

    Checking a layer's inputs reads a few megabytes; one sum per core over its share
    of each array reads them about twice as fast as one core. Only C-contiguous arrays
    are shared out (their flat view costs no copy); the rest are checked whole.
    """
    arrays = list(arrays)
    if sum(a.size for a in arrays) <= PARALLEL_FINITE_ABOVE:
        return [all_finite(a) for a in arrays]
    chunks: list[tuple[int, np.ndarray]] = []
    for index, a in enumerate(arrays):
        if a.flags.c_contiguous and a.size > PARALLEL_FINITE_ABOVE // 4:
            flat = a.reshape(-1)
            step = -(-flat.size // 4)
            chunks += [(index, flat[i : i + step]) for i in range(0, flat.size, step)]
        else:
            chunks.append((index, a))
    finite = [True] * len(chunks)

    def check(j: int) -> None:
        finite[j] = all_finite(chunks[j][1])

    parallel_rows.each(check, len(chunks))
    flags = [True] * len(arrays)
    for (index, _), ok in zip(chunks, finite, strict=True):
        flags[index] = flags[index] and ok
    return flags


def _expect(name: str, arr: np.ndarray, expected: tuple, known: dict[str, int]) -> None:
    """Raise unless arr.shape matches `expected`, whose entries are ints or free symbols."""
    fixed = [known[e] if isinstance(e, str) and e in known else e for e in expected]
    ok = all(isinstance(e, str) or e == s for e, s in zip(fixed, arr.shape, strict=True))
    if not ok:
        used = ", ".join(f"{k}={v}" for k, v in known.items() if k in expected)
        raise ValueError(
            f"{name} has shape {_shape_text(arr.shape)} but {used} needs {_shape_text(fixed)}"
        )


def validate_inputs(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, mask, *, scan_floats=True) -> tuple:
    """Check every operand against the dimensions the others imply; return arrays.

    Operands that are already float arrays have their entries checked for finiteness
    all at once (`all_finite_many`); the errors still come in the order of the operands.
    `scan_floats=False` skips that scan of X and the weights when they are float arrays,
    for a caller that checks its results instead and calls again to name a bad entry.
    """
    operands = (x, w_q, w_k, w_v, w_o)
    floats = [a for a in operands if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    flags = all_finite_many(floats) if scan_floats else [True] * len(floats)
    finite = dict(zip(map(id, floats), flags, strict=True))
    names, axes = ("X", "W_Q", "W_K", "W_V", "W_O"), (2, 3, 3, 3, 2)
    x, w_q, w_k, w_v, w_o = (
        _as_matrix(name, a, ndim, finite.get(id(a)))
        for name, a, ndim in zip(names, operands, axes, strict=True)
    )
    n, d_model = x.shape
    if n < 1 or d_model < 1:
        raise ValueError(f"X has shape {x.shape}: it needs at least one token and one feature")
    h, _, d_k = w_q.shape
    if h < 1 or d_k < 1:
        raise ValueError(f"W_Q has shape {w_q.shape}: it needs at least one head of width ≥ 1")
    known = {"d_model": d_model}
    _expect("W_Q", w_q, ("h", "d_model", "d_k"), known)
    known.update(h=h, d_k=d_k)
    _expect("W_K", w_k, ("h_kv", "d_model", "d_k"), known)
    h_kv = w_k.shape[0]
    if h_kv < 1 or h % h_kv:
        raise ValueError(
            f"W_K has {h_kv} key/value heads but h={h}: the number of K/V heads must "
            f"divide the number of query heads"
        )
    known["h_kv"] = h_kv
    _expect("W_V", w_v, ("h_kv", "d_model", "d_v"), known)
    d_v = w_v.shape[2]
    if d_v < 1:
        raise ValueError(f"W_V has shape {w_v.shape}: d_v must be at least 1")
    known["d_v"] = d_v
    if w_o.shape != (h * d_v, d_model):
        raise ValueError(
            f"W_O has shape {_shape_text(w_o.shape)} but h={h}, d_v={d_v}, d_model={d_model} "
            f"needs (h·d_v, d_model) = {_shape_text((h * d_v, d_model))}"
        )
    biases = []
    for name, b, shape in (
        ("b_Q", b_q, ("h", "d_k")),
        ("b_K", b_k, ("h_kv", "d_k")),
        ("b_V", b_v, ("h_kv", "d_v")),
        ("b_O", b_o, ("d_model",)),
    ):
        if b is not None:
            b = _as_matrix(name, b, len(shape))
            _expect(name, b, shape, known)
        biases.append(b)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise ValueError(f"mask must be boolean (True = blocked), got dtype {mask.dtype}")
        if mask.shape != (n, n):
            raise ValueError(f"mask has shape {mask.shape} but n={n} needs ({n}, {n})")
    return (x, w_q, w_k, w_v, w_o, *biases, mask)
