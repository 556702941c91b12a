"""Read safetensors checkpoints without torch: parse the header, memory-map the data.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON naming
every tensor's dtype, shape and byte range, then the raw little-endian data. Nothing is
read until a tensor is asked for, and then only its bytes (an embedding matrix: only the
rows asked for), so opening one layer of a large model touches about one layer's weights;
pages already converted are handed back (madvise), so the process keeps no more than
that mapped either.

bfloat16 is the top half of a float32: widening the raw 16 bits (`uint16 << 16`, viewed
as float32) is exact, so no bfloat16 type is needed.
"""

from __future__ import annotations

import json
import math
import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Every dtype the format defines, with its size in bytes (to check the byte ranges).
DTYPE_SIZES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
    "C64": 8,
}
# The ones whose numbers we read, as the numpy type of their raw bits.
READABLE = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}
MAX_HEADER_BYTES = 100_000_000  # the format's own limit
INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # byte offsets within the data section
    end: int


class SafetensorsFile:
    """One .safetensors file: its header parsed and checked, its data mapped on demand."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        label = self.path.name
        if not self.path.is_file():
            raise ValueError(f"weights file {str(self.path)!r} does not exist")
        size = self.path.stat().st_size
        if size < 8:
            raise ValueError(f"{label} is not a safetensors file: only {size} bytes long")
        with open(self.path, "rb") as fh:
            length = int.from_bytes(fh.read(8), "little")
            if length < 2 or length > min(MAX_HEADER_BYTES, size - 8):
                raise ValueError(
                    f"{label} is not a valid safetensors file: its header length {length:,} "
                    f"does not fit in the file's {size:,} bytes (truncated or corrupt)"
                )
            raw = fh.read(length)
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise ValueError(
                f"{label} is not a valid safetensors file: its header is not JSON"
            ) from None
        if not isinstance(header, dict):
            raise ValueError(f"{label}: the safetensors header must be a JSON object")
        self.data_start = 8 + length
        self.data_size = size - self.data_start
        self.tensors: dict[str, TensorInfo] = {}
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            self.tensors[name] = self._check_entry(name, meta)
        ordered = sorted(self.tensors.values(), key=lambda t: (t.begin, t.end))
        for before, after in zip(ordered, ordered[1:], strict=False):
            if after.begin < before.end:
                raise ValueError(
                    f"{label} is corrupt: tensors {before.name!r} and {after.name!r} "
                    f"overlap (bytes {before.begin}-{before.end} and {after.begin}-{after.end})"
                )
        self._map: mmap.mmap | None = None

    def _check_entry(self, name: str, meta) -> TensorInfo:
        label = self.path.name
        if not isinstance(meta, dict):
            raise ValueError(f"{label}: the header entry of tensor {name!r} is not an object")
        dtype, shape, offsets = meta.get("dtype"), meta.get("shape"), meta.get("data_offsets")
        if dtype not in DTYPE_SIZES:
            raise ValueError(f"{label}: tensor {name!r} has an unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(_whole(s) for s in shape):
            raise ValueError(f"{label}: tensor {name!r} has an invalid shape {shape!r}")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(_whole(o) for o in offsets)
            or offsets[0] > offsets[1]
        ):
            raise ValueError(f"{label}: tensor {name!r} has invalid data_offsets {offsets!r}")
        begin, end = offsets
        if end > self.data_size:
            raise ValueError(
                f"{label} is truncated or corrupt: tensor {name!r} ends at byte {end:,} of the "
                f"data but the file holds only {self.data_size:,} bytes of data"
            )
        need = math.prod(shape) * DTYPE_SIZES[dtype]
        if end - begin != need:
            raise ValueError(
                f"{label} is corrupt: tensor {name!r} has {end - begin:,} bytes but shape "
                f"{tuple(shape)} of {dtype} needs {need:,}"
            )
        return TensorInfo(name, dtype, tuple(shape), begin, end)

    def raw(self, name: str) -> np.ndarray:
        """The tensor's stored bits as a read-only memory-mapped array (nothing read yet).

        bfloat16 comes back as uint16 bits; use `widen` for float64 numbers.
        """
        info = self.tensors[name]
        if info.dtype not in READABLE:
            raise ValueError(
                f"{self.path.name}: tensor {name!r} is stored as {info.dtype}; only "
                f"{', '.join(READABLE)} weights can be read"
            )
        if self._map is None:
            with open(self.path, "rb") as fh:
                self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        dtype = np.dtype(READABLE[info.dtype])
        count = (info.end - info.begin) // dtype.itemsize
        flat = np.frombuffer(self._map, dtype, count, offset=self.data_start + info.begin)
        return flat.reshape(info.shape)

    def release(self, name: str) -> None:
        """Drop the tensor's pages from this process (they stay in the OS file cache)."""
        if self._map is None or not hasattr(self._map, "madvise"):
            return
        info = self.tensors[name]
        start = (self.data_start + info.begin) // mmap.PAGESIZE * mmap.PAGESIZE
        length = self.data_start + info.end - start
        if length > 0:
            self._map.madvise(mmap.MADV_DONTNEED, start, length)


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def widen(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Stored bits (from `SafetensorsFile.raw`) → float64 numbers, exactly."""
    if dtype == "BF16":
        bits = raw.astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return raw.astype(np.float64)


class Checkpoint:
    """The weights of a model folder: `model.safetensors`, or shards listed in an index.

    Shards are opened (header only) the first time one of their tensors is asked for.
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._files: dict[str, SafetensorsFile] = {}
        single = self.folder / SINGLE_NAME
        index = self.folder / INDEX_NAME
        if single.is_file():
            self._weight_map = None
            self._default = SINGLE_NAME
        elif index.is_file():
            self._weight_map = _read_index(index)
            self._default = None
        else:
            found = sorted(p.name for p in self.folder.glob("*.safetensors"))
            if len(found) == 1:
                self._weight_map, self._default = None, found[0]
            else:
                others = sorted(p.name for p in self.folder.glob("*.bin")) + sorted(
                    p.name for p in self.folder.glob("*.pt*")
                )
                why = (
                    f"{len(found)} .safetensors files but no {INDEX_NAME} listing them"
                    if found
                    else "no model.safetensors"
                    + (
                        f" (only {', '.join(others[:3])}: save it with safetensors)"
                        if others
                        else ""
                    )
                )
                raise ValueError(f"{self.folder} has {why}")
        if self._default is not None:
            self._file(self._default)  # parse and check the header now

    def _file(self, filename: str) -> SafetensorsFile:
        if filename not in self._files:
            path = self.folder / filename
            if not path.is_file():
                raise ValueError(
                    f"{INDEX_NAME} lists the shard {filename!r}, which is missing from "
                    f"{self.folder}"
                )
            self._files[filename] = SafetensorsFile(path)
        return self._files[filename]

    def names(self) -> set[str]:
        if self._weight_map is not None:
            return set(self._weight_map)
        return set(self._file(self._default).tensors)

    def where(self, name: str) -> str:
        """The file that holds (or should hold) tensor `name`."""
        if self._weight_map is not None:
            return self._weight_map.get(name, INDEX_NAME)
        return self._default

    def info(self, name: str) -> tuple[SafetensorsFile, TensorInfo]:
        filename = self.where(name)
        if self._weight_map is not None and name not in self._weight_map:
            raise ValueError(f"tensor {name!r} is missing from {INDEX_NAME} in {self.folder}")
        file = self._file(filename)
        if name not in file.tensors:
            raise ValueError(f"tensor {name!r} is missing from {filename} in {self.folder}")
        return file, file.tensors[name]

    def read(self, name: str, rows=None) -> np.ndarray:
        """Tensor `name` as float64 (only `rows` of its first axis when given), checked finite."""
        file, info = self.info(name)
        raw = file.raw(name)
        if rows is not None:
            raw = raw[np.asarray(rows, dtype=np.int64)]
        values = widen(raw, info.dtype)
        file.release(name)
        return check_finite(values, name)

    def raw(self, name: str) -> tuple[np.ndarray, str]:
        """Tensor `name`'s mapped bits and dtype (for reading it in slices; `release` after)."""
        file, info = self.info(name)
        return file.raw(name), info.dtype

    def release(self, name: str) -> None:
        self.info(name)[0].release(name)


def check_finite(values: np.ndarray, name: str) -> np.ndarray:
    if not np.isfinite(values).all():
        bad = "NaN" if np.isnan(values).any() else "Inf"
        raise ValueError(
            f"tensor {name!r} holds {bad} values: the checkpoint is corrupt or was saved "
            f"after training diverged"
        )
    return values


def _read_index(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name} is not valid JSON: {exc}") from None
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and "/" not in v and "\\" not in v
        for k, v in weight_map.items()
    ):
        raise ValueError(f'{path.name} must hold a "weight_map" from tensor names to file names')
    return weight_map
