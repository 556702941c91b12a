"""How a session file holds its numbers: nested lists (version 1) or hex blocks (version 2).

A session file is JSON either way. Version 1 writes every matrix as nested lists, one
number per line — what a teacher reads and diffs. A large layer that way is tens of MB
of decimal text, and Python's JSON encoder formats it one number at a time (n = 2048,
d_model 768: ~11 s, holding the interpreter lock in slices throughout; parsing it ~0.8 s).
Version 2 writes each matrix as one block,

    {"dtype": "float64", "shape": [2048, 768], "hex": "<the little-endian bytes in hex>"}

(the mask as "dtype": "bool", one byte 00/01 per entry), which C code turns into bytes and
back a megabyte at a time (binascii; hex decodes ~5× faster than base64 there, for a file
a third larger).

Writing (`file_pieces`) yields the file in pieces of at most ~1 MB of work each, so a
writer thread gives the interpreter back between pieces. Reading (`split_hex_blocks`)
takes the long "hex" strings out of the file's bytes before the JSON parser sees them —
the parser then reads a few KB instead of scanning 56 MB in one call — and
`decode_block` turns each back into an array, checking its dtype, shape and exact
length, naming the key at fault.
"""

from __future__ import annotations

import binascii
import json
import math
import re
import secrets
from collections.abc import Callable, Iterator

import numpy as np

# Hex digits decoded or encoded per call: ~1 ms of work, so other threads get the
# interpreter back that often.
HEX_CHUNK = 1 << 20
# A "hex" string at least this long is taken out of the text before the JSON parser runs.
LONG_HEX = 1 << 12
BLOCK_KEYS = ("dtype", "shape", "hex")
BLOCK_DTYPES = {"float64": np.dtype("<f8"), "bool": np.dtype("u1")}
# Where a placeholder stands in the JSON text of the file's skeleton (written by
# json.dumps: control characters are escaped, and no token or source may hold one).
_SLOT = re.compile(r'"\\u0000(\d+)\\u0000"')
# What precedes a "hex" value: the key and a colon (JSON whitespace allowed).
_HEX_KEY = re.compile(rb'"hex"[ \t\r\n]*:[ \t\r\n]*\Z')
# Hex digits only, for bytes (a digit string taken out of the file) and for str.
_HEX_DIGITS = {False: re.compile(rb"[0-9a-fA-F]*"), True: re.compile(r"[0-9a-fA-F]*")}


# ------------------------------------------------------------------- writing -------
def block(array: np.ndarray) -> dict:
    """A version 2 block of `array` (float64 or bool), its bytes in one hex string."""
    dtype = "bool" if array.dtype == bool else "float64"
    data = b"".join(hex_pieces(array)).decode("ascii")
    return {"dtype": dtype, "shape": list(array.shape), "hex": data}


def hex_pieces(array: np.ndarray) -> Iterator[bytes]:
    """The hex digits of `array`'s little-endian bytes, HEX_CHUNK digits at a time."""
    dtype = np.dtype(np.uint8) if array.dtype == bool else np.dtype("<f8")
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype == bool:
        flat = flat.view(np.uint8)
    flat = flat.astype(dtype, copy=False)  # no copy for float64 on a little-endian machine
    data = memoryview(flat.view(np.uint8))
    step = HEX_CHUNK // 2
    for start in range(0, len(data), step):
        yield binascii.b2a_hex(data[start : start + step])


def list_pieces(array: np.ndarray, level: int) -> Iterator[str]:
    """`json.dumps(array.tolist(), indent=1)` as it appears `level` spaces deep, a row
    at a time: the same text, ~10× faster (each row's numbers are formatted by one
    C-level `map(repr, …)` instead of the pure-Python encoder that indentation needs)."""
    if len(array) == 0:
        yield "[]"
        return
    inner = " " * (level + 1)
    yield "[\n" + inner
    if array.ndim == 1:
        words = ("true" if v else "false" for v in array.tolist()) if array.dtype == bool else None
        yield (",\n" + inner).join(words if words is not None else map(repr, array.tolist()))
    else:
        for i, row in enumerate(array):
            if i:
                yield ",\n" + inner
            yield from list_pieces(row, level + 1)
    yield "\n" + " " * level + "]"


def file_pieces(skeleton: dict, arrays: list[np.ndarray], packed: bool) -> Iterator[bytes]:
    """The session file: `skeleton` as json.dumps(indent=1) writes it, each placeholder
    made by `slot` replaced by its array — a block's hex digits (`packed`) or nested lists.

    Identical to json.dumps of the finished dict, which a test checks.
    """
    text = json.dumps(skeleton, indent=1, allow_nan=False)
    parts = _SLOT.split(text)
    for k in range(0, len(parts) - 1, 2):
        before, index = parts[k], int(parts[k + 1])
        yield before.encode("ascii")
        array = arrays[index]
        if packed:
            yield b'"'
            yield from hex_pieces(array)
            yield b'"'
        else:
            line_start = before.rfind("\n") + 1
            level = len(before) - line_start - len(before[line_start:].lstrip(" "))
            for piece in list_pieces(array, level):
                yield piece.encode("ascii")
    yield parts[-1].encode("ascii") + b"\n"


