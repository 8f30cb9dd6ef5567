#!/usr/bin/env python3
"""Writes tests/fixtures/quantize/files.json: the SHA-256 of the files llama-quantize writes.

`lpx-pipeline quantize` must write these bytes exactly. Inputs: the shared tiny Llama (F16/F32,
every type name with and without --pure), and the default SmolLM2-135M dequantized to F16 by
llama-quantize itself (`--allow-requantize ... F16`, the round trip the issue asks for) and then
quantized to every type name. Runs llama-quantize from llama-cpp-python 0.3.36 (outside CI).

Usage: python3 tools/make_quantize_file_fixtures.py /tmp/lpx-peer/build/bin/llama-quantize
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT.parent / "shared/models/llama-2-tiny-random.gguf"
SMOLLM2 = ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
TYPE_NAMES = ["F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q4_K_S", "Q4_K_M",
              "Q5_K", "Q5_K_S", "Q5_K_M", "Q6_K"]


def run(binary: str, args: list) -> None:
    env = dict(os.environ, LD_LIBRARY_PATH=str(Path(binary).parent))
    subprocess.run([binary] + args, check=True, env=env, capture_output=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    out = {"generator": "tools/make_quantize_file_fixtures.py",
           "quantizer": "llama-quantize (llama-cpp-python 0.3.36, ggml 0.25.3)", "tiny-llama": {}, "smollm2-f16": {}}
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "out.gguf"
        for name in TYPE_NAMES:
            for pure in (False, True):
                run(binary, (["--pure"] if pure else []) + [str(TINY), str(target), name])
                out["tiny-llama"][name + (" --pure" if pure else "")] = sha256(target)
        f16 = Path(tmp) / "smollm2-f16.gguf"
        run(binary, ["--allow-requantize", str(SMOLLM2), str(f16), "F16"])
        out["smollm2-f16"]["(the F16 input)"] = sha256(f16)
        for name in TYPE_NAMES[1:]:
            run(binary, [str(f16), str(target), name])
            out["smollm2-f16"][name] = sha256(target)
    path = ROOT / "tests/fixtures/quantize/files.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
