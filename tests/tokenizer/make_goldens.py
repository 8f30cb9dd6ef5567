#!/usr/bin/env python3
"""Writes golden/<vocabulary>.out and golden/<vocabulary>.special.out: reference token ids for the
tokenizer tests, computed independently of the C++ code.

This is a second, deliberately plain implementation of llama.cpp's tokenizer rules: Python's
`regex` module runs the pre-tokenizer patterns in their original Hugging Face form (no PCRE2, no
rewriting), the `gguf` package reads the vocabularies, and BPE / SentencePiece merging is the
textbook loop (merge the best adjacent pair, leftmost first, until none is left) instead of the
C++ priority queues. For gpt-2 and llama-spm the C++ tests also check llama.cpp's own .out files.

Strings: the llama.cpp test strings (../shared/vocab/ggml-vocab-gpt-2.gguf.inp) followed by
golden/extra.inp. Each .out line holds the ids of one string (no BOS/EOS); .out parses special
tokens off (user-defined tokens still match), .special.out on.

Usage: python3 tests/tokenizer/make_goldens.py   (needs: pip install gguf regex)
"""
import os
import sys

import gguf
import regex

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))

# Unicode White_Space, spelled out so the result does not depend on what \s means to `regex`.
WS = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"


def pattern(text):
    return regex.compile(text.replace("{S}", WS))


GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^{S}\p{L}\p{N}]+|[{S}]+(?![^{S}])|[{S}]+"
PRE = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"],
    "gpt-2": [GPT2],
    "mpt": [GPT2],
    "starcoder": [r"\p{N}", GPT2],
    "refact": [r"\p{N}", GPT2],
    "smollm": [r"\p{N}", GPT2],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"],
    "deepseek-coder": [r"[\r\n]", r"[{S}]?\p{L}+", r"[{S}]?\p{P}+", "[一-龥ࠀ-一가-퟿]+", r"\p{N}"],
}

EOT = ["<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
       "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"]
FIM = [
    ["<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
     "<|code_prefix|>", "<|prefix|>"],
    ["<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
     "<|code_suffix|>", "<|suffix|>"],
    ["<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
     "<|code_middle|>", "<|middle|>"],
    ["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"],
    ["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"],
    ["<|file_sep|>"],
]
EOG = ["<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>",
       "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>",
       "<eos>", "<｜end▁of▁sentence｜>"]
FIM_KEYS = ["fim_pre_token_id", "fim_suf_token_id", "fim_mid_token_id", "fim_pad_token_id",
            "fim_rep_token_id", "fim_sep_token_id"]


def field(reader, key):
    f = reader.fields.get("tokenizer.ggml." + key)
    if f is None:
        return None
    if f.types[0] == gguf.GGUFValueType.ARRAY:
        if f.types[1] == gguf.GGUFValueType.STRING:
            return [bytes(f.parts[i]) for i in f.data]
        return [f.parts[i][0].item() for i in f.data]
    if f.types[0] == gguf.GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode()
    return f.parts[f.data[0]][0].item()


