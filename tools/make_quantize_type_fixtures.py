#!/usr/bin/env python3
"""Writes tests/fixtures/quantize/types-<model>.json: the type llama-quantize gives each tensor.

`lpx-pipeline quantize IN OUT TYPE` must pick every tensor's type as `llama-quantize IN OUT TYPE`
does (its aliases, output and embedding rules, layer mixes and shape fallbacks). This records
those choices with `llama-quantize --dry-run` (which decides every type and writes nothing) for
each type name and for --pure, on the models the tests have: the default SmolLM2 (Q4_1), Gemma 3
270M (Q4_K_M) and the shared tiny Llama (F16/F32). Quantized inputs need --allow-requantize.

Usage (outside CI, with the peer built as docs/peers.md says):
    python3 tools/make_quantize_type_fixtures.py /tmp/lpx-peer/build/bin/llama-quantize
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = {
    "smollm2": ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": ROOT / "models/gemma-3-270m-q4_k_m.gguf",
    "tiny-llama": ROOT.parent / "shared/models/llama-2-tiny-random.gguf",
}
TYPE_NAMES = ["F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q4_K_S", "Q4_K_M",
              "Q5_K", "Q5_K_S", "Q5_K_M", "Q6_K"]
LINE = re.compile(r"^\[\s*\d+/\s*\d+\]\s+(\S+)\s+- \[([\d,\s]+)\], type =\s+(\w+),.*?(?:\((\w+)\))?\s*$")


def choices(binary: str, model: Path, type_name: str, pure: bool) -> list:
    args = [binary, "--dry-run", "--allow-requantize"] + (["--pure"] if pure else []) + [str(model), type_name]
    env = dict(os.environ, LD_LIBRARY_PATH=str(Path(binary).parent))
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    out = []
    for line in (done.stdout + done.stderr).splitlines():
        m = LINE.match(line)
        if m:
            name, shape, source, target = m.groups()
            out.append({"name": name, "shape": [int(d) for d in shape.split(",")],
                        "from": source.upper(), "to": (target or source).upper()})
    if not out:
        sys.exit(f"no tensor lines from: {' '.join(args)}\n{done.stderr[-2000:]}")
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for key, model in MODELS.items():
        # One list of tensors (in llama-quantize's order), then per type name the type of each.
        record = {"generator": "tools/make_quantize_type_fixtures.py",
                  "quantizer": "llama-quantize --dry-run --allow-requantize (llama-cpp-python 0.3.36, ggml 0.25.3)",
                  "model": model.name, "tensors": None, "types": {}}
        for type_name in TYPE_NAMES:
            for pure in (False, True):
                label = type_name + (" --pure" if pure else "")
                listed = choices(sys.argv[1], model, type_name, pure)
                tensors = [[t["name"], t["shape"], t["from"]] for t in listed]
                if record["tensors"] is None:
                    record["tensors"] = tensors
                assert record["tensors"] == tensors, (key, label)
                record["types"][label] = " ".join(t["to"] for t in listed)
        target = ROOT / f"tests/fixtures/quantize/types-{key}.json"
        lines = ["{", f' "generator": {json.dumps(record["generator"])},', f' "quantizer": {json.dumps(record["quantizer"])},',
                 f' "model": {json.dumps(record["model"])},', ' "tensors": [']
        lines += ["  " + json.dumps(t) + ("," if i + 1 < len(record["tensors"]) else "")
                  for i, t in enumerate(record["tensors"])]
        lines += [" ],", ' "types": {']
        items = list(record["types"].items())
        lines += [f"  {json.dumps(k)}: {json.dumps(v)}" + ("," if i + 1 < len(items) else "") for i, (k, v) in enumerate(items)]
        lines += [" }", "}"]
        target.write_text("\n".join(lines) + "\n")
        print(f"wrote {target} ({target.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
