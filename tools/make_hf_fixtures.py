#!/usr/bin/env python3
"""Writes tests/fixtures/hf/<family>/: tiny random-weight Hugging Face checkpoints and what the
models' authors' code (transformers, tokenizers) computes on them.

The safetensors plugin must run a Hugging Face directory exactly as transformers does. For each
family LPX reads, this builds a small model of that family (random weights, fixed seed), a small
BPE tokenizer of the kind the family's real models ship (trained here with `tokenizers` on the
shared tokenizer test strings), and saves both with save_pretrained. Beside them, expected.json:
- "tokens": the ids `tokenizers` gives each string of ../shared/vocab/ggml-vocab-gpt-2.gguf.inp
  (special tokens added as the tokenizer adds them);
- "logits": transformers' float32 logits at every position of a few prompts (eager attention).

Usage (outside CI; needs torch, transformers, tokenizers, safetensors from PyPI):
    python3 tools/make_hf_fixtures.py [FAMILY...]
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (Gemma2Config, Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3TextConfig,
                          GraniteConfig, GraniteForCausalLM, LlamaConfig, LlamaForCausalLM,
                          MistralConfig, MistralForCausalLM, Phi3Config, Phi3ForCausalLM,
                          PreTrainedTokenizerFast, Qwen2Config,
                          Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM, SmolLM3Config,
                          SmolLM3ForCausalLM)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests/fixtures/hf"
STRINGS = (ROOT.parent / "shared/vocab/ggml-vocab-gpt-2.gguf.inp").read_text(encoding="utf-8").split(
    "\n__ggml_vocab_test__\n")
CORPUS = STRINGS + [
    "The quick brown fox jumps over the lazy dog. 1234567890 times, again and again!",
    "Small language models decode fast on every machine; tokens per second matter.",
    "<|im_start|>user\nHello, how are you?<|im_end|>\n<|im_start|>assistant\nFine, thanks.",
] * 4
PROMPTS = ["Hello, world! The quick brown fox", "1234 small models decode fast; tokens per second"]
VOCAB = 512
CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_level_tokenizer(pre: pre_tokenizers.PreTokenizer, bos: str | None) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS + ([bos] if bos else []),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    if bos:
        tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                           special_tokens=[(bos, tok.token_to_id(bos))])
    return tok


def sentencepiece_tokenizer() -> Tokenizer:
    # As Gemma's tokenizer.json: spaces become "▁", byte fallback, no pre-tokenizer.
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    bytes_ = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<pad>", "<eos>", "<bos>", "<unk>"] +
                                  SPECIALS[1:] + bytes_, show_progress=False)
    tok.train_from_iterator([s.replace(" ", "▁") for s in CORPUS], trainer)
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", pair="<bos> $A <bos> $B",
                                                       special_tokens=[("<bos>", tok.token_to_id("<bos>"))])
    return tok


def randomize(model: torch.nn.Module, norm_center: float) -> None:
    gen = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if p.dim() == 1 and "norm" in name:
                p.copy_(norm_center + 0.2 * noise)
            else:
                p.copy_(noise * (0.5 / p.shape[-1] ** 0.5 if p.dim() == 2 else 0.1))


def common(tok: Tokenizer) -> dict:
    return dict(vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-5,
                tie_word_embeddings=False)


def family_llama():
    tok = byte_level_tokenizer(pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                        pre_tokenizers.ByteLevel(add_prefix_space=False)]), None)
    config = LlamaConfig(**common(tok), bos_token_id=tok.token_to_id("<|im_start|>"),
                         eos_token_id=tok.token_to_id("<|im_end|>"), rope_theta=10000.0)
    return tok, LlamaForCausalLM(config), torch.bfloat16, dict(bos_token="<|im_start|>", eos_token="<|im_end|>"), 1.0


def family_llama3_sharded():
    tok = byte_level_tokenizer(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), "<|begin_of_text|>")
    c = common(tok)
    c["tie_word_embeddings"] = True
    config = LlamaConfig(**c, head_dim=16, bos_token_id=tok.token_to_id("<|begin_of_text|>"),
                         eos_token_id=tok.token_to_id("<|endoftext|>"),
                         rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                          "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                          "original_max_position_embeddings": 64})
    return tok, LlamaForCausalLM(config), torch.float16, dict(bos_token="<|begin_of_text|>",
                                                              eos_token="<|endoftext|>"), 1.0


def family_qwen2():
    tok = byte_level_tokenizer(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), None)
    tok.normalizer = normalizers.NFC()
    config = Qwen2Config(**common(tok), eos_token_id=tok.token_to_id("<|im_end|>"), rope_theta=1000000.0)
    return tok, Qwen2ForCausalLM(config), torch.bfloat16, dict(eos_token="<|im_end|>", pad_token="<|endoftext|>"), 1.0


def family_qwen3():
    tok = byte_level_tokenizer(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), None)
    config = Qwen3Config(**common(tok), head_dim=32, eos_token_id=tok.token_to_id("<|im_end|>"),
                         rope_theta=1000000.0)
    return tok, Qwen3ForCausalLM(config), torch.float32, dict(eos_token="<|im_end|>"), 1.0


def family_gemma3():
    tok = sentencepiece_tokenizer()
    c = common(tok)
    c["tie_word_embeddings"] = True
    c["num_hidden_layers"] = 4
    config = Gemma3TextConfig(**c, head_dim=16, sliding_window=4, query_pre_attn_scalar=16,
                              layer_types=["sliding_attention", "full_attention"] * 2,
                              rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                                               "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                              bos_token_id=tok.token_to_id("<bos>"), eos_token_id=tok.token_to_id("<eos>"),
                              pad_token_id=tok.token_to_id("<pad>"), hidden_activation="gelu_pytorch_tanh")
    return tok, Gemma3ForCausalLM(config), torch.bfloat16, dict(bos_token="<bos>", eos_token="<eos>",
                                                                 unk_token="<unk>", pad_token="<pad>"), 0.0


def family_gemma2():
    tok = sentencepiece_tokenizer()
    c = common(tok)
    c["tie_word_embeddings"] = True
    c["num_hidden_layers"] = 4
    config = Gemma2Config(**c, head_dim=16, sliding_window=4, query_pre_attn_scalar=16,
                          attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                          bos_token_id=tok.token_to_id("<bos>"), eos_token_id=tok.token_to_id("<eos>"),
                          pad_token_id=tok.token_to_id("<pad>"), hidden_activation="gelu_pytorch_tanh")
    return tok, Gemma2ForCausalLM(config), torch.bfloat16, dict(bos_token="<bos>", eos_token="<eos>",
                                                                 unk_token="<unk>", pad_token="<pad>"), 0.0


def family_mistral():
    tok = sentencepiece_tokenizer()
    config = MistralConfig(**common(tok), head_dim=16, sliding_window=None, pad_token_id=None, bos_token_id=tok.token_to_id("<bos>"),
                           eos_token_id=tok.token_to_id("<eos>"))
    return tok, MistralForCausalLM(config), torch.bfloat16, dict(bos_token="<bos>", eos_token="<eos>",
                                                                  unk_token="<unk>"), 1.0


def family_granite():
    tok = byte_level_tokenizer(pre_tokenizers.ByteLevel(add_prefix_space=False), None)
    config = GraniteConfig(**common(tok), embedding_multiplier=12.0, logits_scaling=8.0, residual_multiplier=0.22,
                           attention_multiplier=0.0078125, eos_token_id=tok.token_to_id("<|endoftext|>"),
                           pad_token_id=None, bos_token_id=None)
    return tok, GraniteForCausalLM(config), torch.bfloat16, dict(eos_token="<|endoftext|>"), 1.0


def family_smollm3():
    tok = byte_level_tokenizer(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), None)
    c = common(tok)
    c["num_hidden_layers"] = 4
    config = SmolLM3Config(**c, head_dim=16, eos_token_id=tok.token_to_id("<|im_end|>"), pad_token_id=None,
                           bos_token_id=None)
    return tok, SmolLM3ForCausalLM(config), torch.float16, dict(eos_token="<|im_end|>"), 1.0


def family_phi3():
    # Phi-4-mini's shape of rope: a partial rotary (half of each head) with LongRoPE factors. The
    # context (4096) is four times the original (1024): transformers applies the attention factor
    # sqrt(1 + ln 4 / ln 1024) always, and the short factors to prompts within the original.
    tok = sentencepiece_tokenizer()
    c = common(tok)
    c["max_position_embeddings"] = 4096
    gen = torch.Generator().manual_seed(3)
    short = [round(1.0 + x, 4) for x in torch.rand(4, generator=gen).tolist()]
    long = [round(1.0 + 8.0 * x, 4) for x in torch.rand(4, generator=gen).tolist()]
    config = Phi3Config(**c, bos_token_id=tok.token_to_id("<bos>"), eos_token_id=tok.token_to_id("<eos>"),
                        pad_token_id=None, sliding_window=None, original_max_position_embeddings=1024,
                        rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                                         "short_factor": short, "long_factor": long,
                                         "original_max_position_embeddings": 1024})
    return tok, Phi3ForCausalLM(config), torch.bfloat16, dict(bos_token="<bos>", eos_token="<eos>",
                                                               unk_token="<unk>"), 1.0


FAMILIES = {"llama": family_llama, "llama3-sharded": family_llama3_sharded, "qwen2": family_qwen2,
            "qwen3": family_qwen3, "gemma3": family_gemma3, "gemma2": family_gemma2, "mistral": family_mistral,
            "granite": family_granite, "smollm3": family_smollm3, "phi3": family_phi3}


def main() -> None:
    only = set(sys.argv[1:])  # family names: write only those (the others stay as committed)
    torch.manual_seed(0)
    for name, build in FAMILIES.items():
        if only and name not in only:
            continue
        tok, model, dtype, specials, norm_center = build()
        randomize(model, norm_center)
        out = OUT / name
        shutil.rmtree(out, ignore_errors=True)
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, **specials)
        fast.chat_template = CHAT
        fast.save_pretrained(out)
        model = model.to(dtype)
        model.save_pretrained(out, max_shard_size="60KB" if "sharded" in name else "50GB")
        # The reference runs in float32 on the very weights saved (bf16/f16 values are exact in f32).
        model = model.float().eval()
        model.config._attn_implementation = "eager"
        expected = {"tokens": [fast(s)["input_ids"] for s in STRINGS], "strings": STRINGS, "logits": []}
        with torch.no_grad():
            for prompt in PROMPTS:
                ids = fast(prompt)["input_ids"]
                logits = model(torch.tensor([ids])).logits[0]
                expected["logits"].append({"prompt": prompt, "ids": ids,
                                           "logits": [[float(f"{x:.6g}") for x in row] for row in logits.tolist()]})
        (out / "expected.json").write_text(json.dumps(expected, ensure_ascii=False) + "\n", encoding="utf-8")
        size = sum(f.stat().st_size for f in out.iterdir())
        print(f"{name}: {size / 1024:.0f} KiB in {out}")


if __name__ == "__main__":
    main()
