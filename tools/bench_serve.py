#!/usr/bin/env python3
"""Load generator for an LPX (or any OpenAI-compatible) HTTP server, like `vllm bench serve`.

  python3 tools/bench_serve.py --url http://127.0.0.1:8080 --concurrency 1,8,64 --requests 200 \\
      [--max-tokens 64] [--prompt-file F] [--endpoint completions|chat] [--json] [--api-key K]
  python3 tools/bench_serve.py --url http://127.0.0.1:8080 --speed-test [--json]

Load mode: per concurrency level C, N streaming requests with at most C in flight (C threads, each
on a keep-alive connection): request and output-token throughput, time to first token (TTFT),
inter-token latency (ITL: the gaps between one stream's content events) and end-to-end latency.
Output tokens are `usage.completion_tokens` (asked for with `stream_options.include_usage`), else
the number of content events. A request fails on a non-200 status, an error event, a stream
without `[DONE]` or a socket error (except a kept-alive connection the server closed before
any response: the request goes again, once, on a new connection); the first few errors go to
stderr. Requests cycle through the
prompts of --prompt-file (one per line, blank lines skipped) or five built-in openings.

--speed-test: ten fixed prompts (five English, five Chinese) x max_tokens 32, 64, 128, one at a
time through /v1/chat/completions, not streamed, temperature 0: completion_tokens / wall time.

Exit status 1 when any request failed. Standard library only.
"""
import argparse
import concurrent.futures
import http.client
import json
import sys
import threading
import time
import urllib.parse

# Openings that SmolLM2-135M continues (greedy) for at least 128 tokens, so that requests are
# comparable; a question such as "What is the capital of France?" often ends after one token.
DEFAULT_PROMPTS = ["Once upon a time", "In the year 2050, the city of",
                   "Here is a recipe for bread. Step 1:", "Chapter 1. The old lighthouse keeper",
                   "Dear diary, today I"]
SPEED_PROMPTS = {
    "en": ["What is the capital of France?", "Explain photosynthesis in simple terms.",
           "Write a haiku about the ocean.", "Give three tips for learning a new language.",
           "Describe how a rainbow forms."],
    "zh": ["中国的首都是哪里？", "请用简单的语言解释光合作用。", "写一首关于大海的短诗。",
           "给出学习一门新语言的三个建议。", "请描述彩虹是如何形成的。"],
}
SPEED_MAX_TOKENS = (32, 64, 128)
MAX_ERRORS_SHOWN = 5


