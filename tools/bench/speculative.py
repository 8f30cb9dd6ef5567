#!/usr/bin/env python3
"""Speculative decoding, measured (docs/perf/speculative.md). A benchmark, not a test.

  python3 tools/bench/speculative.py [--model M] [--tokens 256] [--runs 3]
                                     [--mode ngram|draft] [--draft-model D] [--max-draft N]
                                     [--peer-server PATH/llama-server] [--threads N]

Copy-heavy chat work at batch 1, greedy: the model rewrites a given text. LPX `serve` with
`--speculative ngram` (or `--draft-model D`) and without; with --peer-server, llama.cpp's
llama-server with `--spec-type ngram-simple` (or `draft-simple -md D`) and without (`none`),
interleaved run by run. --max-draft sets LPX's [speculative] max_draft and the peer's
--spec-draft-n-max (draft mode; its ngram-simple drafts up to its own m-gram length). Decode
tokens/s is (tokens - 1) / (time of the last token - time of the first), from the stream; the
answers of the two LPX runs must be equal (speculation changes no token). Standard library only.
"""
import argparse
import http.client
import json
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from prefix_cache import ROOT, cpu_name, start_peer, start_server  # noqa: E402

SOURCE = (ROOT / "docs/engine.md").read_text()[:2400]


def decode_rate(addr, tokens):
    body = {"model": "m", "max_tokens": tokens, "temperature": 0, "stream": True,
            "messages": [{"role": "user", "content": "Repeat the following text exactly, word for word:\n\n" + SOURCE}]}
    conn = http.client.HTTPConnection(*addr, timeout=900)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    times, text = [], []
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for c in json.loads(line[6:]).get("choices", []):
            piece = c["delta"].get("content")
            if piece:
                times.append(time.perf_counter())
                text.append(piece)
    conn.close()
    # Chunks may carry several tokens (a confirmed run): count tokens, not chunks.
    return "".join(text), times


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=str(ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--mode", choices=["ngram", "draft"], default="ngram")
    p.add_argument("--draft-model")
    p.add_argument("--max-draft", type=int)
    p.add_argument("--peer-server")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    args = p.parse_args()
    if args.mode == "draft" and not args.draft_model:
        sys.exit("--mode draft needs --draft-model")
    lpx_spec = ["--speculative", "ngram"] if args.mode == "ngram" else ["--draft-model", args.draft_model]
    peer_spec = ["--spec-type", "ngram-simple"] if args.mode == "ngram" else \
        ["--spec-type", "draft-simple", "-md", args.draft_model, "-td", str(args.threads)]
    if args.max_draft:
        lpx_spec += ["--set", f"speculative.max_draft={args.max_draft}"]
        if args.mode == "draft":
            peer_spec += ["--spec-draft-n-max", str(args.max_draft)]
    on = f"lpx {args.mode}"
    peer_on = f"llama.cpp {peer_spec[1]}"
    configs = [("lpx off", lambda: start_server(args.model, [])),
               (on, lambda: start_server(args.model, lpx_spec))]
    if args.peer_server:
        configs += [("llama.cpp none", lambda: start_peer(args.peer_server, args.model, args.threads)),
                    (peer_on, lambda: start_peer(args.peer_server, args.model, args.threads, peer_spec))]
    rates = {name: [] for name, _ in configs}
    answers = {}
    for _ in range(args.runs):
        for name, start in configs:
            proc, addr = start()
            try:
                text, times = decode_rate(addr, args.tokens)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
            answers[name] = text
            # Decode tokens: the answer's tokens after the first (max_tokens is reached).
            rates[name].append((args.tokens - 1) / (times[-1] - times[0]))
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; model {pathlib.Path(args.model).name}; "
          f"{args.tokens} tokens, greedy, {args.runs} runs interleaved; LPX {' '.join(lpx_spec)}"
          + (f"; llama.cpp {' '.join(peer_spec)}" if args.peer_server else ""))
    print("\n| engine | decode tokens/s (mean ± sd) |\n|---|---:|")
    for name in rates:
        r = rates[name]
        print(f"| {name} | {statistics.mean(r):.1f} ± {statistics.stdev(r) if len(r) > 1 else 0:.1f} |")
    print(f"\nLPX speedup {statistics.mean(rates[on]) / statistics.mean(rates['lpx off']):.2f}x; "
          f"answers equal: {answers['lpx off'] == answers[on]}")
    if args.peer_server:
        print(f"llama.cpp speedup {statistics.mean(rates[peer_on]) / statistics.mean(rates['llama.cpp none']):.2f}x")


if __name__ == "__main__":
    main()
