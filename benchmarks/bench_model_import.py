"""How long does opening a real model's layer take, and how much memory does it need?

Writes a synthetic checkpoint of GPT-2 small's shape (12 layers, d_model 768, 12 heads,
vocabulary 50257, 1024 positions, float32 with the causal-mask buffers: ~548 MB like the
real `model.safetensors`) to a temporary folder, then, in a fresh process each time,
opens layer 11 on 64 tokens (so all 11 earlier blocks run) and prints:
  time            wall time of open_layer(), page cache dropped first (cold) and again (warm)
  numpy peak      largest total of Python/numpy allocations during the call (tracemalloc)
  max RSS         the process's resident high-water mark (the interpreter itself is ~60 MB)
with the BLAS library's default threads and with one thread (on a busy machine, threads
of a small multiplication can wait for each other: compare the two).
Run with `python benchmarks/bench_model_import.py` (needs ~0.6 GB of free disk in $TMPDIR).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

D, LAYERS, VOCAB, POSITIONS, HEADS = 768, 12, 50257, 1024, 12
TOKENS, LAYER = 64, 11


def gpt2_small_shapes() -> dict[str, tuple[int, ...]]:
    shapes = {"wte.weight": (VOCAB, D), "wpe.weight": (POSITIONS, D)}
    for i in range(LAYERS):
        p = f"h.{i}."
        shapes |= {
            p + "ln_1.weight": (D,), p + "ln_1.bias": (D,),
            p + "attn.bias": (1, 1, POSITIONS, POSITIONS),
            p + "attn.c_attn.weight": (D, 3 * D), p + "attn.c_attn.bias": (3 * D,),
            p + "attn.c_proj.weight": (D, D), p + "attn.c_proj.bias": (D,),
            p + "ln_2.weight": (D,), p + "ln_2.bias": (D,),
            p + "mlp.c_fc.weight": (D, 4 * D), p + "mlp.c_fc.bias": (4 * D,),
            p + "mlp.c_proj.weight": (4 * D, D), p + "mlp.c_proj.bias": (D,),
        }  # fmt: skip
    return shapes | {"ln_f.weight": (D,), "ln_f.bias": (D,)}


def write_checkpoint(folder: Path) -> int:
    """Stream random float32 tensors to model.safetensors; returns the file size."""
    shapes = gpt2_small_shapes()
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = int(np.prod(shape)) * 4
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(0)
    path = folder / "model.safetensors"
    with open(path, "wb") as fh:
        fh.write(len(text).to_bytes(8, "little") + text)
        for name, shape in shapes.items():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight"):
                values = np.ones(shape, dtype=np.float32)
            else:
                values = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
            fh.write(values.astype("<f4").tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    config = {
        "model_type": "gpt2", "n_embd": D, "n_layer": LAYERS, "n_head": HEADS,
        "n_positions": POSITIONS, "vocab_size": VOCAB,
    }  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config))
    return path.stat().st_size


def drop_page_cache(path: Path) -> None:
    if hasattr(os, "posix_fadvise"):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def peak_rss() -> int:
    """The process's resident high-water mark in bytes. Linux's VmHWM belongs to this
    program; ru_maxrss would also count the parent's peak from before exec()."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure(folder: Path, cold: bool) -> None:
    """In a fresh process: open layer 11 on 64 tokens; print one JSON line."""
    from mha_gui.engine.models import open_layer

    if cold:
        drop_page_cache(folder / "model.safetensors")
    ids = np.random.default_rng(1).integers(0, VOCAB, TOKENS).tolist()
    tracemalloc.start()
    t0 = time.perf_counter()
    session = open_layer(folder, LAYER, token_ids=ids)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss = peak_rss()
    assert session.config.n == TOKENS
    print(json.dumps({"seconds": elapsed, "peak": peak, "maxrss": maxrss}))


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] in ("--cold", "--warm"):
        measure(Path(sys.argv[2]), sys.argv[1] == "--cold")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        size = write_checkpoint(folder)
        print(f"synthetic GPT-2 small checkpoint: {size / 1e6:.0f} MB written in "
              f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
        one_layer = sum(
            int(np.prod(s)) * 4 for n, s in gpt2_small_shapes().items() if n.startswith("h.0.")
        )
        print(f"one block's float32 weights: {one_layer / 1e6:.1f} MB "
              f"(float64: {2 * one_layer / 1e6:.1f} MB)")  # fmt: skip
        print(f"open_layer(layer {LAYER} of {LAYERS}, {TOKENS} tokens), fresh process each run:")
        one = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        for threads, env in (("default", {}), ("1", one)):
            for mode in ("--cold", "--warm", "--warm"):
                res = subprocess.run(
                    [sys.executable, __file__, mode, str(folder)],
                    capture_output=True, text=True, check=True, env={**os.environ, **env},
                )  # fmt: skip
                r = json.loads(res.stdout.strip().splitlines()[-1])
                print(f"  BLAS threads {threads:<7} {mode[2:]:<5} {r['seconds']:6.2f} s   "
                      f"numpy peak {r['peak'] / 1e6:6.1f} MB   "
                      f"max RSS {r['maxrss'] / 1e6:6.1f} MB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
