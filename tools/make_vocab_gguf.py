#!/usr/bin/env python3
"""Builds a vocabulary-only GGUF (no tensors) of a real Qwen2 or Llama 3 tokenizer from its
tiktoken ranks file, for the tokenizer conformance tests (tests/tokenizer/real_vocab_test.cpp).

    python3 tools/make_vocab_gguf.py qwen2 RANKS OUT.gguf   # RANKS: qwen.tiktoken (dashscope)
    python3 tools/make_vocab_gguf.py llama3 RANKS OUT.gguf  # RANKS: llama3/tokenizer.model (llama-models)

tools/setup.sh runs it on the files of the PyPI packages dashscope and llama-models. Standard
library only, and deterministic: the same ranks file gives the same bytes (setup.sh checks them
by sha256).

A tiktoken ranks file holds one "base64(token bytes) rank" line per token; the rank is the token
id and the merge priority. The GGUF is written the way a GGUF of the released model has it:

* tokens: each token's bytes in GPT-2's byte-to-printable-character alphabet, then the model's
  special tokens at their ids, then "[PADn]" up to the model's embedding size (Qwen3: 151936).
* types: normal; control for the special tokens (Llama 3: all of them; Qwen: those marked
  special and those written <|...|>); user-defined for Qwen's <tool_call>, <think> & co., which
  the Hugging Face files mark "not special"; unused for the padding.
* merges ("left right", by rank), derived from the ranks:
  - qwen2: one merge per multi-byte token: the two pieces that BPE, allowed only ranks below the
    token's own, leaves of the token's bytes. This is how Qwen's merges.txt lines up with
    qwen.tiktoken (151,387 merges).
  - llama3: every split of a token into two tokens, ordered by the token's rank, then the left
    piece's, then the right piece's: what the Hugging Face conversion of Meta's tokenizer.model
    wrote into Llama 3's tokenizer.json (280,147 merges).
* tokenizer.ggml.pre: "qwen2" / "llama-bpe"; BOS/EOS/padding ids and add_bos_token as the
  released Qwen3-0.6B / Llama-3.2-1B-Instruct files have them.
* a few architecture keys (llama.cpp reads them even for a vocabulary-only load), with the
  shapes of Qwen3-0.6B and Llama-3.2-1B.
"""
import argparse
import base64
import hashlib
import struct
import sys

# --- special tokens ------------------------------------------------------------------------------

CONTROL, USER_DEFINED, NORMAL, UNUSED = 3, 4, 1, 5

# Qwen2.5 / Qwen3 added tokens, from id 151643 on (their tokenizer_config.json). Every <|...|>
# token is control; the others are user-defined ("special": false there).
QWEN_SPECIAL = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
]
QWEN_VOCAB_SIZE = 151936  # Qwen3-0.6B's (and Qwen2.5-0.5B's) embedding rows

# Llama 3.1+ special tokens, from id 128000 on (llama_models/llama3/tokenizer.py in the same
# llama-models package), then <|reserved_special_token_N|> up to 256 in all.
LLAMA3_SPECIAL = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
    "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
    "<|image|>",
]
LLAMA3_SPECIAL += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(LLAMA3_SPECIAL))]


# --- the byte-level alphabet ---------------------------------------------------------------------

def byte_alphabet():
    """GPT-2's map from bytes to printable characters: printable Latin-1 bytes stand for
    themselves, the other 68 take U+0100 onwards in byte order."""
    printable = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    out, extra = [], 0
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(0x100 + extra))
            extra += 1
    return out


ALPHABET = byte_alphabet()


def printable(token: bytes) -> str:
    return "".join(ALPHABET[b] for b in token)


# --- merges --------------------------------------------------------------------------------------

def read_ranks(path):
    ranks = {}
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            text, rank = line.split()
            token, rank = base64.b64decode(text, validate=True), int(rank)
            if token in ranks or rank != len(ranks):
                sys.exit(f"{path}:{number}: expected rank {len(ranks)} of a new token")
            ranks[token] = rank
    return ranks


def split_below(ranks, token, limit):
    """BPE on the bytes of `token` using only tokens ranked below `limit`: repeatedly join the
    adjacent pair whose join has the lowest rank (leftmost of equals)."""
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = limit, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < best:
                best, at = rank, i
        if at < 0:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def merges_one_per_token(ranks):
    merges = []
    for token, rank in ranks.items():  # rank order
        if len(token) < 2:
            continue
        parts = split_below(ranks, token, rank)
        if len(parts) != 2:
            sys.exit(f"token {rank} {token!r} is not the join of two lower-ranked tokens")
        merges.append(f"{printable(parts[0])} {printable(parts[1])}")
    return merges


def merges_every_split(ranks):
    merges = []
    for token, rank in ranks.items():  # rank order
        splits = [(ranks[token[:i]], ranks[token[i:]], i) for i in range(1, len(token))
                  if token[:i] in ranks and token[i:] in ranks]
        for _, _, i in sorted(splits):
            merges.append(f"{printable(token[:i])} {printable(token[i:])}")
    return merges


# --- the vocabularies ----------------------------------------------------------------------------

