#!/usr/bin/env python3
"""Writes tests/fixtures/quantize/blocks.json: what llama.cpp's quantizers make of fixed inputs.

`lpx-pipeline quantize` must write byte for byte what `llama-quantize` writes. This pins the
block quantizers: for every output type, the SHA-256 of the bytes ggml's own
`ggml_quantize_chunk` (the function llama-quantize calls, from the peer's libggml-base.so, loaded
with ctypes) gives for each of a few inputs. The inputs are generated from integers (splitmix64),
each value an integer times a power of two, so that the C++ test regenerates exactly the same
floats without a data file:

    value(i) = (int32)(splitmix64(seed + i) >> 40) - 2^23)  *  2^-exponent

with per-dataset twists (outliers, constant rows, positive only, subnormals) described in the
JSON beside each dataset and implemented the same way in tests/kernels/quantize_blocks_test.cpp.

Usage (outside CI, with the peer built as docs/peers.md says):
    python3 tools/make_quantize_fixtures.py /tmp/lpx-peer/build/bin/libggml-base.so
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import struct
import sys
from pathlib import Path

MASK = (1 << 64) - 1
ROWS, COLS = 8, 512  # 512: a multiple of every block size (32 and 256)

# GGML type ids (ggml.h) of the types llama-quantize writes.
TYPES = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11,
         "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "BF16": 30}

# name -> (seed, exponent, twist); twists: see value().
DATASETS = {
    "weights": (1, 30, "none"),            # |v| < 2^-7, like trained weights
    "outliers": (2, 30, "outliers"),       # every 97th value 1024 times larger
    "constant_rows": (3, 24, "constant"),  # each row one value (row 0 all zero)
    "positive": (4, 28, "positive"),       # v >= 0: the min-based formats' offsets
    "wide": (5, 20, "none"),               # |v| < 8
    "f16_subnormal": (6, 40, "none"),      # |v| < 2^-17: f16 subnormals
    "f32_subnormal": (7, 149, "none"),     # f32 (and bf16) subnormals; zeros in f16
}


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def integer(seed: int, i: int) -> int:
    return (splitmix64(seed * 1_000_003 + i) >> 40) - (1 << 23)  # in [-2^23, 2^23)


def value(seed: int, exponent: int, twist: str, row: int, col: int) -> float:
    i = row * COLS + col
    if twist == "constant":
        n = 0 if row == 0 else integer(seed, row)
    else:
        n = integer(seed, i)
    if twist == "positive":
        n = abs(n)
    if twist == "outliers" and i % 97 == 0:
        n *= 1024
    # n * 2^-exponent exactly: |n| < 2^23 (times 2^10 for outliers, which only moves the
    # exponent), and 2^-149 is float32's smallest step.
    return float(n) * 2.0 ** -exponent


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lib = ctypes.CDLL(sys.argv[1])
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_void_p,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.POINTER(ctypes.c_float)]
    lib.ggml_row_size.restype = ctypes.c_size_t
    lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    out = {"generator": "tools/make_quantize_fixtures.py",
           "quantizer": "ggml_quantize_chunk of llama.cpp " + "(llama-cpp-python 0.3.36, ggml 0.25.3)",
           "rows": ROWS, "cols": COLS, "datasets": {}, "sha256": {}}
    inputs = {}
    for name, (seed, exponent, twist) in DATASETS.items():
        floats = [value(seed, exponent, twist, r, c) for r in range(ROWS) for c in range(COLS)]
        packed = struct.pack(f"<{len(floats)}f", *floats)
        assert struct.unpack(f"<{len(floats)}f", packed) == tuple(floats), name  # exact in float32
        inputs[name] = (ctypes.c_float * len(floats))(*floats)
        out["datasets"][name] = {"seed": seed, "exponent": exponent, "twist": twist,
                                 "input_sha256": hashlib.sha256(packed).hexdigest()}
    for type_name, type_id in TYPES.items():
        out["sha256"][type_name] = {}
        size = lib.ggml_row_size(type_id, COLS) * ROWS
        for name, data in inputs.items():
            buffer = ctypes.create_string_buffer(size)
            written = lib.ggml_quantize_chunk(type_id, data, buffer, 0, ROWS, COLS, None)
            assert written == size, (type_name, name, written, size)
            out["sha256"][type_name][name] = hashlib.sha256(buffer.raw).hexdigest()
    target = Path(__file__).resolve().parents[1] / "tests/fixtures/quantize/blocks.json"
    target.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
