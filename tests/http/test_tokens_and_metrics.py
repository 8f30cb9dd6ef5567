"""The server's own endpoints (docs/http-server.md): /tokenize, /detokenize, /generate, /health,
/ready, /metrics and the WebSocket /v1/ws, driven with the standard library (and websocket-client).
"""
import http.client
import json
import math
import re
import time
import urllib.error
import urllib.request

import pytest
import websocket

PROMPT = "The capital of France is"
CHAT = [{"role": "user", "content": "What is the capital of France?"}]


def request(srv, method, path, body=None, timeout=60):
    """Returns (status, headers, raw body bytes)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(srv.url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def post(srv, path, body):
    status, _, raw = request(srv, "POST", path, body)
    return status, json.loads(raw)


def assert_error(status, body, code, type_="invalid_request_error"):
    assert status == code, body
    assert set(body) == {"error"}, body
    assert body["error"]["type"] == type_, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def sse_events(srv, path, body, timeout=60):
    """POSTs `body` and returns (content type, [data payloads as str]) of the event stream."""
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200, r.read()
        ctype = r.getheader("Content-Type", "")
        raw = r.read().decode("utf-8")
    finally:
        conn.close()
    events = []
    for block in raw.replace("\r\n", "\n").split("\n\n"):
        data = [line[len("data:"):].lstrip(" ") for line in block.split("\n")
                if line.startswith("data:")]
        if data:
            events.append("\n".join(data))
    return ctype, events


# --- /tokenize, /detokenize -----------------------------------------------------------------

def test_tokenize_hello_world(server):
    status, body = post(server, "/tokenize", {"text": "Hello world"})
    assert status == 200, body
    tokens = body["tokens"]
    assert isinstance(tokens, list) and tokens
    assert all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in tokens)
    assert body["count"] == len(tokens)
    assert "pieces" not in body

    status, body = post(server, "/detokenize", {"tokens": tokens})
    assert status == 200, body
    assert "Hello world" in body["text"]


def test_tokenize_with_pieces(server):
    status, body = post(server, "/tokenize",
                        {"text": "Hello world", "add_special": False, "with_pieces": True})
    assert status == 200, body
    assert len(body["pieces"]) == len(body["tokens"]) == body["count"]
    assert all(isinstance(p, str) for p in body["pieces"])


def test_tokenize_round_trip_utf8(server):
    text = "Grüße 👋🌍 — 你好，世界! naïve café"
    status, body = post(server, "/tokenize", {"text": text, "add_special": False})
    assert status == 200, body
    assert body["count"] == len(body["tokens"]) > 0
    status, back = post(server, "/detokenize", {"tokens": body["tokens"]})
    assert status == 200, back
    assert back["text"] == text


def test_detokenize_out_of_range_is_400(server):
    status, body = post(server, "/detokenize", {"tokens": [10**7]})
    assert_error(status, body, 400)
    status, body = post(server, "/detokenize", {"tokens": [1, -1]})
    assert_error(status, body, 400)


# --- /generate ------------------------------------------------------------------------------

def check_usage(usage, max_tokens=None):
    assert set(usage) >= {"prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens"}
    for k in ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens"):
        assert isinstance(usage[k], int) and usage[k] >= 0, usage
    assert usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["cached_tokens"] <= usage["prompt_tokens"]
    if max_tokens is not None:
        assert usage["completion_tokens"] == max_tokens


def check_timings(timings):
    assert set(timings) >= {"ttft_ms", "total_ms", "tokens_per_s"}
    for k in ("ttft_ms", "total_ms", "tokens_per_s"):
        assert isinstance(timings[k], (int, float)) and math.isfinite(timings[k]), timings
    assert 0 <= timings["ttft_ms"] <= timings["total_ms"], timings
    assert timings["tokens_per_s"] > 0, timings


def test_generate(server):
    status, body = post(server, "/generate", {"prompt": PROMPT, "max_tokens": 8, "temperature": 0})
    assert status == 200, body
    assert isinstance(body["text"], str) and body["text"]
    assert body["finish_reason"] == "length"
    check_usage(body["usage"], max_tokens=8)
    check_timings(body["timings"])
    # the same greedy answer as /v1/completions
    status, completion = post(server, "/v1/completions",
                              {"prompt": PROMPT, "max_tokens": 8, "temperature": 0})
    assert status == 200, completion
    assert completion["choices"][0]["text"] == body["text"]


def test_generate_messages(server):
    status, body = post(server, "/generate", {"messages": CHAT, "max_tokens": 32, "temperature": 0})
    assert status == 200, body
    assert "Paris" in body["text"]
    assert body["finish_reason"] in ("stop", "length")
    check_usage(body["usage"])


def test_generate_stream(server):
    status, full = post(server, "/generate", {"prompt": PROMPT, "max_tokens": 8, "temperature": 0})
    assert status == 200, full
    ctype, events = sse_events(server, "/generate",
                               {"prompt": PROMPT, "max_tokens": 8, "temperature": 0, "stream": True})
    assert ctype.startswith("text/event-stream"), ctype
    assert len(events) >= 3, events
    assert events[-1] == "[DONE]"
    payloads = [json.loads(e) for e in events[:-1]]
    texts, final = payloads[:-1], payloads[-1]
    assert texts, payloads
    for p in texts:
        assert set(p) == {"text"}, p
        assert isinstance(p["text"], str)
    assert "".join(p["text"] for p in texts) == full["text"]
    assert final["finish_reason"] == "length"
    check_usage(final["usage"], max_tokens=8)
    check_timings(final["timings"])


# --- /health, /ready ------------------------------------------------------------------------

def test_health_and_ready(server):
    status, _, raw = request(server, "GET", "/health")
    assert status == 200 and json.loads(raw) == {"status": "ok"}
    status, _, raw = request(server, "GET", "/ready")
    assert status == 200 and json.loads(raw) == {"status": "ready"}


# --- /metrics -------------------------------------------------------------------------------

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?[ \t]+(\S+)([ \t]+-?\d+)?$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_labels(text):
    labels, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        assert m, f"bad labels {text!r}"
        labels[m.group(1)] = m.group(2)
        pos = m.end()
    return labels


def scrape(srv):
    """Returns (raw text, [(name, labels, value)]), asserting the format line by line."""
    status, headers, raw = request(srv, "GET", "/metrics")
    assert status == 200
    assert headers.get("Content-Type", "").startswith("text/plain"), headers
    text = raw.decode("utf-8")
    samples = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        value = float(m.group(4))  # accepts +Inf, -Inf, NaN
        samples.append((m.group(1), parse_labels(m.group(3) or ""), value))
    return text, samples


def total(samples, name):
    values = [v for n, _, v in samples if n == name]
    assert values, f"{name} missing"
    return sum(values)


def server_model_id(srv):
    status, _, raw = request(srv, "GET", "/v1/models")
    assert status == 200
    return json.loads(raw)["data"][0]["id"]


def test_metrics(server):
    _, before = scrape(server)
    generated_before = total(before, "lpx_generated_tokens_total")
    status, body = post(server, "/v1/completions",
                        {"prompt": PROMPT, "max_tokens": 8, "temperature": 0})
    assert status == 200, body
    completion_tokens = body["usage"]["completion_tokens"]
    assert completion_tokens == 8

    deadline = time.time() + 3
    while True:
        text, samples = scrape(server)
        generated = total(samples, "lpx_generated_tokens_total")
        if generated >= generated_before + completion_tokens or time.time() > deadline:
            break
        time.sleep(0.1)
    assert generated >= generated_before + completion_tokens, (generated_before, generated)

    names = {n for n, _, _ in samples}
    requests = [(l, v) for n, l, v in samples if n == "lpx_http_requests_total"]
    assert requests, "lpx_http_requests_total missing"
    assert all("endpoint" in l and "status" in l for l, _ in requests), requests
    assert any(l["status"] == "200" and v >= 1 for l, v in requests), requests

    assert "# TYPE lpx_time_to_first_token_seconds histogram" in text
    buckets = [(l["le"], v) for n, l, v in samples if n == "lpx_time_to_first_token_seconds_bucket"]
    assert any(le == "+Inf" for le, _ in buckets), buckets
    buckets.sort(key=lambda b: float(b[0]))
    counts = [v for _, v in buckets]
    assert counts == sorted(counts), buckets  # cumulative
    assert buckets[-1][0] == "+Inf"
    assert buckets[-1][1] == total(samples, "lpx_time_to_first_token_seconds_count") >= 1
    assert "lpx_time_to_first_token_seconds_sum" in names

    assert total(samples, "lpx_kv_cache_blocks_total") > 0
    assert total(samples, "process_resident_memory_bytes") > 0
    assert total(samples, "lpx_up") == 1
    for name in ("lpx_prompt_tokens_total", "lpx_queue_depth", "lpx_running_sequences",
                 "lpx_kv_cache_blocks_used", "lpx_kv_cache_usage_ratio",
                 "lpx_generation_tokens_per_second", "process_virtual_memory_bytes",
                 "lpx_inter_token_latency_seconds_bucket", "lpx_request_duration_seconds_bucket",
                 "lpx_queue_wait_seconds_bucket"):
        assert name in names, name
    # The model's series carry its id; the queue wait counts this request too.
    model = server_model_id(server)
    for n, labels, _ in samples:
        if n.startswith(("lpx_queue", "lpx_kv_cache", "lpx_time_to_first_token", "lpx_generated")):
            assert labels.get("model") == model, (n, labels)
    assert total(samples, "lpx_queue_wait_seconds_count") >= 1
    assert total(samples, "lpx_queue_wait_seconds_sum") <= total(samples, "lpx_time_to_first_token_seconds_sum") + 1e-3


# --- WebSocket /v1/ws -----------------------------------------------------------------------

def ws_exchange(ws, body):
    """Sends one body; returns the chunk objects received before "[DONE]"."""
    ws.send(json.dumps(body))
    chunks = []
    while True:
        message = ws.recv()
        assert isinstance(message, str), message
        if message == "[DONE]":
            return chunks
        chunk = json.loads(message)
        assert "error" not in chunk, chunk
        chunks.append(chunk)
        assert len(chunks) < 1000


def test_websocket_chat_and_completion(server):
    chat_body = {"messages": CHAT, "max_tokens": 8, "temperature": 0}
    status, full_chat = post(server, "/v1/chat/completions", chat_body)
    assert status == 200, full_chat
    completion_body = {"prompt": PROMPT, "max_tokens": 8, "temperature": 0}
    status, full_completion = post(server, "/v1/completions", completion_body)
    assert status == 200, full_completion

    ws = websocket.create_connection(f"ws://{server.host}:{server.port}/v1/ws", timeout=60)
    try:
        chunks = ws_exchange(ws, chat_body)
        assert chunks
        assert all(c["object"] == "chat.completion.chunk" for c in chunks), chunks
        text = "".join(ch["delta"].get("content") or "" for c in chunks for ch in c["choices"])
        assert text == full_chat["choices"][0]["message"]["content"]
        finishes = [ch["finish_reason"] for c in chunks for ch in c["choices"]
                    if ch.get("finish_reason")]
        assert finishes == [full_chat["choices"][0]["finish_reason"]]

        # a second body on the same connection: completions
        chunks = ws_exchange(ws, completion_body)
        assert chunks
        assert all(c["object"] == "text_completion" for c in chunks), chunks
        assert "".join(ch["text"] for c in chunks for ch in c["choices"]) == \
            full_completion["choices"][0]["text"]
    finally:
        ws.close()