class Vocab:
    def __init__(self, path):
        r = gguf.GGUFReader(path)
        self.model = field(r, "model")
        self.pre = field(r, "pre") or "default"
        name = r.fields.get("general.name")
        self.name = bytes(name.parts[name.data[0]]).decode().lower() if name else ""
        self.tokens = field(r, "tokens")
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.scores = field(r, "scores") or [0.0] * len(self.tokens)
        self.types = field(r, "token_type") or [1] * len(self.tokens)
        self.space_prefix = self.model == "llama"
        if field(r, "add_space_prefix") is not None:
            self.space_prefix = bool(field(r, "add_space_prefix"))
        self.unk = field(r, "unknown_token_id")
        if self.unk is None and self.model == "llama":
            self.unk = 0
        self.ranks = {}
        for rank, merge in enumerate(field(r, "merges") or []):
            pos = merge.find(b" ", 1)
            self.ranks.setdefault((merge[:pos], merge[pos + 1:]), rank)
        # control / user-defined / unknown, with llama.cpp's promotions to control
        control = {i for i, t in enumerate(self.types) if t == 3}
        if field(r, "eot_token_id") is None:
            self.promote_first(EOT, control)
        if field(r, "eom_token_id") is None:
            self.promote_first(["<|eom_id|>"], control)
        for key, texts in zip(FIM_KEYS, FIM):
            if field(r, key) is None:
                self.promote_first(texts, control)
        for text in EOG:
            if text.encode() in self.ids:
                control.add(self.ids[text.encode()])
        self.control = control
        self.special = sorted(
            (i for i, t in enumerate(self.types) if (t in (2, 4) or i in control) and self.tokens[i]),
            key=lambda i: (-len(self.tokens[i]), i))
        self.rstrip = set()
        if "phi-3" in self.name or "phi3" in self.name:
            self.rstrip = set(self.special) | {self.ids.get(b"</s>")}
            for text in (b"<unk>", b"<s>", b"<|endoftext|>"):
                self.rstrip.discard(self.ids.get(text))

    def promote_first(self, texts, control):
        for text in texts:
            if text.encode() in self.ids:
                control.add(self.ids[text.encode()])
                return

    # --- special tokens -------------------------------------------------------------------
    def partition(self, text, parse_special):
        frags = [("text", text)] if text else []
        for tid in self.special:
            is_control = tid in self.control or self.types[tid] == 2
            if is_control and not parse_special:
                continue
            needle = self.tokens[tid]
            out = []
            for kind, value in frags:
                if kind != "text":
                    out.append((kind, value))
                    continue
                rest = value
                while rest:
                    at = rest.find(needle)
                    if at < 0:
                        break
                    if at > 0:
                        out.append(("text", rest[:at]))
                    out.append(("token", tid))
                    rest = rest[at + len(needle):]
                    if tid in self.rstrip:
                        rest = rest.lstrip(b" \t\n\v\f\r")
                if rest:
                    out.append(("text", rest))
            frags = out
        return frags

    def encode(self, text, parse_special):
        ids = []
        after_special = True
        for kind, value in self.partition(text.encode(), parse_special):
            if kind == "token":
                ids.append(value)
                after_special = True
            elif self.model == "llama":
                if self.space_prefix and after_special:
                    value = b" " + value
                ids += self.spm(value.replace(b" ", "▁".encode()))
                after_special = False
            else:
                ids += self.bpe(value)
        return ids

    # --- SentencePiece-style ----------------------------------------------------------------
    def spm(self, data):
        lengths = [1] * 12 + [2, 2, 3, 4]
        symbols, at = [], 0
        while at < len(data):
            n = min(lengths[data[at] >> 4], len(data) - at)
            symbols.append(data[at:at + n])
            at += n
        while True:
            best = None
            for i in range(len(symbols) - 1):
                tid = self.ids.get(symbols[i] + symbols[i + 1])
                if tid is not None and (best is None or self.scores[tid] > best[0]):
                    best = (self.scores[tid], i)
            if best is None:
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        out = []
        for s in symbols:
            if s in self.ids:
                out.append(self.ids[s])
                continue
            for b in s:
                tid = self.ids.get(b"<0x%02X>" % b, self.ids.get(bytes([b]), self.unk))
                out.append(tid)
        return out

    # --- byte-level BPE ---------------------------------------------------------------------
    def bpe(self, data):
        text = data.decode("utf-8", errors="replace")
        pieces = [text] if text else []
        for p in PRE[self.pre]:
            rx = pattern(p)
            nxt = []
            for piece in pieces:
                done = 0
                for m in rx.finditer(piece):
                    if m.start() > done:
                        nxt.append(piece[done:m.start()])
                    nxt.append(m.group())
                    done = m.end()
                if done < len(piece):
                    nxt.append(piece[done:])
            pieces = nxt
        out = []
        for piece in pieces:
            symbols = [BYTE_CHARS[b].encode() for b in piece.encode()]
            while True:
                best = None
                for i in range(len(symbols) - 1):
                    rank = self.ranks.get((symbols[i], symbols[i + 1]))
                    if rank is not None and (best is None or rank < best[0]):
                        best = (rank, i)
                if best is None:
                    break
                i = best[1]
                symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
            out += [self.ids[s] for s in symbols]
        return out


def byte_chars():
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


BYTE_CHARS = byte_chars()


def read_inputs(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read().split("\n__ggml_vocab_test__\n")[:-1]


def main():
    strings = read_inputs(os.path.join(SHARED, "vocab", "ggml-vocab-gpt-2.gguf.inp"))
    strings += read_inputs(os.path.join(HERE, "golden", "extra.inp"))
    files = {name[len("ggml-vocab-"):-len(".gguf")]: os.path.join(SHARED, "vocab", name)
             for name in os.listdir(os.path.join(SHARED, "vocab")) if name.endswith(".gguf")}
    files["smollm2"] = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    for name, path in sorted(files.items()):
        vocab = Vocab(path)
        for suffix, parse_special in ((".out", False), (".special.out", True)):
            with open(os.path.join(HERE, "golden", name + suffix), "w") as f:
                for s in strings:
                    f.write(" ".join(str(i) for i in vocab.encode(s, parse_special)) + "\n")
        print(name, vocab.model, vocab.pre, file=sys.stderr)


if __name__ == "__main__":
    main()