class Client:
    """Target server: base URL, headers and the model id; `connect()` opens a new connection."""

    def __init__(self, url, api_key=None, model=None, timeout=600.0, extra_body=None):
        parts = urllib.parse.urlsplit(url)
        self.netloc, self.https = parts.netloc, parts.scheme == "https"
        self.prefix = parts.path.rstrip("/").removesuffix("/v1")
        self.timeout, self.extra_body = timeout, extra_body or {}
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = "Bearer " + api_key
        self.model = model or self._first_model()

    def connect(self):
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        return cls(self.netloc, timeout=self.timeout)

    def _first_model(self):
        """The first id of GET /v1/models (OpenAI servers other than LPX want a `model`)."""
        conn = self.connect()
        try:
            conn.request("GET", self.prefix + "/v1/models", headers=self.headers)
            resp = conn.getresponse()
            data = json.loads(resp.read()) if resp.status == 200 else {}
            return (data.get("data") or [{}])[0].get("id")
        except (OSError, ValueError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    def body(self, endpoint, prompt, max_tokens, stream, **extra):
        """(path, JSON body) of a completions or chat request."""
        body = {"max_tokens": max_tokens, "stream": stream, **extra, **self.extra_body}
        if self.model:
            body["model"] = self.model
        if endpoint == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if stream:
            body["stream_options"] = {"include_usage": True}
        path = "/v1/chat/completions" if endpoint == "chat" else "/v1/completions"
        return self.prefix + path, json.dumps(body)


def error_text(status, raw):
    """`HTTP 429: message` from an OpenAI error body, or the start of whatever came."""
    try:
        message = json.loads(raw)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = raw[:200].decode("utf-8", "replace")
    return f"HTTP {status}: {message}"


class NotAnswered(Exception):
    """The connection failed before a status line came back: the request was not served."""


def stream_request(client, conn, endpoint, prompt, max_tokens):
    """One streamed request on `conn`. Returns a result dict; raises on socket errors
    (NotAnswered when no response had begun)."""
    path, body = client.body(endpoint, prompt, max_tokens, stream=True)
    start = time.perf_counter()
    try:
        conn.request("POST", path, body=body, headers=client.headers)
        resp = conn.getresponse()
    except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
        raise NotAnswered(f"{type(e).__name__}: {e}") from e
    if resp.status != 200:
        return {"error": error_text(resp.status, resp.read())}
    events, usage, done, error, ttft, last, itl = 0, None, False, None, None, None, []
    for line in resp:
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            done = True
            break
        chunk = json.loads(data)
        if "error" in chunk:
            error = f"stream error: {chunk['error']}"
            continue
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            text = (choice.get("delta") or {}).get("content") if endpoint == "chat" \
                else choice.get("text")
            if text:
                now = time.perf_counter()
                if ttft is None:
                    ttft = now - start
                else:
                    itl.append(now - last)
                last, events = now, events + 1
    end = time.perf_counter()
    resp.read()  # the rest of the chunked body, so the connection can be reused
    if error or not done:
        return {"error": error or "stream ended without [DONE]", "close": True}
    tokens = usage["completion_tokens"] if usage else events
    return {"ttft": ttft, "itl": itl, "e2e": end - start, "tokens": tokens,
            "close": resp.will_close}


def percentiles_ms(values, *qs):
    """{"p50": ms, ...}, interpolated linearly (numpy's default); None for no values."""
    s, out = sorted(values), {}
    for q in qs:
        k = (len(s) - 1) * q / 100.0
        lo, hi = int(k), min(int(k) + 1, len(s) - 1)
        out[f"p{q}"] = round((s[lo] + (s[hi] - s[lo]) * (k - lo)) * 1e3, 2) if s else None
    return out


def run_level(client, args, prompts, concurrency):
    """Sends args.requests requests with `concurrency` in flight; returns the level's summary."""
    local, conns = threading.local(), []

    def one(i):
        reused = getattr(local, "conn", None) is not None
        if not reused:
            local.conn = client.connect()
            conns.append(local.conn)
        prompt = prompts[i % len(prompts)]
        try:
            try:
                r = stream_request(client, local.conn, args.endpoint, prompt, args.max_tokens)
            except NotAnswered:
                if not reused:
                    raise
                # The server closed the idle kept-alive connection before any response (llama-
                # server does after a stream): send the request again on a fresh connection,
                # as HTTP clients do.
                local.conn.close()
                local.conn = client.connect()
                conns.append(local.conn)
                r = stream_request(client, local.conn, args.endpoint, prompt, args.max_tokens)
        except (OSError, ValueError, KeyError, http.client.HTTPException, NotAnswered) as e:
            r = {"error": f"{type(e).__name__}: {e}", "close": True}
        if r.get("close"):
            local.conn.close()
            local.conn = None
        return r

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        everything = list(pool.map(one, range(args.requests)))
    wall = time.perf_counter() - start
    for conn in conns:
        conn.close()

    results = [r for r in everything if "error" not in r]
    errors = [r["error"] for r in everything if "error" in r]
    tokens = sum(r["tokens"] for r in results)
    return {"concurrency": concurrency, "requests": args.requests, "completed": len(results),
            "failed": len(errors), "duration_s": round(wall, 3),
            "request_throughput": round(len(results) / wall, 3), "output_tokens": tokens,
            "output_tokens_per_s": round(tokens / wall, 2),
            "tokens_per_request": round(tokens / len(results), 1) if results else None,
            "ttft_ms": percentiles_ms([r["ttft"] for r in results if r["ttft"]], 50, 90, 99),
            "itl_ms": percentiles_ms([gap for r in results for gap in r["itl"]], 50, 99),
            "e2e_ms": percentiles_ms([r["e2e"] for r in results], 50, 99),
            "errors": errors[:MAX_ERRORS_SHOWN]}


def speed_test(client):
    """The fixed prompts, one at a time, non-streamed chat at temperature 0: a row per
    (max_tokens, language), and one for both languages together. Returns (rows, failures)."""
    rows, failures, conn = [], 0, client.connect()
    for max_tokens in SPEED_MAX_TOKENS:
        done = {"en": [], "zh": []}  # (completion tokens, seconds) per request
        for lang, prompt in ((lang, p) for lang, ps in SPEED_PROMPTS.items() for p in ps):
            path, body = client.body("chat", prompt, max_tokens, stream=False, temperature=0)
            start = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=client.headers)
                resp = conn.getresponse()
                raw = resp.read()
                if resp.status != 200:
                    raise RuntimeError(error_text(resp.status, raw))
                tokens = json.loads(raw)["usage"]["completion_tokens"]
                done[lang].append((tokens, time.perf_counter() - start))
            except (OSError, ValueError, KeyError, RuntimeError, http.client.HTTPException) as e:
                failures += 1
                if failures <= MAX_ERRORS_SHOWN:
                    print(f"error ({lang}, max_tokens {max_tokens}): {e}", file=sys.stderr)
                conn.close()
                conn = client.connect()
        for lang, runs in (*done.items(), ("all", done["en"] + done["zh"])):
            tokens, seconds = sum(t for t, _ in runs), sum(s for _, s in runs)
            rows.append({"max_tokens": max_tokens, "prompts": lang, "requests": len(runs),
                         "completion_tokens": tokens, "seconds": round(seconds, 3),
                         "tokens_per_s": round(tokens / seconds, 2) if seconds else 0.0})
    conn.close()
    return rows, failures


