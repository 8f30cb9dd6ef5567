#!/usr/bin/env python3
"""Writes the golden data for the reference dequantization tests (tests/kernels/golden/).

For every tensor type LPX supports it draws random, valid blocks, asks the `gguf` Python package
(`gguf.quants.dequantize`, the GGUF ecosystem's own reference) what they decode to, and stores

    <name>.blocks.bin   the raw blocks, exactly as they would sit in a GGUF file
    <name>.f32.bin      the expected f32 values, little-endian

It also writes ggml_types.tsv: every GGML type id the package knows, with its name, elements per
block and bytes per block (gguf.GGML_QUANT_SIZES), so the C++ tests check the type tables against
the package instead of against numbers typed by hand.

Q8_K is the one exception: the package has no dequantizer for it (it is an intermediate type of
dot products), so its expected values are computed here in numpy as d * q in float32, which is
the published definition of the format.

Deterministic (fixed seed): re-running it with the same gguf and numpy versions rewrites
identical files. Usage: python3 tools/make_dequant_goldens.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import gguf
import gguf.quants
from gguf import GGMLQuantizationType as T

QK_K = 256
SEED = 20240611
N_QUANT_BLOCKS = 64  # per quantized type: 56 random blocks + 8 with unusual scales

rng = np.random.default_rng(SEED)

# Unusual f16 scale values, as raw bits: +0, -0, largest finite, its negative, smallest
# subnormal, largest subnormal, smallest normal, -1.
F16_ODD_BITS = [0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x0001, 0x03FF, 0x0400, 0xBC00]


def f16_bytes(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float16).reshape(-1, 1).view(np.uint8)


def f16_bits_bytes(bits) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint16).reshape(-1, 1).view(np.uint8)


def realistic_f16_scales(n: int, sign_random: bool = True) -> np.ndarray:
    """Scales of the size real quantized weights have (1e-5 .. 1), some negative."""
    magnitude = 10.0 ** rng.uniform(-5.0, 0.0, size=n)
    sign = rng.choice([-1.0, 1.0], size=n) if sign_random else np.ones(n)
    return f16_bytes(magnitude * sign)


def scale_fields(n_random: int, n_odd: int) -> np.ndarray:
    """(n_random + n_odd, 2) bytes: random realistic f16 scales, then the unusual ones."""
    odd = f16_bits_bytes([F16_ODD_BITS[i % len(F16_ODD_BITS)] for i in range(n_odd)])
    return np.concatenate([realistic_f16_scales(n_random), odd], axis=0)


def random_bytes(n_blocks: int, n: int) -> np.ndarray:
    return rng.integers(0, 256, size=(n_blocks, n), dtype=np.uint8)


def two_scale_fields(n_blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """d and a second f16 field (m or dmin). The odd blocks pair each odd d with a random second
    field and vice versa, so both fields meet every unusual value."""
    n_odd = len(F16_ODD_BITS)
    n_random = n_blocks - 2 * n_odd
    odd = f16_bits_bytes(F16_ODD_BITS)
    d = np.concatenate([realistic_f16_scales(n_random), odd, realistic_f16_scales(n_odd)])
    second = np.concatenate(
        [realistic_f16_scales(n_random), realistic_f16_scales(n_odd), odd[::-1]])
    return d, second


def blocks_q8_0(n: int) -> np.ndarray:
    return np.concatenate([scale_fields(n - 8, 8), random_bytes(n, 32)], axis=1)


def blocks_q4_0(n: int) -> np.ndarray:
    return np.concatenate([scale_fields(n - 8, 8), random_bytes(n, 16)], axis=1)


def blocks_q4_1(n: int) -> np.ndarray:
    d, m = two_scale_fields(n)
    return np.concatenate([d, m, random_bytes(n, 16)], axis=1)


def blocks_q5_0(n: int) -> np.ndarray:
    return np.concatenate([scale_fields(n - 8, 8), random_bytes(n, 4), random_bytes(n, 16)], axis=1)


def blocks_q5_1(n: int) -> np.ndarray:
    d, m = two_scale_fields(n)
    return np.concatenate([d, m, random_bytes(n, 4), random_bytes(n, 16)], axis=1)


def blocks_q4_k(n: int) -> np.ndarray:
    d, dmin = two_scale_fields(n)
    return np.concatenate([d, dmin, random_bytes(n, 12), random_bytes(n, QK_K // 2)], axis=1)


def blocks_q5_k(n: int) -> np.ndarray:
    d, dmin = two_scale_fields(n)
    return np.concatenate(
        [d, dmin, random_bytes(n, 12), random_bytes(n, QK_K // 8), random_bytes(n, QK_K // 2)],
        axis=1)


def blocks_q6_k(n: int) -> np.ndarray:
    ql = random_bytes(n, QK_K // 2)
    qh = random_bytes(n, QK_K // 4)
    scales = random_bytes(n, QK_K // 16)
    return np.concatenate([ql, qh, scales, scale_fields(n - 8, 8)], axis=1)


def blocks_q8_k(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Q8_K blocks (f32 d, 256 int8 q, 16 int16 sums of 16 q each) and their values."""
    n_odd = 8
    d = (10.0 ** rng.uniform(-6.0, 0.0, size=n)) * rng.choice([-1.0, 1.0], size=n)
    # +0, -0, largest finite, smallest subnormal, smallest normal, a large value, a subnormal
    # value and a negative tiny normal: the products then cover overflow-free rounding,
    # subnormal results and signed zeros.
    d[n - n_odd:] = [0.0, -0.0, np.finfo(np.float32).max / 256, np.float32(1.4e-45),
                     np.finfo(np.float32).tiny, 3.0e30, 2.5e-40, -1.5e-38]
    d = d.astype(np.float32)
    q = rng.integers(-128, 128, size=(n, QK_K), dtype=np.int8)
    bsums = q.astype(np.int16).reshape(n, 16, 16).sum(axis=-1, dtype=np.int16)
    blocks = np.concatenate(
        [d.reshape(-1, 1).view(np.uint8), q.view(np.uint8), bsums.astype("<i2").view(np.uint8)],
        axis=1)
    values = d.reshape(-1, 1) * q.astype(np.float32)  # float32 * float32, as ggml does it
    return blocks, values.astype(np.float32)


