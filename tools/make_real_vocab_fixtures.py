#!/usr/bin/env python3
"""Writes the peer fixtures of the real-vocabulary tokenizer tests
(tests/tokenizer/real_vocab_test.cpp): llama.cpp's token ids for the real Qwen2 ("qwen2") and
Llama 3 ("llama-bpe") vocabularies, which tools/setup.sh builds with tools/make_vocab_gguf.py
into models/vocab-qwen2.gguf and models/vocab-llama-bpe.gguf.

The ids come from llama.cpp (through llama-cpp-python 0.3.36, the peer of docs/peers.md), never
from LPX. Only facts are stored: ids, one line per string.

    /work/peer/venv/bin/python tools/make_real_vocab_fixtures.py

Strings, in this order (the C++ test reads the same files): llama.cpp's vocabulary test strings
(../shared/vocab/ggml-vocab-gpt-2.gguf.inp), tests/tokenizer/golden/extra.inp, and
tests/tokenizer/golden/peer/hard-cases.inp, which this script writes from HARD_CASES below.

Per vocabulary NAME it writes tests/tokenizer/golden/peer/:
  NAME.out          llama_tokenize(add_special=false, parse_special=false)
  NAME.special.out  llama_tokenize(add_special=false, parse_special=true)
  NAME.bos.out      llama_tokenize(add_special=true,  parse_special=false)  (BOS as the file says)
and SOURCE.txt: the vocabulary files' sha256 and the peer's version. It also checks that the peer's
detokenizer gives every string back from its ids (plain ids; special ids with special rendering),
but for the spaces that llama.cpp's clean_spaces removes for llama-bpe.
"""
import ctypes
import hashlib
import os
import sys

import llama_cpp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))
GOLDEN = os.path.join(ROOT, "tests", "tokenizer", "golden")
OUT = os.path.join(GOLDEN, "peer")
SEPARATOR = "\n__ggml_vocab_test__\n"

VOCABULARIES = {
    "qwen2": os.path.join(ROOT, "models", "vocab-qwen2.gguf"),
    "llama-bpe": os.path.join(ROOT, "models", "vocab-llama-bpe.gguf"),
}

# What the Qwen2 and Llama 3 pre-tokenizers decide differently from GPT-2's: digit runs (Qwen:
# one digit each; Llama 3: groups of three from the left), contractions in any case, a letter
# run taking one leading non-letter, punctuation runs taking trailing newlines, whitespace runs
# split before the last space or at newlines; and the special tokens of both vocabularies.
HARD_CASES = [
    # digits
    "1", "12", "123", "1234", "12345", "123456", "1234567", "1234567890123",
    " 7 77 777 7777 77777", "x1y22z333w4444v55555", "3.14159 2024-01-15 1,000,000 -42 +7e-10",
    "0x1F 0b1010 1e10 1_000 v1.2.3", "٣٤٥ ١٢٣٤ ۱۲۳ १२३४ ১২৩", "①②③ ½⅓ Ⅻ ²³ 𝟙𝟚𝟛𝟜",
    "abc123def 123abc abc123", "12 345 6789\n2024\n\n10",
    # contractions
    "I'M YOU'RE WE'VE HE'LL SHE'D IT'S DON'T", "i'm you're we've he'll she'd it's don't",
    "I'm You'Re wE'Ve iT'S", "'S 'T 'RE 'VE 'M 'LL 'D 's 't", "O'Neil's rock'n'roll y'all '90s",
    "it’s don’t ‘quoted’", "''s ''' 's's", "x'sy 'sx ' s", "CAN'T WON'T 'TWAS",
    # letters, accents, scripts
    "Ça va? Él está aquí. Ñandú, Øresund, Œuvre, Ÿ, ß, ẞ.", "e\u0301 a\u0308 n\u0303 (combining)",
    "İstanbul ıi ǅemal ʰaspirated ﬁnish ﬀ", "Ελληνικά Русский Українська ქართული Հայերեն",
    "עברית العربية فارسی اردو", "हिन्दी বাংলা தமிழ் ไทย ລາວ ខ្មែរ",
    "你好，世界！这是一个测试。", "日本語のテキストとカタカナ、ひらがな。", "한국어 텍스트입니다.",
    "abc中文def ABC日本GHI", "中文123中文 ４５６ 漢字２０２４年",
    # letters and digits new in Unicode 15.0/15.1 (llama.cpp's tables are 15.1): CJK Extension I
    # and H, Kawi letters, Nag Mundari and Kaktovik digits, a new symbol
    "A\U0002EDB6(n \U0002EBF0\U0002EBF1 (\U00031350\U00031351) x\U0002B739",
    "(\U00011F04\U00011F05 x \U00011F50\U00011F51\U00011F52 1\U0001E4F0\U0001E4F1\U0001E4F2\U0001E4F3",
    "\U0001D2C0\U0001D2C1\U0001D2C2\U0001D2C3 '\U0001E4D0s \U0001FA75 \u2FFC\U0001E030",
    # emoji
    "😀😃😄😁", "👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇯🇵🇺🇸 👍🏿", "text😀text 😀 😀😀 a😀", "✅❌⚠️ ★☆ ♠♥",
    # whitespace and newlines
    " ", "  ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", " \n \n ", "\t\t\n\n\n", "a\r\nb\r\n\r\nc",
    "line1\n\n  line2  \n\t\tline3", "end   ", "   start", "a  \n  b", "x \n\n y", "a.\n\nb",
    "!!\n", ".\n\n\n", "?!\r\n\r\n", "word\n\n\n\nword", "\u00a0\u2003x\u3000y\u2028z",
    "tab\tand\vvertical\fform", "  \t  \n  \t  ",
    # code
    "def f(x):\n    return x**2  # square\n", "if (a->b[i] <= c && d != e) { x += 1; }",
    "#include <vector>\nstd::vector<int> v{1, 2, 3};\n", '{"key": [1, 2.5, "v"], "n": null}',
    "SELECT * FROM t WHERE id=42;", "https://example.com/a/b?c=1&d=2#frag",
    "foo_bar.baz() __init__ camelCaseWord snake_case_word", "<div class=\"x\">&nbsp;</div>",
    "    indented\n\tTabbed\n        deeper", "x=1;y-=2;z*=3", "/* c */ // d\n-- e\n# f",
    "$HOME ~/.bashrc | grep -v '^#' > /dev/null 2>&1",
    # punctuation and symbols
    "...!!!???", "-->", "====", "——", "«»„“”", "¿¡", "@@@###$$$%%%", "a...b", " ... ", "(((x)))",
    # long runs
    "a" * 100, "1" * 40, " " * 50 + "x", "\n" * 20, "ab" * 60, "🙂" * 20,
    # special tokens of both vocabularies (control ones are text unless parsed)
    "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<think>\nreasoning\n</think>\n\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
    "<tool_response>ok</tool_response><|endoftext|>",
    "<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|><|fim_pad|><|repo_name|>r<|file_sep|>",
    "<|vision_start|><|image_pad|><|vision_end|><|object_ref_start|>x<|object_ref_end|>",
    "<|im_start|<|im_end|>|> <|im_end <think <think>> [PAD151700] [PAD151643]",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "<|start_header_id|>assistant<|end_header_id|>\n\n<|python_tag|>x<|eom_id|><|end_of_text|>",
    "<|reserved_special_token_5|> <|reserved_special_token_247|> <|step_id|><|image|>",
    "<|finetune_right_pad_id|><|reserved_special_token_248|>",
    " <|eot_id|> <|eot_id|>\n<|im_end|> ",
]