def fmt(value):
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def markdown(header, rows):
    """A markdown table; the first column is left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    return "\n".join(lines + ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows])


def level_table(levels):
    def spread(ms):
        return " / ".join(fmt(v) for v in ms.values())

    return markdown(["concurrency", "ok / requests", "failed", "req/s", "output tok/s", "tok/req",
                     "TTFT p50 / p90 / p99 ms", "ITL p50 / p99 ms", "E2E p50 / p99 ms"],
                    [[lv["concurrency"], f"{lv['completed']} / {lv['requests']}", lv["failed"],
                      lv["request_throughput"], lv["output_tokens_per_s"], lv["tokens_per_request"],
                      spread(lv["ttft_ms"]), spread(lv["itl_ms"]), spread(lv["e2e_ms"])]
                     for lv in levels])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080", help="server base URL")
    ap.add_argument("--concurrency", default="1,8,64", help="comma-separated levels")
    ap.add_argument("--requests", type=int, default=200, help="requests per level")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompt-file", help="one prompt per line")
    ap.add_argument("--endpoint", choices=("completions", "chat"), default="completions")
    ap.add_argument("--model", help="model id to send (default: the first of /v1/models)")
    ap.add_argument("--api-key", help="sent as `Authorization: Bearer KEY`")
    ap.add_argument("--extra-body", type=json.loads, help="JSON object merged into every body, "
                    "e.g. '{\"logit_bias\": {\"2\": -100}}' to ban a stop token")
    ap.add_argument("--timeout", type=float, default=600.0, help="socket timeout, seconds")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--speed-test", action="store_true", help="the fixed-prompt speed test")
    args = ap.parse_args()

    client = Client(args.url, args.api_key, args.model, args.timeout, args.extra_body)
    report = {"url": args.url, "model": client.model}
    if args.speed_test:
        rows, failed = speed_test(client)
        report["speed_test"] = rows
        table = markdown(["max_tokens", "prompts", "requests", "completion tokens", "seconds",
                          "tokens/s"], [list(r.values()) for r in rows])
    else:
        prompts = DEFAULT_PROMPTS
        if args.prompt_file:
            with open(args.prompt_file, encoding="utf-8") as f:
                prompts = [line.strip() for line in f if line.strip()]
        levels = []
        for c in (int(x) for x in args.concurrency.split(",")):
            levels.append(run_level(client, args, prompts, c))
            for err in levels[-1]["errors"]:
                print(f"error (concurrency {c}): {err}", file=sys.stderr)
        report.update(endpoint=args.endpoint, max_tokens=args.max_tokens, levels=levels)
        failed = sum(lv["failed"] for lv in levels)
        table = level_table(levels)
    print(json.dumps(report, indent=2) if args.json else table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
