#!/usr/bin/env python3
"""Writes tests/fixtures/lora/: a synthetic LoRA adapter in llama.cpp's GGUF adapter format and the
logits llama.cpp gives with it (`--lora` at scales 1 and 0.5), the peer's answer for LPX's merge.

Base model: the qwen3 fixture (tests/fixtures/hf/qwen3, f32 weights) converted to GGUF by
`lpx-pipeline convert` (deterministic; the test converts it again and checks the sha256 recorded
here). Adapter: rank 4, alpha 8, random A and B (f32) on attn_q, attn_v, attn_output, ffn_down of
every layer and on the output head. The logits of every position of two prompts, with no adapter
(to show the adapter matters), with the adapter at scale 1 and at scale 0.5.

Usage (outside CI; the peer's llama-cpp-python as docs/peers.md builds it, with gguf and numpy):
    /work/peer/venv/bin/python tools/make_lora_fixtures.py
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from pathlib import Path

import gguf
import numpy as np
from llama_cpp import Llama

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests/fixtures/lora"
LPX = ROOT / "build/bin/lpx-pipeline"
RANK, ALPHA = 4, 8.0
TARGETS = ["attn_q", "attn_v", "attn_output", "ffn_down"]


def write_adapter(base: Path, path: Path) -> None:
    reader = gguf.GGUFReader(base)
    shapes = {t.name: [int(d) for d in t.shape] for t in reader.tensors}  # GGUF order: [in, out]
    layers = int(reader.fields["qwen3.block_count"].parts[-1][0])
    names = [f"blk.{l}.{t}.weight" for l in range(layers) for t in TARGETS] + ["output.weight"]
    rng = np.random.default_rng(7)
    writer = gguf.GGUFWriter(str(path), "qwen3")
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", ALPHA)
    for name in names:
        n_in, n_out = shapes[name]
        # numpy shapes are GGUF's reversed: lora_a is [in, r] in GGUF, (r, in) here.
        a = (rng.standard_normal((RANK, n_in)) / np.sqrt(n_in)).astype(np.float32)
        b = (rng.standard_normal((n_out, RANK)) * 0.5).astype(np.float32)
        writer.add_tensor(name + ".lora_a", a)
        writer.add_tensor(name + ".lora_b", b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def logits(base: Path, adapter: Path | None, scale: float, ids: list[int]) -> list[list[float]]:
    llm = Llama(model_path=str(base), lora_path=str(adapter) if adapter else None, lora_scale=scale,
                n_ctx=256, n_batch=256, n_threads=2, logits_all=True, verbose=False)
    llm.eval(ids)
    rows = np.array(llm.scores[: len(ids)], dtype=np.float64)
    return [[float(f"{x:.6g}") for x in row] for row in rows]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "qwen3.gguf"
        subprocess.run([LPX, "convert", ROOT / "tests/fixtures/hf/qwen3", "-o", base], check=True,
                       capture_output=True)
        adapter = OUT / "qwen3-lora-r4.gguf"
        write_adapter(base, adapter)
        expected = json.loads((ROOT / "tests/fixtures/hf/qwen3/expected.json").read_text())
        cases = []
        for case in expected["logits"]:
            ids = case["ids"]
            cases.append({"ids": ids, "scales": {
                "0": logits(base, None, 1.0, ids),
                "1": logits(base, adapter, 1.0, ids),
                "0.5": logits(base, adapter, 0.5, ids)}})
        record = {"base": {"convert": "tests/fixtures/hf/qwen3",
                           "sha256": hashlib.sha256(base.read_bytes()).hexdigest()},
                  "adapter": adapter.name, "rank": RANK, "alpha": ALPHA,
                  "peer": "llama-cpp-python 0.3.36 (llama.cpp 0c1e57098), AVX2 build, --lora / lora_scale",
                  "cases": cases}
        (OUT / "expected.json").write_text(json.dumps(record) + "\n")
        print(adapter, adapter.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
