#!/usr/bin/env python3
"""Speculative decoding, measured (docs/perf/speculative.md). A benchmark, not a test.

  python3 tools/bench/speculative.py [--model M] [--tokens 256] [--runs 3]
                                     [--peer-server PATH/llama-server] [--threads N]

Copy-heavy chat work at batch 1, greedy: the model rewrites a given text. LPX `serve` with
`--speculative ngram` and without; with --peer-server, llama.cpp's llama-server with
`--spec-type ngram-simple` and without (`none`), interleaved run by run. Decode tokens/s is
(tokens - 1) / (time of the last token - time of the first), from the stream; the answers of
the two LPX runs must be equal (speculation changes no token). Standard library only.
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
    p.add_argument("--peer-server")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    args = p.parse_args()
    configs = [("lpx off", lambda: start_server(args.model, [])),
               ("lpx ngram", lambda: start_server(args.model, ["--speculative", "ngram"]))]
    if args.peer_server:
        configs += [("llama.cpp none", lambda: start_peer(args.peer_server, args.model, args.threads)),
                    ("llama.cpp ngram-simple",
                     lambda: start_peer(args.peer_server, args.model, args.threads, ["--spec-type", "ngram-simple"]))]
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
          f"{args.tokens} tokens, greedy, {args.runs} runs interleaved")
    print("\n| engine | decode tokens/s (mean ± sd) |\n|---|---:|")
    for name in rates:
        r = rates[name]
        print(f"| {name} | {statistics.mean(r):.1f} ± {statistics.stdev(r) if len(r) > 1 else 0:.1f} |")
    print(f"\nLPX speedup {statistics.mean(rates['lpx ngram']) / statistics.mean(rates['lpx off']):.2f}x; "
          f"answers equal: {answers['lpx off'] == answers['lpx ngram']}")
    if args.peer_server:
        print(f"llama.cpp speedup {statistics.mean(rates['llama.cpp ngram-simple']) / statistics.mean(rates['llama.cpp none']):.2f}x")


if __name__ == "__main__":
    main()