def slot_maker(arrays: list[np.ndarray]) -> Callable[[np.ndarray], str]:
    """A function that files an array in `arrays` and returns its placeholder string."""

    def slot(array: np.ndarray) -> str:
        arrays.append(array)
        return f"\x00{len(arrays) - 1}\x00"

    return slot


# ------------------------------------------------------------------- reading -------
def split_hex_blocks(raw: bytes, start: int = 0) -> tuple[bytes, dict[str, memoryview]]:
    """The file's bytes from `start` with every long "hex" string replaced by a short
    placeholder string, and the placeholders' digits (views of `raw`, not copies).

    Only string literals right after a `"hex":` key are taken out; the scan jumps from
    quote to quote (a C search each), so it costs one pass over the file. A placeholder
    holds a NUL and a random nonce: no string a file spells can be mistaken for one.
    Invalid JSON is left for the parser to report (line numbers are kept: hex digits
    hold no newline).
    """
    view = memoryview(raw)
    blobs: dict[str, memoryview] = {}
    pieces: list[bytes] = []
    nonce = secrets.token_hex(8)
    pos = last = start
    while True:
        opening = raw.find(b'"', pos)
        if opening < 0:
            break
        closing = raw.find(b'"', opening + 1)
        while closing > 0 and _escaped(raw, closing):
            closing = raw.find(b'"', closing + 1)
        if closing < 0:
            break
        if closing - opening > LONG_HEX and _HEX_KEY.search(raw, max(start, opening - 64), opening):
            key = f"\x00{nonce}:{len(blobs)}"
            pieces += [raw[last : opening + 1], f"\\u0000{nonce}:{len(blobs)}".encode("ascii")]
            blobs[key] = view[opening + 1 : closing]
            last = closing
        pos = closing + 1
    if not blobs:
        return (raw if start == 0 else raw[start:]), {}
    pieces.append(raw[last:])
    return b"".join(pieces), blobs


def _escaped(raw: bytes, quote: int) -> bool:
    """Is the quote at `quote` escaped (an odd run of backslashes before it)?"""
    k = quote - 1
    while raw[k] == 0x5C:
        k -= 1
    return (quote - 1 - k) % 2 == 1


def decode_block(
    key: str, value: dict, shape: tuple[int, ...], kind: str, dims: str, blobs=None
) -> np.ndarray:
    """A version 2 block as an array of `shape` (float64 or bool), or a ValueError that
    names `key` and what is wrong: a missing or unknown field, the dtype, the shape, the
    number of digits, a character that is not a hex digit (said first: a wrong character
    can change the count), or (bool) a byte not 00/01.

    Finiteness and the value limit of float blocks are the caller's (check_array).
    """
    unknown = sorted(set(value) - set(BLOCK_KEYS))
    if unknown:
        raise ValueError(
            f"{key} has unknown key(s): {', '.join(unknown)} (a block has dtype, shape, hex)"
        )
    missing = [k for k in BLOCK_KEYS if k not in value]
    if missing:
        raise ValueError(f'{key} is missing "{missing[0]}" (a block has dtype, shape, hex)')
    if value["dtype"] != kind:
        raise ValueError(f'{key}.dtype must be "{kind}", got {value["dtype"]!r}')
    given = value["shape"]
    if not isinstance(given, list) or not all(
        type(s) is int and s >= 0 for s in given
    ):  # bool is not int here
        raise ValueError(f"{key}.shape must be a list of whole numbers, got {given!r}")
    if tuple(given) != tuple(shape):
        need = "(" + ", ".join(str(s) for s in shape) + ")"
        extra = f" but {dims} needs {need}" if dims else f" but must be {need}"
        raise ValueError(f"{key} has shape {tuple(given)}{extra}")
    digits = value["hex"]
    if isinstance(digits, str) and blobs and digits in blobs:
        digits = blobs[digits]
    elif not isinstance(digits, str):
        raise ValueError(f"{key}.hex must be a string of hex digits")
    dtype = BLOCK_DTYPES[kind]
    nbytes = math.prod(shape) * dtype.itemsize
    if len(digits) != 2 * nbytes:
        if not _HEX_DIGITS[isinstance(digits, str)].fullmatch(digits):
            raise ValueError(f"{key}.hex must hold hex digits only (0-9, a-f)")
        raise ValueError(
            f"{key}.hex has {len(digits)} digits but shape {tuple(shape)} of {kind} "
            f"needs {2 * nbytes} (2 per byte)"
        )
    out = np.empty(shape, dtype)
    target = out.reshape(-1).view(np.uint8)
    for start in range(0, 2 * nbytes, HEX_CHUNK):
        try:
            chunk = binascii.a2b_hex(digits[start : start + HEX_CHUNK])
        except ValueError:  # binascii.Error, or a str that is not ASCII
            raise ValueError(f"{key}.hex must hold hex digits only (0-9, a-f)") from None
        target[start // 2 : start // 2 + len(chunk)] = np.frombuffer(chunk, np.uint8)
    if kind == "bool":
        if out.size and out.max() > 1:
            bad = tuple(int(i) for i in np.argwhere(out > 1)[0])
            raise ValueError(
                f"{key}{list(bad)} is byte {out[bad]}: a mask entry is 00 (open) or 01 (blocked)"
            )
        return out.view(bool)
    return out.astype(np.float64, copy=False)  # native byte order (a copy only if big-endian)