def read_inputs(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read().split(SEPARATOR)[:-1]


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def detokenize(model, ids, render_special):
    """llama.cpp's own detokenizer (llama_detokenize). Llama.detokenize of llama-cpp-python is not
    used: it reads each piece into a 32-byte buffer and loses longer ones (64 spaces, say)."""
    vocab = model._model.vocab
    tokens = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    size = 64 + 256 * len(ids)
    text = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(vocab, tokens, len(ids), text, size, False, render_special)
    if n < 0:
        sys.exit(f"llama_detokenize needs {-n} bytes")
    return text.raw[:n]


def main():
    os.makedirs(OUT, exist_ok=True)
    hard = os.path.join(OUT, "hard-cases.inp")
    with open(hard, "w", encoding="utf-8", newline="") as f:
        f.write("".join(s + SEPARATOR for s in HARD_CASES))
    assert read_inputs(hard) == HARD_CASES
    strings = read_inputs(os.path.join(SHARED, "vocab", "ggml-vocab-gpt-2.gguf.inp"))
    strings += read_inputs(os.path.join(GOLDEN, "extra.inp"))
    strings += HARD_CASES

    source = [
        "Written by tools/make_real_vocab_fixtures.py with llama-cpp-python "
        f"{llama_cpp.__version__} (llama.cpp 0c1e57098, docs/peers.md).",
        f"{len(strings)} strings: ../shared/vocab/ggml-vocab-gpt-2.gguf.inp, ../extra.inp, hard-cases.inp.",
    ]
    for name, path in VOCABULARIES.items():
        model = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
        rows = {"out": [], "special.out": [], "bos.out": []}
        cleaned = 0
        for s in strings:
            data = s.encode("utf-8")
            plain = model.tokenize(data, add_bos=False, special=False)
            special = model.tokenize(data, add_bos=False, special=True)
            rows["out"].append(plain)
            rows["special.out"].append(special)
            rows["bos.out"].append(model.tokenize(data, add_bos=True, special=False))
            for ids, render in ((plain, False), (special, True)):
                back = detokenize(model, ids, render)
                if back == data:
                    continue
                # llama-bpe turns llama.cpp's clean_spaces on (a space before ?!., and some
                # apostrophes goes), which LPX's decode leaves out on purpose (docs/tokenizers.md).
                if name == "llama-bpe" and back.replace(b" ", b"") == data.replace(b" ", b""):
                    cleaned += 1
                    continue
                sys.exit(f"{name}: llama.cpp does not give {s!r} back: {back!r}")
        for suffix, lines in rows.items():
            with open(os.path.join(OUT, f"{name}.{suffix}"), "w") as f:
                f.write("".join(" ".join(map(str, ids)) + "\n" for ids in lines))
        source.append(f"{name}: models/{os.path.basename(path)} sha256 {sha256(path)}; llama.cpp's "
                      f"detokenizer gives every string back, {cleaned} of the decodings without "
                      "some spaces (clean_spaces)")
        print(name, len(strings), "strings", file=sys.stderr)
    with open(os.path.join(OUT, "SOURCE.txt"), "w") as f:
        f.write("\n".join(source) + "\n")


if __name__ == "__main__":
    main()
