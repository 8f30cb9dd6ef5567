#!/usr/bin/env python3
"""Writes the synthetic model-family fixtures (tests/fixtures/families/*.json) from llama.cpp, the peer.

What: for each model family LPX supports (qwen3, gemma2, gemma3, phi3, smollm3, granite) LPX
writes a small synthetic GGUF (`lpx-pipeline synth`: the family's real shapes and metadata, random
weights, fewer layers, a meaningless vocabulary), and this script asks llama.cpp what it computes
for a few fixed token-id prompts: per greedy step the best two ids and logits and their margin.
An LPX test rewrites the same GGUF (same synth arguments -> same bytes; the fixture records its
size and sha256), feeds it the same ids and compares its logits with the peer's. No llama.cpp
code or text is copied into the repository; only ids and float32 logits are stored.

Peer: the AVX2-only llama.cpp build of llama-cpp-python 0.3.36 described in
tools/make_greedy_fixtures.py (its docstring gives the build commands) and docs/peers.md. This
script imports that script's helpers and constants (JSON layout, float32 printing, the peer
description) and runs llama.cpp exactly as it does:
  * GGML_CPU_TILED_MM=0 in the environment before llama_cpp is imported, model loaded CPU only
    with use_extra_bufts = false: ggml's plain vec_dot / tinyBLAS matmuls, no weight repacking;
  * a fresh context per run: n_ctx = n_batch = n_ubatch = 256 (1024 for gemma3's "window"
    prompt, so that its 600 ids are still one batch and the 512-position sliding window really
    cuts), one sequence, f16 K and V, swa_full (llama.cpp's default), flash attention DISABLED,
    n_threads = n_threads_batch = 2;
  * the prompt ids are fed as they are (no BOS prepended, no tokenizer involved), the whole prompt
    in ONE llama_decode, then one token per llama_decode;
  * next token = argmax of the raw logits, ties to the lowest id; 16 steps, or fewer when the
    argmax is an end-of-generation token (llama_vocab_is_eog): it is then the last generated id
    and eog_at_step its 0-based step (the synthetic vocabularies' eos can come up).
Cross-checks, as make_greedy_fixtures.py does: each prompt re-run with flash attention enabled,
with one thread, and with the prompt decoded one token per call; gemma3's "window" prompt also with
gemma3.attention.sliding_window overridden to 4096 (no window within n_ctx), to show the window
matters. The fixture itself is always the run above; cross_checks only record whether the ids
matched.

Prompts: token ids only. rng = numpy.random.default_rng(PROMPT_SEED), then "short" (24 ids),
"medium" (130 ids) and, for gemma3, "window" (600 ids) in that order, each
rng.integers(300, n_vocab - 300, size=n): uniform over [300, n_vocab - 300), which keeps clear of
the special tokens the synthetic vocabularies put at both ends (checked: no prompt id is a
control or end-of-generation token for llama.cpp). The ids are stored in the fixture, so a test
never needs to redraw them.

Run (from the repository root; the synthetic GGUFs go to --models, default
/tmp/lpx-family-models, and are deleted afterwards unless --keep):

    OMP_WAIT_POLICY=PASSIVE /work/peer/venv/bin/python tools/make_family_fixtures.py \
        --lpx build/bin/lpx-pipeline [--out tests/fixtures/families] [--only gemma3 qwen3]

A family whose GGUF llama.cpp refuses to load is reported (with llama.cpp's error lines) and
skipped; no file is written for it and the script exits with status 1.

Deterministic: the same lpx-pipeline (same synth output: see synth.sha256) and the same peer build
rewrite identical files (the CPU named in "peer" aside).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# ggml reads this once, at its first matmul: no tiled K-quant kernel (see make_greedy_fixtures.py).
os.environ["GGML_CPU_TILED_MM"] = "0"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_greedy_fixtures as G  # noqa: E402  (imports llama_cpp, or exits with a hint)

L = G.L
REPO = G.REPO

N_GENERATE = 16
N_THREADS = 2
PROMPT_SEED = 20251201
ID_LOW_MARGIN = 300  # prompt ids are drawn from [300, n_vocab - 300)

# family -> lpx-pipeline synth arguments, and the prompts: (name, number of ids, n_ctx)
FAMILIES = {
    "qwen3": {"like": "qwen3-0.6b", "type": "Q8_0", "layers": 2, "seed": 19},
    "gemma2": {"like": "gemma2-2b", "type": "Q4_0", "layers": 2, "seed": 19},
    "gemma3": {"like": "gemma3-270m", "type": "Q8_0", "layers": 6, "seed": 19,
               "note": "layers 0-4 local (sliding window 512), layer 5 global",
               "extra_prompts": [("window", 600, 1024)],
               "window_check": {"key": "gemma3.attention.sliding_window", "value": 4096,
                                "prompts": ["window"]}},
    "phi3": {"like": "phi3-mini", "type": "Q4_0", "layers": 2, "seed": 19},
    "smollm3": {"like": "smollm3-3b", "type": "Q8_0", "layers": 4, "seed": 19,
                "note": "layer 3 has no rope (llama.cpp: every 4th layer)"},
    "granite": {"like": "granite-3.3-2b", "type": "Q8_0", "layers": 2, "seed": 19},
}
PROMPTS = [("short", 24, 256), ("medium", 130, 256)]

# llama.cpp's log lines of the current load (to report why a file is refused)
_LOG: list[str] = []
_LOG_CB = None


def _log(level, text, user):
    _LOG.append(text.decode("utf-8", errors="replace") if text else "")


def synth(lpx: Path, family: str, spec: dict, out_dir: Path) -> Path:
    """Runs lpx-pipeline synth (retrying a few times: the binary may be being rebuilt)."""
    path = out_dir / f"{family}.gguf"
    cmd = [str(lpx), "synth", "--like", spec["like"], "--type", spec["type"],
           "--layers", str(spec["layers"]), "--seed", str(spec["seed"]), "-o", str(path)]
    for attempt in range(5):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 0 and path.exists():
            return path
        print(f"  synth failed (rc {r.returncode}), retrying: {r.stderr.strip()[-300:]}",
              file=sys.stderr)
        time.sleep(10)
    raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")


def load_model(path: Path, override: dict | None = None):
    """make_greedy_fixtures.load_model, but a refused file is not fatal: returns (model or None,
    llama.cpp's error lines)."""
    _LOG.clear()
    try:
        model = G.load_model(path, override)
    except RuntimeError:
        model = None
    errors = [line.strip() for line in "".join(_LOG).splitlines()
              if "error" in line.lower() or "failed" in line.lower()]
    return model, errors


def generate(model, vocab, n_vocab: int, prompt_ids: list[int], n_ctx: int, flash_attn: bool,
             n_threads: int, prompt_in_one_batch: bool = True):
    """make_greedy_fixtures.generate with the prompt in one batch of n_ctx rows and N_GENERATE
    steps: per step (best two ids, their logits)."""
    return G.generate(model, vocab, n_vocab, prompt_ids, flash_attn, n_threads,
                      prompt_in_one_batch, n_ctx=n_ctx, n_batch=n_ctx, n_generate=N_GENERATE)


def draw_prompts(n_vocab: int, prompts: list[tuple[str, int, int]]) -> list[list[int]]:
    rng = np.random.default_rng(PROMPT_SEED)
    return [[int(t) for t in rng.integers(ID_LOW_MARGIN, n_vocab - ID_LOW_MARGIN, size=n)]
            for _, n, _ in prompts]


def make_fixture(family: str, spec: dict, path: Path) -> dict | None:
    model, errors = load_model(path)
    if model is None:
        print(f"  llama.cpp refused {path}:", file=sys.stderr)
        for line in errors:
            print(f"    {line}", file=sys.stderr)
        return None
    window_check = spec.get("window_check")
    unwindowed = None
    try:
        vocab = L.llama_model_get_vocab(model)
        n_vocab = L.llama_vocab_n_tokens(vocab)
        arch = G.meta_str(model, "general.architecture")
        eog_ids = [t for t in range(n_vocab) if L.llama_vocab_is_eog(vocab, t)]
        desc = ctypes.create_string_buffer(256)
        L.llama_model_desc(model, desc, len(desc))
        swa = G.meta_str(model, f"{arch}.attention.sliding_window")
        prompts_spec = PROMPTS + spec.get("extra_prompts", [])
        all_ids = draw_prompts(n_vocab, prompts_spec)
        for ids in all_ids:
            bad = [t for t in ids if L.llama_vocab_is_eog(vocab, t)
                   or L.llama_vocab_get_attr(vocab, t) & L.LLAMA_TOKEN_ATTR_CONTROL]
            if bad:
                raise RuntimeError(f"prompt ids {bad[:5]} are special tokens for llama.cpp")
        if window_check is not None:
            unwindowed, errs = load_model(path, window_check)
            if unwindowed is None:
                raise RuntimeError(f"cannot load {path} with {window_check}: {errs}")

        prompts = []
        for (name, n_ids, n_ctx), ids in zip(prompts_spec, all_ids):
            steps = generate(model, vocab, n_vocab, ids, n_ctx, False, N_THREADS)
            gen = [s[0][0] for s in steps]
            cross = G.cross_checks(gen, lambda fa, nt, one_batch: [
                s[0][0] for s in generate(model, vocab, n_vocab, ids, n_ctx, fa, nt, one_batch)])
            if window_check is not None and name in window_check["prompts"]:
                other_steps = generate(unwindowed, L.llama_model_get_vocab(unwindowed), n_vocab,
                                       ids, n_ctx, False, N_THREADS)
                other = [s[0][0] for s in other_steps]
                diff = G.first_difference(gen, other)
                same = len(gen) if diff is None else diff
                label = f"sliding_window_{window_check['value']}"
                cross[label] = {"same_ids": diff is None}
                if diff is not None:
                    cross[label]["first_differing_step"] = diff
                    cross[label]["top1_id_there"] = other[diff]
                    cross[label]["top1_logit_there"] = G.f32(other_steps[diff][1][0])
                cross[label]["max_top1_logit_difference_while_same"] = (G.f32(max(
                    abs(np.float32(a[1][0]) - np.float32(b[1][0]))
                    for a, b in zip(steps[:same], other_steps[:same]))) if same else None)
            margins = [G.f32(np.float32(s[1][0]) - np.float32(s[1][1])) for s in steps]
            entry = {
                "name": name,
                "n_ctx": n_ctx,
                "prompt_ids": ids,
                "n_generated": len(gen),
                "eog_at_step": (len(gen) - 1) if gen and gen[-1] in eog_ids else None,
                "generated_ids": gen,
                "top1_id": gen,
                "top2_id": [s[0][1] for s in steps],
                "top1_logit": [G.f32(s[1][0]) for s in steps],
                "top2_logit": [G.f32(s[1][1]) for s in steps],
                "margin": margins,
                "min_margin": min(margins),
                "min_margin_step": int(np.argmin(margins)),
                "cross_checks": cross,
            }
            prompts.append(entry)
            print(f"  {name}: {len(ids)} prompt ids, {len(gen)} generated, "
                  f"min margin {entry['min_margin']:.4g} at step {entry['min_margin_step']}, "
                  f"cross {cross}", file=sys.stderr)

        settings = {
            "n_ctx": "per prompt (its n_ctx); n_batch = n_ubatch = n_ctx",
            "n_seq_max": 1,
            "n_threads": N_THREADS,
            "n_threads_batch": N_THREADS,
            "flash_attn": "disabled",
            "type_k": "f16",
            "type_v": "f16",
            "swa_full": "true (llama.cpp's default)",
            "n_generate": N_GENERATE,
            "prompt": f"token ids only, fed as they are (no BOS prepended); drawn by "
                      f"numpy.random.default_rng({PROMPT_SEED}).integers({ID_LOW_MARGIN}, "
                      f"n_vocab - {ID_LOW_MARGIN}, size=n), prompts in file order",
            "sampling": "argmax of raw logits, ties to the lowest id",
            "prompt_eval": "whole prompt in one llama_decode (one batch), then one token per call",
            "stop": "after n_generate tokens, or at the first end-of-generation token "
                    "(recorded as the last generated id; eog_at_step is its 0-based step)",
            "eog_ids": "llama_vocab_is_eog: eos/eot plus the control tokens llama.cpp knows as "
                       "ends by their text (e.g. <|endoftext|>, <|end_of_text|>)",
            "logits": "float32 values written as the shortest decimal that reads back as the "
                      "same float32; margin = top1_logit - top2_logit in float32",
            "cross_checks": "each prompt re-run (a) with flash attention enabled, (b) with one "
                            "thread, (c) with the prompt decoded one token per call instead of "
                            "one batch; same_ids tells whether the generated ids matched the "
                            "fixture's, first_differing_step where they did not",
        }
        if swa is not None:
            settings["sliding_window"] = int(swa)
        if window_check is not None:
            settings["window_check"] = (
                f"cross_checks.sliding_window_{window_check['value']} (prompts "
                f"{', '.join(window_check['prompts'])}): the same run with {window_check['key']} "
                f"overridden to {window_check['value']} (no window within n_ctx); "
                "top1_id_there / top1_logit_there: that run's choice at the first differing "
                "step; max_top1_logit_difference_while_same compares the top-1 logits of the "
                "steps before the ids part (null when they part at step 0)")

        model_info = {
            "architecture": arch,
            "llama_cpp_desc": desc.value.decode(),
            "n_layer": L.llama_model_n_layer(model),
            "n_embd": L.llama_model_n_embd(model),
            "n_vocab": n_vocab,
            "bos_id": L.llama_vocab_bos(vocab),
            "eos_id": L.llama_vocab_eos(vocab),
            "eot_id": L.llama_vocab_eot(vocab),
            "eog_ids": eog_ids,
            "add_bos": bool(L.llama_vocab_get_add_bos(vocab)),
        }
        if "note" in spec:
            model_info["note"] = spec["note"]
        return {
            "description": f"Greedy decoding by llama.cpp (the peer) of a synthetic {family} model "
                           "written by `lpx-pipeline synth`, on token-id prompts, for LPX's "
                           "logit checks. Made by tools/make_family_fixtures.py; see "
                           "docs/peers.md.",
            "synth": {k: spec[k] for k in ("like", "type", "layers", "seed")} | {
                "bytes": path.stat().st_size,
                "sha256": G.sha256(path),
            },
            "model": model_info,
            "peer": {
                "tool": "llama-cpp-python (PyPI sdist, built from source; vendors llama.cpp)",
                "llama_cpp_python_version": L.__version__,
                "llama_cpp_commit": G.LLAMA_CPP_COMMIT,
                "cmake_args": G.CMAKE_ARGS,
                "kernels": "use_extra_bufts=false, GGML_CPU_TILED_MM=0",
                "isa": G.ISA,
                "system_info": L.llama_print_system_info().decode().strip(),
                "cpu": G.cpu_model(),
                "cpu_flags": G.cpu_flags(),
            },
            "settings": settings,
            "prompts": prompts,
        }
    finally:
        L.llama_model_free(model)
        if unwindowed is not None:
            L.llama_model_free(unwindowed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lpx", type=Path, default=REPO / "build" / "bin" / "lpx-pipeline",
                        help="lpx-pipeline binary (writes the synthetic GGUFs)")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "families")
    parser.add_argument("--models", type=Path, default=Path("/tmp/lpx-family-models"),
                        help="where the synthetic GGUFs are written (not the repository)")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic GGUFs")
    parser.add_argument("--only", nargs="+", choices=list(FAMILIES), metavar="FAMILY",
                        help="only these families: " + ", ".join(FAMILIES))
    args = parser.parse_args()
    if L.__version__ != G.PEER_VERSION:
        print(f"warning: llama-cpp-python {L.__version__}, fixtures were made with "
              f"{G.PEER_VERSION}", file=sys.stderr)
    L.llama_backend_init()
    global _LOG_CB  # keep the callback alive as long as llama.cpp may call it
    _LOG_CB = L.llama_log_callback(_log)
    L.llama_log_set(_LOG_CB, ctypes.c_void_p(0))
    args.out.mkdir(parents=True, exist_ok=True)
    args.models.mkdir(parents=True, exist_ok=True)
    refused = []
    for family, spec in FAMILIES.items():
        if args.only and family not in args.only:
            continue
        print(f"{family}: synth --like {spec['like']} --type {spec['type']} "
              f"--layers {spec['layers']} --seed {spec['seed']}", file=sys.stderr)
        path = synth(args.lpx, family, spec, args.models)
        try:
            fixture = make_fixture(family, spec, path)
        finally:
            if not args.keep:
                path.unlink(missing_ok=True)
        if fixture is None:
            refused.append(family)
            continue
        out = args.out / f"{family}.json"
        out.write_text(G.dumps(fixture) + "\n", encoding="utf-8")
        print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)
    L.llama_backend_free()
    if refused:
        print(f"refused by llama.cpp, no fixture: {', '.join(refused)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
