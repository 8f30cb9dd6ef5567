#!/usr/bin/env python3
"""Prefix caching, measured (docs/perf/prefix-cache.md). A benchmark, not a test.

  python3 tools/bench/prefix_cache.py [--model M] [--prefix-tokens 2000] [--runs 3]
                                      [--batch-prompts 1000] [--batch-prefix-tokens 500]
                                      [--peer-server PATH/llama-server] [--threads N]

1. Time to first token of chat requests that share a long system prompt: `serve` with the cache
   on and with `--set engine.prefix_cache=false`, the same requests in the same order; the first
   request of each server computes the prefix, later ones (different questions) may reuse it.
   With --peer-server, llama.cpp's llama-server (one slot, its prompt cache on, as it ships) runs
   the same requests in the same way.
2. A batch job of prompts that share a few-shot prefix, with the cache on and off: wall time and
   prompts/s from summary.json.
Standard library only; prints a Markdown summary.
"""
import argparse
import http.client
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
PIPELINE = os.environ.get("LPX_PIPELINE", str(ROOT / "build/bin/lpx-pipeline"))


def words(n_tokens):
    """Plain English-like text of about n_tokens tokens (SmolLM2: ~1.3 tokens per word here)."""
    sentence = ("Rule {i}: a reader may borrow at most {j} books from shelf {i}, keep them for {k} days, "
                "and renew them once unless another reader has asked for them. ")
    text, i = "", 0
    while len(text.split()) * 1.35 < n_tokens:
        i += 1
        text += sentence.format(i=i, j=i % 5 + 1, k=i % 9 + 7)
    return text


def start_server(model, extra):
    proc = subprocess.Popen([PIPELINE, "serve", "--model", model, "--port", "0", "--max-sequences", "1", *extra],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    for line in proc.stderr:
        m = re.search(r"listening on http://([0-9.]+):(\d+)", line)
        if m:
            return proc, (m.group(1), int(m.group(2)))
        if time.time() > deadline:
            break
    proc.kill()
    sys.exit("the server did not start")


def start_peer(server, model, threads, extra=()):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, LD_LIBRARY_PATH=str(pathlib.Path(server).parent))
    proc = subprocess.Popen([server, "-m", model, "--port", str(port), "-np", "1", "-t", str(threads),
                             "-c", "4096", "--no-webui", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    for _ in range(600):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return proc, ("127.0.0.1", port)
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    sys.exit("llama-server did not start")


def ttft(addr, system, question):
    """Streams one chat answer; returns (seconds to the first content, prompt tokens, cached)."""
    body = {"model": "m", "max_tokens": 8, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}]}
    conn = http.client.HTTPConnection(*addr, timeout=600)
    start = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first, usage = None, None
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            usage = dict(event["usage"])
        if event.get("timings") and usage is not None:  # llama-server's own account of its cache
            usage.setdefault("prompt_tokens_details", {"cached_tokens": event["timings"].get("cache_n", 0)})
        for c in event.get("choices", []):
            if first is None and c["delta"].get("content"):
                first = time.perf_counter() - start
    conn.close()
    details = (usage or {}).get("prompt_tokens_details") or {}
    return first, (usage or {}).get("prompt_tokens", 0), details.get("cached_tokens", 0)


def serve_part(args):
    system = words(args.prefix_tokens)
    questions = [f"How long may I keep a book from shelf {n}?" for n in range(3, 3 + args.runs + 1)]
    rows = {}
    runs = [("on", lambda: start_server(args.model, [])),
            ("off", lambda: start_server(args.model, ["--set", "engine.prefix_cache=false"]))]
    if args.peer_server:
        runs.append(("peer", lambda: start_peer(args.peer_server, args.model, args.threads)))
    for label, start in runs:
        proc, addr = start()
        try:
            rows[label] = [ttft(addr, system, q) for q in questions]
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return rows


def batch_part(args):
    shots = words(args.batch_prefix_tokens)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="lpx-prefix-bench-"))
    source = tmp / "prompts.jsonl"
    with source.open("w") as f:
        for i in range(args.batch_prompts):
            f.write(json.dumps({"id": str(i), "prompt": f"{shots}\nQuestion {i}: which shelf holds book {i * 7}?\nAnswer:",
                                "max_tokens": 8}) + "\n")
    # Without the cache every prompt costs the same: --off-prompts runs only the first N of them
    # there (prompts/s compares the two).
    sample = tmp / "sample.jsonl"
    lines = source.read_text().splitlines(keepends=True)
    sample.write_text("".join(lines[:args.off_prompts or len(lines)]))
    out = {}
    for label, extra, prompts in (("on", [], source), ("off", ["--set", "engine.prefix_cache=false"], sample)):
        run_dir = tmp / label
        start = time.perf_counter()
        subprocess.run([PIPELINE, "batch", "--model", args.model, "--input", str(prompts), "--run-dir", str(run_dir),
                        *extra], check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        this_run = json.loads((run_dir / "summary.json").read_text())["this_run"]
        out[label] = (wall, this_run)
    shutil.rmtree(tmp)
    return out


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=str(ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    p.add_argument("--prefix-tokens", type=int, default=2000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--batch-prompts", type=int, default=1000)
    p.add_argument("--batch-prefix-tokens", type=int, default=500)
    p.add_argument("--off-prompts", type=int, default=0, help="run only the first N prompts without the cache")
    p.add_argument("--batch-only", action="store_true", help="skip the serve part")
    p.add_argument("--peer-server", help="llama.cpp's llama-server binary, run beside LPX")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    args = p.parse_args()
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; model {pathlib.Path(args.model).name}")
    if not args.batch_only:
        serve(args)
    if args.batch_prompts > 0:
        out = batch_part(args)
        print("\n| batch | prompts | wall s | prompts/s | prompt tokens | cached prompt tokens |")
        print("|---|---:|---:|---:|---:|---:|")
        for label in ("on", "off"):
            wall, r = out[label]
            print(f"| cache {label} | {r['ok'] + r['failed']} | {wall:.1f} | {r['prompts_per_s']:.2f} | {r['prompt_tokens']} | "
                  f"{r['cached_prompt_tokens']} |")
        print(f"\nbatch throughput: {out['on'][1]['prompts_per_s'] / out['off'][1]['prompts_per_s']:.1f}x "
              "the prompts per second with the cache")


def serve(args):
    rows = serve_part(args)
    labels = [label for label in ("on", "off", "peer") if label in rows]
    names = {"on": "LPX cache on", "off": "LPX cache off", "peer": "llama-server"}
    print("\n| request | " + " | ".join(f"{names[l]}: TTFT ms (prompt, cached tokens)" for l in labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for n in range(len(rows["on"])):
        cells = [f"{rows[l][n][0] * 1000:.0f} ({rows[l][n][1]}, {rows[l][n][2]})" for l in labels]
        print(f"| {n + 1} | " + " | ".join(cells) + " |")
    later = {l: statistics.median(r[0] for r in rows[l][1:]) for l in labels}
    print("\nlater requests, median TTFT: " + ", ".join(f"{names[l]} {later[l] * 1000:.0f} ms" for l in labels) +
          f"; LPX {later['off'] / later['on']:.1f}x faster with its cache than without")


if __name__ == "__main__":
    main()