def f16_inputs() -> np.ndarray:
    """Every f16 whose exponent is all zeros or all ones (zeros, subnormals, infinities, all NaN
    payloads, both signs), then 4096 random other patterns."""
    bits = np.arange(1 << 16, dtype=np.uint16)
    exponent = (bits >> 10) & 0x1F
    special = bits[(exponent == 0) | (exponent == 0x1F)]
    others = rng.choice(bits[(exponent != 0) & (exponent != 0x1F)], size=4096, replace=False)
    return np.concatenate([special, others]).astype("<u2").view(np.uint8)


def bf16_inputs() -> np.ndarray:
    bits = np.arange(1 << 16, dtype=np.uint16)
    exponent = (bits >> 7) & 0xFF
    special = bits[(exponent == 0) | (exponent == 0xFF)]
    others = rng.choice(bits[(exponent != 0) & (exponent != 0xFF)], size=3584, replace=False)
    return np.concatenate([special, others]).astype("<u2").view(np.uint8)


def f32_inputs() -> np.ndarray:
    bits = rng.integers(0, 1 << 32, size=1024, dtype=np.uint64).astype(np.uint32)
    specials = np.array([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000,
                         0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                         0xFFFFFFFF], dtype=np.uint32)
    bits[: len(specials)] = specials
    return bits.astype("<u4").view(np.uint8)


QUANT_GENERATORS = {
    T.Q8_0: blocks_q8_0,
    T.Q4_0: blocks_q4_0,
    T.Q4_1: blocks_q4_1,
    T.Q5_0: blocks_q5_0,
    T.Q5_1: blocks_q5_1,
    T.Q4_K: blocks_q4_k,
    T.Q5_K: blocks_q5_k,
    T.Q6_K: blocks_q6_k,
}


def reference_dequantize(raw: np.ndarray, qtype: T) -> np.ndarray:
    with np.errstate(all="raise"):  # an overflow here would mean the inputs are not realistic
        values = gguf.quants.dequantize(raw.reshape(-1), qtype)
    assert values.dtype == np.float32
    return values.reshape(-1)


def write_pair(out_dir: Path, qtype: T, raw: np.ndarray, values: np.ndarray) -> None:
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    values = np.ascontiguousarray(values, dtype="<f4").reshape(-1)
    assert raw.size % type_size == 0 and values.size == raw.size // type_size * block_size
    name = qtype.name.lower()
    (out_dir / f"{name}.blocks.bin").write_bytes(raw.tobytes())
    (out_dir / f"{name}.f32.bin").write_bytes(values.tobytes())


def write_type_table(out_dir: Path) -> None:
    lines = [f"# GGML type ids as known to gguf {metadata.version('gguf')}",
             "# id\tname\telements_per_block\tbytes_per_block"]
    for qtype in sorted(T, key=lambda t: t.value):
        block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
        lines.append(f"{qtype.value}\t{qtype.name}\t{block_size}\t{type_size}")
    (out_dir / "ggml_types.tsv").write_text("\n".join(lines) + "\n")


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parent.parent / "tests" / "kernels" / "golden"
    out_dir.mkdir(parents=True, exist_ok=True)

    for qtype, inputs in ((T.F32, f32_inputs()), (T.F16, f16_inputs()), (T.BF16, bf16_inputs())):
        with np.errstate(all="ignore"):  # NaN inputs are part of the test
            values = gguf.quants.dequantize(inputs, qtype).reshape(-1)
        write_pair(out_dir, qtype, inputs, values)

    for qtype, generate in QUANT_GENERATORS.items():
        raw = generate(N_QUANT_BLOCKS)
        assert raw.shape == (N_QUANT_BLOCKS, gguf.GGML_QUANT_SIZES[qtype][1]), qtype.name
        write_pair(out_dir, qtype, raw, reference_dequantize(raw, qtype))

    raw, values = blocks_q8_k(N_QUANT_BLOCKS)
    assert raw.shape == (N_QUANT_BLOCKS, gguf.GGML_QUANT_SIZES[T.Q8_K][1])
    write_pair(out_dir, T.Q8_K, raw, values)

    write_type_table(out_dir)
    total = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file())
    print(f"wrote {out_dir} ({total} bytes)")


if __name__ == "__main__":
    main()
