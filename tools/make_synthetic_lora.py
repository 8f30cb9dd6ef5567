#!/usr/bin/env python3
"""Writes a synthetic LoRA adapter (llama.cpp's GGUF adapter format) for a GGUF base model: random
A and B of a given rank on every attention and feed-forward projection of every layer (and the
output head with --head), the shape a PEFT fine-tune of all linear layers has. For measuring
what adapters cost (docs/perf/lora.md), not for quality: the weights are noise.

Usage (outside CI; needs numpy and PyPI's gguf):
    python3 tools/make_synthetic_lora.py BASE.gguf OUT.gguf [--rank 16] [--alpha 32] [--type f16|f32] [--head]
"""

from __future__ import annotations

import argparse

import gguf
import numpy as np

PROJECTIONS = ["attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("out")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=float, default=32.0)
    parser.add_argument("--type", choices=["f16", "f32"], default="f16")
    parser.add_argument("--head", action="store_true", help="adapt the output head too")
    args = parser.parse_args()

    reader = gguf.GGUFReader(args.base)
    arch = bytes(reader.fields["general.architecture"].parts[-1]).decode()
    shapes = {t.name: [int(d) for d in t.shape] for t in reader.tensors}  # GGUF order: [in, out]
    names = [n for n in shapes if n.startswith("blk.") and n.split(".")[2] in PROJECTIONS and n.endswith(".weight")]
    if args.head and "output.weight" in shapes:
        names.append("output.weight")
    dtype = np.float16 if args.type == "f16" else np.float32
    rng = np.random.default_rng(11)
    writer = gguf.GGUFWriter(args.out, arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", args.alpha)
    for name in names:
        n_in, n_out = shapes[name]
        # numpy shapes are GGUF's reversed: lora_a is [in, r] in GGUF, (r, in) here.
        a = (rng.standard_normal((args.rank, n_in)) / np.sqrt(n_in)).astype(dtype)
        b = (rng.standard_normal((n_out, args.rank)) * 0.01).astype(dtype)
        writer.add_tensor(name + ".lora_a", a)
        writer.add_tensor(name + ".lora_b", b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"{args.out}: {len(names)} weights adapted, rank {args.rank}, {args.type}")


if __name__ == "__main__":
    main()