def qwen2_vocabulary(ranks):
    tokens = [printable(t) for t in ranks]
    types = [NORMAL] * len(tokens)
    for text in QWEN_SPECIAL:
        tokens.append(text)
        types.append(CONTROL if text.startswith("<|") and text.endswith("|>") else USER_DEFINED)
    while len(tokens) < QWEN_VOCAB_SIZE:
        tokens.append(f"[PAD{len(tokens)}]")
        types.append(UNUSED)
    first = len(ranks)
    return {
        "general.architecture": "qwen3",
        "general.name": "Qwen3 vocabulary (qwen.tiktoken)",
        "qwen3.context_length": ("u32", 40960),
        "qwen3.embedding_length": ("u32", 1024),
        "qwen3.block_count": ("u32", 28),
        "qwen3.feed_forward_length": ("u32", 3072),
        "qwen3.attention.head_count": ("u32", 16),
        "qwen3.attention.head_count_kv": ("u32", 8),
        "qwen3.attention.key_length": ("u32", 128),
        "qwen3.attention.value_length": ("u32", 128),
        "qwen3.attention.layer_norm_rms_epsilon": ("f32", 1e-6),
        "qwen3.rope.freq_base": ("f32", 1000000.0),
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "qwen2",
        "tokenizer.ggml.tokens": ("strings", tokens),
        "tokenizer.ggml.token_type": ("i32s", types),
        "tokenizer.ggml.merges": ("strings", merges_one_per_token(ranks)),
        "tokenizer.ggml.eos_token_id": ("u32", first + QWEN_SPECIAL.index("<|im_end|>")),
        "tokenizer.ggml.padding_token_id": ("u32", first + QWEN_SPECIAL.index("<|endoftext|>")),
        "tokenizer.ggml.bos_token_id": ("u32", first + QWEN_SPECIAL.index("<|endoftext|>")),
        "tokenizer.ggml.add_bos_token": ("bool", False),
    }


def llama3_vocabulary(ranks):
    tokens = [printable(t) for t in ranks] + LLAMA3_SPECIAL
    types = [NORMAL] * len(ranks) + [CONTROL] * len(LLAMA3_SPECIAL)
    first = len(ranks)
    return {
        "general.architecture": "llama",
        "general.name": "Llama 3 vocabulary (llama3/tokenizer.model)",
        "llama.context_length": ("u32", 131072),
        "llama.embedding_length": ("u32", 2048),
        "llama.block_count": ("u32", 16),
        "llama.feed_forward_length": ("u32", 8192),
        "llama.attention.head_count": ("u32", 32),
        "llama.attention.head_count_kv": ("u32", 8),
        "llama.rope.dimension_count": ("u32", 64),
        "llama.attention.layer_norm_rms_epsilon": ("f32", 1e-5),
        "llama.rope.freq_base": ("f32", 500000.0),
        "llama.vocab_size": ("u32", len(tokens)),
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "llama-bpe",
        "tokenizer.ggml.tokens": ("strings", tokens),
        "tokenizer.ggml.token_type": ("i32s", types),
        "tokenizer.ggml.merges": ("strings", merges_every_split(ranks)),
        "tokenizer.ggml.bos_token_id": ("u32", first + LLAMA3_SPECIAL.index("<|begin_of_text|>")),
        "tokenizer.ggml.eos_token_id": ("u32", first + LLAMA3_SPECIAL.index("<|eot_id|>")),
        "tokenizer.ggml.padding_token_id": (
            "u32", first + LLAMA3_SPECIAL.index("<|finetune_right_pad_id|>")),
        "tokenizer.ggml.add_bos_token": ("bool", True),
    }


# --- GGUF (version 3, metadata only) -------------------------------------------------------------

def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_value(value):
    kind, data = ("str", value) if isinstance(value, str) else value
    if kind == "str":
        return struct.pack("<I", 8) + gguf_string(data)
    if kind == "u32":
        return struct.pack("<II", 4, data)
    if kind == "f32":
        return struct.pack("<If", 6, data)
    if kind == "bool":
        return struct.pack("<IB", 7, 1 if data else 0)
    if kind == "strings":
        return struct.pack("<IIQ", 9, 8, len(data)) + b"".join(gguf_string(s) for s in data)
    if kind == "i32s":
        return struct.pack("<IIQ", 9, 5, len(data)) + struct.pack(f"<{len(data)}i", *data)
    raise ValueError(kind)


def write_gguf(path, metadata):
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, len(metadata)))
    for key, value in metadata.items():
        out += gguf_string(key) + gguf_value(value)
    out += b"\0" * (-len(out) % 32)  # the (empty) data section starts aligned
    with open(path, "wb") as f:
        f.write(out)
    return hashlib.sha256(out).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["qwen2", "llama3"])
    parser.add_argument("ranks", help="tiktoken ranks file")
    parser.add_argument("output", help="GGUF file to write")
    args = parser.parse_args()
    ranks = read_ranks(args.ranks)
    metadata = (qwen2_vocabulary if args.kind == "qwen2" else llama3_vocabulary)(ranks)
    digest = write_gguf(args.output, metadata)
    print(f"{args.output}: {len(metadata['tokenizer.ggml.tokens'][1])} tokens, "
          f"{len(metadata['tokenizer.ggml.merges'][1])} merges, sha256 {digest}", file=sys.stderr)


if __name__ == "__main__":
    main()
