#!/usr/bin/env python3
"""Writes tests/fixtures/perplexity/*.json: what `lpx-pipeline perplexity` must print for the
shared tiny llama on a text, computed without LPX.

- The evaluated run is llama.cpp's (the peer, through llama-cpp-python's logits_all): its CPU
  arithmetic is what LPX's `activations = "q8"` reproduces bit for bit (docs/kernels-cpu.md).
- The reference run is a float64 NumPy forward pass of the same GGUF weights (RMSNorm, rope on
  adjacent pairs, grouped attention, SwiGLU): what LPX's `activations = "f32"` computes in f32.
- Windows, BOS and scored positions as llama-perplexity (and LPX's eval/perplexity.hpp) define
  them; perplexity, mean KL(reference || evaluated) and top-1 agreement summed in float64.

Only facts are stored (numbers, token counts, the text's sha256), no peer code.
Peer set-up: see tools/make_greedy_fixtures.py (AVX2-only llama-cpp-python 0.3.36 in a venv
that also has numpy and gguf).

    /work/peer/venv/bin/python tools/make_perplexity_fixture.py \\
        --model ../shared/models/llama-2-tiny-random.gguf \\
        --text /usr/share/common-licenses/GPL-3 --ctx 128 --chunks 3 \\
        -o tests/fixtures/perplexity/tiny-llama-gpl3.json
"""
import argparse
import hashlib
import json

import numpy as np
from gguf import GGUFReader
from llama_cpp import Llama


def field(reader, name):
    f = reader.fields[name]
    value = f.parts[f.data[0]]
    return value.tobytes().decode() if value.dtype == np.uint8 else value[0].item()


class NumpyLlama:
    """A float64 llama forward pass over dequantized (F16/F32) GGUF weights."""

    def __init__(self, path):
        r = GGUFReader(path)
        self.w = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
        self.layers = field(r, "llama.block_count")
        self.heads = field(r, "llama.attention.head_count")
        self.kv_heads = field(r, "llama.attention.head_count_kv")
        self.eps = field(r, "llama.attention.layer_norm_rms_epsilon")
        self.base = field(r, "llama.rope.freq_base") if "llama.rope.freq_base" in r.fields else 10000.0
        self.embd = field(r, "llama.embedding_length")
        self.head_dim = self.embd // self.heads

    def norm(self, x, weight):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * weight

    def rope(self, x):  # x: (n, heads, head_dim); pairs (2i, 2i+1) turn by pos * base^(-2i/d)
        n, d = x.shape[0], self.head_dim
        angle = np.arange(n)[:, None] * self.base ** (-np.arange(0, d, 2) / d)[None, :]
        cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
        out = x.copy()
        out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
        out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
        return out

    def logits(self, tokens):
        w, n, hd = self.w, len(tokens), self.head_dim
        x = w["token_embd.weight"][tokens]
        mask = np.triu(np.full((n, n), -np.inf), 1)
        for l in range(self.layers):
            p = f"blk.{l}."
            h = self.norm(x, w[p + "attn_norm.weight"])
            q = self.rope((h @ w[p + "attn_q.weight"].T).reshape(n, self.heads, hd))
            k = self.rope((h @ w[p + "attn_k.weight"].T).reshape(n, self.kv_heads, hd))
            v = (h @ w[p + "attn_v.weight"].T).reshape(n, self.kv_heads, hd)
            group = self.heads // self.kv_heads
            out = np.empty_like(q)
            for head in range(self.heads):
                s = q[:, head] @ k[:, head // group].T / np.sqrt(hd) + mask
                s = np.exp(s - s.max(axis=1, keepdims=True))
                out[:, head] = (s / s.sum(axis=1, keepdims=True)) @ v[:, head // group]
            x = x + out.reshape(n, -1) @ w[p + "attn_output.weight"].T
            h = self.norm(x, w[p + "ffn_norm.weight"])
            gate = h @ w[p + "ffn_gate.weight"].T
            x = x + ((gate / (1 + np.exp(-gate))) * (h @ w[p + "ffn_up.weight"].T)) @ w[p + "ffn_down.weight"].T
        return self.norm(x, w["output_norm.weight"]) @ w["output.weight"].T


def log_softmax(rows):
    rows = np.asarray(rows, dtype=np.float64)
    m = rows.max(axis=1, keepdims=True)
    return rows - (m + np.log(np.exp(rows - m).sum(axis=1, keepdims=True)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--chunks", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    raw = open(a.text, "rb").read()
    peer = Llama(a.model, n_ctx=a.ctx, n_batch=a.ctx, n_ubatch=a.ctx, logits_all=True, verbose=False,
                 n_threads=2)
    tokens = peer.tokenize(raw, add_bos=True, special=False)
    bos = peer.token_bos() if peer._model.add_bos_token() else None
    windows = len(tokens) // a.ctx
    if a.chunks:
        windows = min(windows, a.chunks)
    reference = NumpyLlama(a.model)
    first = a.ctx // 2
    nll, ref_nll, kl, same = [], [], [], 0
    for wi in range(windows):
        window = list(tokens[wi * a.ctx:(wi + 1) * a.ctx])
        if bos is not None:
            window[0] = bos
        peer.reset()
        peer.eval(window)
        e = log_softmax(peer.scores[first:a.ctx - 1])
        r = log_softmax(reference.logits(np.array(window))[first:a.ctx - 1])
        targets = np.array(tokens[wi * a.ctx + first + 1:(wi + 1) * a.ctx])
        rows = np.arange(len(targets))
        nll += list(-e[rows, targets])
        ref_nll += list(-r[rows, targets])
        kl += list((np.exp(r) * (r - e)).sum(axis=1))
        same += int((e.argmax(axis=1) == r.argmax(axis=1)).sum())
    result = {
        "model": a.model.split("/")[-1],
        "text": a.text,
        "text_sha256": hashlib.sha256(raw).hexdigest(),
        "ctx": a.ctx,
        "chunks": windows,
        "text_tokens": len(tokens),
        "tokens": len(nll),
        "perplexity": float(np.exp(np.mean(nll))),
        "reference_perplexity": float(np.exp(np.mean(ref_nll))),
        "kl_divergence": float(np.mean(kl)),
        "top1_agreement": same / len(nll),
        "evaluated": "llama.cpp (llama-cpp-python 0.3.36, AVX2 build): LPX activations=q8",
        "reference": "float64 NumPy forward of the GGUF weights: LPX activations=f32",
    }
    with open(a.output, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
