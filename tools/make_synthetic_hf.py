#!/usr/bin/env python3
"""Writes a synthetic Hugging Face checkpoint of a real model's shape (random weights) with a real
tokenizer, for measuring how LPX loads and runs large safetensors models (docs/perf/safetensors.md).

The shape is Llama 3.2 1B's (16 layers, hidden 2048, feed-forward 8192, 32 heads, 8 KV heads,
tied embeddings) with SmolLM2's vocabulary: 1.07 B parameters, 2.1 GB in bf16, saved by
transformers' save_pretrained in 1 GB shards. The tokenizer is SmolLM2's own (its tokens and
merges read from the default model's GGUF, rebuilt with `tokenizers`). Beside the weights,
reference.json holds transformers' greedy continuation of a prompt (float32 compute), which
`lpx-pipeline generate --ids` must repeat.

Usage (outside CI; torch, transformers, tokenizers, gguf from PyPI):
    python3 tools/make_synthetic_hf.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from gguf import GGUFReader
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parents[1]
SMOLLM2 = ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "The capital of France is"
STEPS = 16


def field(reader: GGUFReader, key: str) -> list[str]:
    f = reader.fields[key]
    return [bytes(f.parts[i]).decode("utf-8") for i in f.data]


def smollm2_tokenizer() -> PreTrainedTokenizerFast:
    reader = GGUFReader(SMOLLM2)
    tokens = field(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([t for t in tokens[:17]])  # <|endoftext|>, <|im_start|>, <|im_end|>, ...
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>")


def main() -> None:
    out = Path(sys.argv[1])
    torch.manual_seed(0)
    tokenizer = smollm2_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=2048, intermediate_size=8192,
                         num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                         max_position_embeddings=8192, rms_norm_eps=1e-5, tie_word_embeddings=True,
                         rope_theta=500000.0, bos_token_id=1, eos_token_id=2)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # random weights whose activations neither vanish nor explode
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, 1.0 / p.shape[-1] ** 0.5)
            else:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
    model = model.to(torch.bfloat16)
    tokenizer.save_pretrained(out)
    model.save_pretrained(out, max_shard_size="1GB")
    model = model.float().eval()
    model.config._attn_implementation = "eager"
    ids = tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        generated = model.generate(torch.tensor([ids]), max_new_tokens=STEPS, do_sample=False)[0][len(ids):]
    (out / "reference.json").write_text(json.dumps({"prompt": PROMPT, "prompt_ids": ids,
                                                    "greedy_ids": generated.tolist()}) + "\n")
    print(out, sum(p.numel() for p in model.parameters()) / 1e9, "B parameters")


if __name__ == "__main__":
    main()
