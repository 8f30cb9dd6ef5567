"""Hostile and unlucky clients against the real `lpx-pipeline serve` (docs/http-server.md).

Raw sockets and http.client only: every test asserts the status, the OpenAI error object
{"error": {"message", "type", "param", "code"}} where there is one, and that the server is still up
(GET /health 200) afterwards. Most run on the tiny Llama (fast); the ones that need a generation to
last for seconds (deadline, disconnects) use SmolLM2-135M, whose greedy answer to "Once upon a
time" runs for well over 1500 tokens at ~50 tokens/s on a CPU core.
"""
import contextlib
import http.client
import json
import re
import select
import socket
import subprocess
import threading
import time

import pytest
import websocket

from conftest import MODEL, PIPELINE, TINY_MODEL, addr, request, running, start_server

MARKER = "XYZZY-marker"
LONG_PROMPT = "Once upon a time"          # SmolLM2: no end of text for > 1500 tokens (greedy)
TINY_PROMPT = "hello world"               # tiny Llama: no end of text for > 4000 tokens (greedy)
BAD_LOG = re.compile(r"^\S+ \S+ (error|critical|fatal)\b|terminate called|Assertion|Sanitizer|"
                     r"Segmentation fault|core dumped", re.M | re.I)


# --------------------------------------------------------------------------------------------
# helpers



def read_response(sock, method="POST"):
    resp = http.client.HTTPResponse(sock, method=method)
    resp.begin()
    data = resp.read()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


class ResponseReader:
    """Reads responses one after another from one socket (pipelining): http.client's buffered
    file reads ahead, so every response must come from the same file, which must stay open."""

    class _File:
        def __init__(self, fp):
            self._fp = fp

        def __getattr__(self, name):
            return getattr(self._fp, name)

        def close(self):
            pass

    def __init__(self, sock):
        self._file = self._File(sock.makefile("rb"))

    def makefile(self, *args, **kwargs):
        return self._file

    def read(self, method="POST"):
        return read_response(self, method)


def post_raw_head(srv, path, body_len, extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: {addr(srv)[0]}:{srv.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {body_len}\r\n{extra}\r\n").encode()


def raw_post(srv, path, body: bytes, timeout=60):
    """POSTs exact bytes as the body (e.g. invalid UTF-8) and reads the response."""
    sock = socket.create_connection(addr(srv), timeout=timeout)
    try:
        sock.sendall(post_raw_head(srv, path, len(body)) + body)
        return read_response(sock)
    finally:
        sock.close()


def send_until_answered(sock, data, piece=4096):
    """Sends `data` in pieces, stopping early once the server has answered or closed."""
    for i in range(0, len(data), piece):
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            return
        try:
            sock.sendall(data[i:i + piece])
        except (BrokenPipeError, ConnectionResetError):
            return


def error_of(status, body, expect_status, etype="invalid_request_error", param=...):
    """Asserts an OpenAI error object with this status (and type, and param unless ...); returns it."""
    assert status == expect_status, f"expected {expect_status}, got {status}: {body[:500]!r}"
    try:
        obj = json.loads(body)
    except ValueError:
        pytest.fail(f"{status} without a JSON error object: {body[:500]!r}")
    assert isinstance(obj, dict) and isinstance(obj.get("error"), dict), obj
    err = obj["error"]
    for key in ("message", "type", "param", "code"):
        assert key in err, f"error object lacks {key!r}: {obj}"
    assert isinstance(err["message"], str) and err["message"], obj
    if etype is not None:
        assert err["type"] == etype, obj
    if param is not ...:
        assert err["param"] == param, obj
    return err


def assert_healthy(srv):
    assert srv.alive(), "the server process ended:\n" + srv.log()
    status, _, body = request(srv, "GET", "/health", timeout=30)
    assert status == 200, body
    assert json.loads(body) == {"status": "ok"}


def assert_log_clean(srv):
    bad = [line for line in srv.log().splitlines() if BAD_LOG.search(line)]
    assert not bad, "server log has errors:\n" + "\n".join(bad[:20])


METRIC = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def metrics(srv):
    status, headers, body = request(srv, "GET", "/metrics", timeout=30)
    assert status == 200, body
    out = {}
    for line in body.decode().splitlines():
        m = METRIC.match(line)
        if m and not line.startswith("#"):
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
            if m.group(2) and m.group(2).startswith("{model="):  # one model: its series by name too
                out[m.group(1)] = float(m.group(3))
    for name in ("lpx_running_sequences", "lpx_kv_cache_blocks_used", "lpx_queue_depth",
                 "process_resident_memory_bytes"):
        assert name in out, f"/metrics lacks {name}:\n{body.decode()[:3000]}"
    return out


def wait_metrics(srv, pred, timeout, what):
    """Polls /metrics until pred(sample) holds; fails after `timeout` seconds with the last sample."""
    deadline = time.monotonic() + timeout
    while True:
        m = metrics(srv)
        if pred(m):
            return m
        if time.monotonic() > deadline:
            keys = ("lpx_running_sequences", "lpx_queue_depth", "lpx_kv_cache_blocks_used")
            pytest.fail(f"{what} not reached within {timeout}s: " +
                        ", ".join(f"{k}={m.get(k)}" for k in keys))
        time.sleep(0.05)


def wait_idle(srv, timeout):
    return wait_metrics(srv, lambda m: m["lpx_running_sequences"] == 0
                        and m["lpx_kv_cache_blocks_used"] == 0 and m["lpx_queue_depth"] == 0,
                        timeout, "running 0, queued 0, KV blocks used 0")


class Stream:
    """A streaming POST over a raw socket that can be abandoned at any point."""

    def __init__(self, srv, body, path="/v1/completions", timeout=120, extra_headers=""):
        body = dict(body, stream=True)
        payload = json.dumps(body).encode()
        self.sock = socket.create_connection(addr(srv), timeout=timeout)
        self.sock.sendall(post_raw_head(srv, path, len(payload),
                                        "Accept: text/event-stream\r\n" + extra_headers) + payload)
        self.resp = None

    def begin(self):
        self.resp = http.client.HTTPResponse(self.sock, method="POST")
        self.resp.begin()
        return self.resp.status

    def events(self, errors="strict"):
        """Each event's data (str), up to and including "[DONE]", or until the server closes.
        The bytes must be UTF-8 (errors="surrogateescape" lets a caller look at broken ones)."""
        data = []
        while True:
            line = self.resp.readline()
            if not line:
                if data:
                    yield "\n".join(data)
                return
            line = line.rstrip(b"\r\n").decode("utf-8", errors)
            if line == "":
                if data:
                    payload, data = "\n".join(data), []
                    yield payload
                    if payload == "[DONE]":
                        return
            elif line.startswith("data:"):
                data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])

    def abort(self):
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        if self.resp is not None:
            self.resp.close()


def completion(srv, body, timeout=120, headers=None):
    return request(srv, "POST", "/v1/completions", body, headers=headers, timeout=timeout)


def completion_text(srv, body, timeout=120):
    status, _, data = completion(srv, body, timeout)
    assert status == 200, data
    return json.loads(data)["choices"][0]["text"]


# --------------------------------------------------------------------------------------------
# 1. bodies over max_body_bytes


@pytest.fixture(scope="module")
def small_body_server():
    with running("--set", "transport.max_body_bytes=4096") as srv:
        yield srv


def test_content_length_over_limit_is_413(small_body_server):
    srv = small_body_server
    # Content-Length 100000: the server may answer right after the headers or after the body.
    sock = socket.create_connection(addr(srv), timeout=60)
    try:
        sock.sendall(post_raw_head(srv, "/v1/completions", 100000))
        if not select.select([sock], [], [], 2)[0]:
            body = json.dumps({"prompt": MARKER, "max_tokens": 4}).encode()
            send_until_answered(sock, body + b" " * (100000 - len(body)))
        try:
            status, _, data = read_response(sock)
        except (http.client.RemoteDisconnected, ConnectionResetError) as e:
            pytest.fail(f"Content-Length 100000 over max_body_bytes 4096: the connection was "
                        f"closed without an answer ({e!r}); expected 413")
    finally:
        sock.close()
    error_of(status, data, 413)
    assert MARKER.encode() not in data
    assert_healthy(srv)


def test_chunked_body_over_limit_is_413(small_body_server):
    srv = small_body_server
    # chunked transfer encoding: no Content-Length to judge by
    sock = socket.create_connection(addr(srv), timeout=60)
    try:
        sock.sendall((f"POST /v1/completions HTTP/1.1\r\nHost: {addr(srv)[0]}\r\n"
                      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                     .encode())
        chunk = b" " * 1000
        send_until_answered(sock, (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * 20 +
                            b"0\r\n\r\n", piece=1007)
        status, _, data = read_response(sock)
    finally:
        sock.close()
    error_of(status, data, 413)
    assert_healthy(srv)


def test_body_at_the_limit_is_accepted(small_body_server):
    srv = small_body_server
    body = json.dumps({"prompt": TINY_PROMPT, "max_tokens": 2, "temperature": 0}).encode()
    body = body[:-1] + b" " * (4096 - len(body)) + b"}"
    assert len(body) == 4096
    status, _, data = raw_post(srv, "/v1/completions", body)
    assert status == 200, data
    assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 2. headers over max_header_bytes


def test_header_over_limit_is_431(tiny_server):
    srv = tiny_server
    body = json.dumps({"prompt": TINY_PROMPT, "max_tokens": 2}).encode()
    big = "X-Big: " + "a" * 65536 + "\r\n"
    sock = socket.create_connection(addr(srv), timeout=60)
    try:
        send_until_answered(sock, post_raw_head(srv, "/v1/completions", len(body), big) + body)
        status, _, data = read_response(sock)
    finally:
        sock.close()
    error_of(status, data, 431)
    assert_healthy(srv)

    # many small headers, 32 KiB together
    many = "".join(f"X-H{i}: {'v' * 10}\r\n" for i in range(2000))
    sock = socket.create_connection(addr(srv), timeout=60)
    try:
        send_until_answered(sock, post_raw_head(srv, "/v1/completions", len(body), many) + body)
        status, _, data = read_response(sock)
    finally:
        sock.close()
    error_of(status, data, 431)
    assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 3. malformed JSON, 5. invalid UTF-8: 400 with a fixed text, nothing echoed


def test_malformed_json_is_400_with_a_fixed_message(tiny_server):
    srv = tiny_server
    messages = []
    for tail in ("-1", "-22222222"):
        status, _, data = raw_post(srv, "/v1/completions", f'{{"prompt": "{MARKER}{tail}'.encode())
        err = error_of(status, data, 400)
        assert MARKER.encode() not in data, data
        messages.append(err["message"])
    assert messages[0] == messages[1], f"the message is not a fixed text: {messages}"

    for body in (f'{{"prompt": "{MARKER}"}} {MARKER}',           # trailing garbage
                 f"{{'prompt': '{MARKER}'}}",                     # single quotes
                 f'{{"prompt": {MARKER}}}',                       # bare word
                 f'{{"prompt": "a", "max_tokens": 4,, "{MARKER}": 1}}',
                 "",                                              # empty body
                 f'["{MARKER}"]', f'"{MARKER}"', "null", "42"):   # JSON, but not an object
        status, _, data = raw_post(srv, "/v1/completions", body.encode())
        error_of(status, data, 400)
        assert MARKER.encode() not in data, (body, data)
    assert_healthy(srv)


def test_deeply_nested_json_is_400(tiny_server):
    srv = tiny_server
    for body in ("[" * 200000 + "]" * 200000,
                 '{"prompt": "x", "user": ' + '{"a":' * 100000 + "1" + "}" * 100000 + "}"):
        status, _, data = raw_post(srv, "/v1/completions", body.encode())
        error_of(status, data, 400)
        assert_healthy(srv)


@pytest.mark.parametrize("bad", [b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82",
                                 b"\xf4\x90\x80\x80"],
                         ids=["ff-fe", "overlong", "surrogate", "truncated", "above-10ffff"])
def test_invalid_utf8_is_400_and_not_echoed(tiny_server, bad):
    srv = tiny_server
    body = b'{"prompt": "' + MARKER.encode() + b" " + bad + b' end", "max_tokens": 4}'
    status, _, data = raw_post(srv, "/v1/completions", body)
    error_of(status, data, 400)
    assert MARKER.encode() not in data and bad not in data, data
    assert_healthy(srv)


def test_invalid_utf8_in_other_endpoints_is_400(tiny_server):
    srv = tiny_server
    for path, body in (("/tokenize", b'{"text": "' + MARKER.encode() + b'\xff"}'),
                       ("/generate", b'{"prompt": "' + MARKER.encode() + b'\xfe", "max_tokens": 2}'),
                       ("/v1/completions", b'{"prompt": "x", "stop": ["' + MARKER.encode() +
                        b'\xff"], "max_tokens": 2}')):
        status, _, data = raw_post(srv, path, body)
        error_of(status, data, 400)
        assert MARKER.encode() not in data, (path, data)
    assert_healthy(srv)


def test_generated_text_is_valid_utf8_even_when_the_model_emits_stray_bytes(tiny_server):
    # The tiny random Llama samples byte tokens (<0xB9> ...) that do not form characters; the
    # server must still send valid UTF-8 JSON, and stream deltas of whole characters.
    srv = tiny_server
    broken = []
    for seed in range(16):
        body = {"prompt": "The quick brown fox", "max_tokens": 24, "temperature": 0.8, "seed": seed}
        for path in ("/v1/completions", "/generate"):
            for stream in (False, True):
                status, _, data = request(srv, "POST", path, dict(body, stream=stream))
                assert status == 200, data
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError as e:
                    broken.append(f"{path} stream={stream} seed={seed}: {e}")
    assert not broken, f"{len(broken)} responses are not UTF-8:\n" + "\n".join(broken[:6])
    assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 4. wrong types, 6. out of range: 400 naming the field


WRONG_TYPES = [("max_tokens", "ten"), ("stop", 5), ("temperature", "hot"), ("stream", "yes"),
               ("n", "two"), ("seed", "x"), ("logit_bias", [1, 2]), ("top_p", "high"),
               ("prompt", {"a": 1}), ("prompt", 5), ("stop", [1, 2])]


@pytest.mark.parametrize("field,value", WRONG_TYPES,
                         ids=[f"{f}={json.dumps(v)}" for f, v in WRONG_TYPES])
def test_wrong_type_is_400_naming_the_field(tiny_server, field, value):
    body = {"prompt": TINY_PROMPT, "max_tokens": 4, field: value}
    status, _, data = completion(tiny_server, body)
    error_of(status, data, 400, param=field)
    assert_healthy(tiny_server)


def test_chat_messages_of_the_wrong_type_is_400_naming_messages(server):
    # The default model has a chat template, so the only problem is the field's type.
    for messages in ("hi", 5, {"role": "user", "content": "hi"}):
        status, _, data = request(server, "POST", "/v1/chat/completions",
                                  {"messages": messages, "max_tokens": 4})
        error_of(status, data, 400, param="messages")
    status, _, data = request(server, "POST", "/v1/chat/completions",
                              {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
                               "temperature": 0})
    assert status == 200, data
    assert_healthy(server)


OUT_OF_RANGE = [("max_tokens", 0), ("max_tokens", -1), ("max_tokens", 10**12),
                ("max_tokens", 10**30), ("n", 1000), ("n", 0), ("logit_bias", {"999999999": 5}),
                ("logit_bias", {"5": 500}), ("logit_bias", {"-1": 1}), ("temperature", 2.5),
                ("temperature", -0.1), ("top_p", 0), ("top_p", 1.5), ("min_p", 2),
                ("presence_penalty", 3), ("frequency_penalty", -3), ("repetition_penalty", 0),
                ("top_k", -1), ("logprobs", 6), ("stop", [str(i) for i in range(9)])]


@pytest.mark.parametrize("field,value", OUT_OF_RANGE,
                         ids=[f"{f}={json.dumps(v)[:20]}" for f, v in OUT_OF_RANGE])
def test_out_of_range_is_400_naming_the_field(tiny_server, field, value):
    body = {"prompt": TINY_PROMPT, "max_tokens": 4, field: value}
    status, _, data = completion(tiny_server, body)
    error_of(status, data, 400, param=field)
    assert_healthy(tiny_server)


@pytest.mark.parametrize("field,value", [("echo", True), ("best_of", 2), ("suffix", "x")])
def test_unsupported_fields_are_400(tiny_server, field, value):
    status, _, data = completion(tiny_server, {"prompt": TINY_PROMPT, "max_tokens": 4, field: value})
    error_of(status, data, 400)
    assert_healthy(tiny_server)


def test_unknown_fields_are_refused_by_name(tiny_server):
    # A field LPX does not read is never dropped in silence (a typo, or a feature it lacks).
    status, _, data = completion(tiny_server, {"prompt": TINY_PROMPT, "max_tokens": 2,
                                               "temperature": 0, "x_unknown": {"a": [1, None]}})
    err = error_of(status, data, 400, param="x_unknown")
    assert "unrecognized request argument 'x_unknown'" in err["message"]
    # Null fields and those OpenAI itself accepts without effect pass.
    status, _, data = completion(tiny_server, {"prompt": TINY_PROMPT, "max_tokens": 2,
                                               "temperature": None, "user": "u1", "store": False,
                                               "metadata": {"k": "v"}, "service_tier": "auto"})
    assert status == 200, data


# --------------------------------------------------------------------------------------------
# 7. prompts longer than the context


def test_prompt_longer_than_context_is_400_and_harmless():
    with running("--context", "128") as srv:
        long_prompt = " ".join(f"word{i % 50}" for i in range(2000))
        for _ in range(10):
            status, _, data = completion(srv, {"prompt": long_prompt, "max_tokens": 4})
            error_of(status, data, 400)
        for _ in range(3):   # streaming is refused up front as well, with a status
            status, _, data = completion(srv, {"prompt": long_prompt, "max_tokens": 4,
                                               "stream": True})
            error_of(status, data, 400)
        wait_idle(srv, 10)

        status, _, data = request(srv, "POST", "/tokenize", {"text": TINY_PROMPT})
        assert status == 200, data
        count = json.loads(data)["count"]
        assert 0 < count < 16
        # prompt + max_tokens over the context (max_tokens alone is within max_tokens_limit)
        status, _, data = completion(srv, {"prompt": TINY_PROMPT, "max_tokens": 128,
                                           "temperature": 0})
        error_of(status, data, 400)

        status, _, data = completion(srv, {"prompt": TINY_PROMPT, "max_tokens": 128 - count - 8,
                                           "temperature": 0})
        assert status == 200, data
        assert json.loads(data)["choices"][0]["text"]
        wait_idle(srv, 10)
        assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 8. a full queue: 429 with Retry-After


def test_queue_full_is_429_with_retry_after():
    # SmolLM2: 1000 tokens take > 20 s, so the first request surely holds its slot meanwhile.
    with running("--max-sequences", "1", "--set", "transport.max_queued=1", model=MODEL) as srv:
        body = {"prompt": LONG_PROMPT, "max_tokens": 1000, "temperature": 0}
        streams = []
        try:
            first = Stream(srv, body)          # runs; not read, so it holds its slot
            streams.append(first)
            assert first.begin() == 200
            wait_metrics(srv, lambda m: m["lpx_running_sequences"] == 1, 10, "one running")
            second = Stream(srv, body)         # waits in the queue
            streams.append(second)
            wait_metrics(srv, lambda m: m["lpx_queue_depth"] == 1, 10, "one queued")
            refused = []
            for _ in range(2):
                s = Stream(srv, body, timeout=30)
                streams.append(s)
                status = s.begin()
                data = s.resp.read()
                refused.append((status, s.resp.getheader("Retry-After"), data))
            # A non-streaming request is refused the same way.
            status, headers, data = completion(srv, body, timeout=30)
            refused.append((status, headers.get("retry-after"), data))
            for status, retry_after, data in refused:
                error_of(status, data, 429, etype="rate_limit_error")
                assert retry_after is not None and re.fullmatch(r"\d+", retry_after.strip()), \
                    f"429 without a Retry-After of seconds: {retry_after!r}"
        finally:
            for s in streams:
                s.abort()
        wait_idle(srv, 15)
        assert completion_text(srv, {"prompt": TINY_PROMPT, "max_tokens": 8, "temperature": 0})
        assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 9. the request deadline: 504 / an error event


def test_request_timeout_is_504_and_frees_the_slot():
    # SmolLM2 needs > 20 s for these 1000 tokens on a CPU, far beyond the 1 s deadline.
    with running("--set", "transport.request_timeout_s=1", model=MODEL) as srv:
        body = {"prompt": LONG_PROMPT, "max_tokens": 1000, "temperature": 0}
        t0 = time.monotonic()
        status, _, data = completion(srv, body)
        elapsed = time.monotonic() - t0
        error_of(status, data, 504, etype="timeout_error")
        assert 0.9 <= elapsed < 10, f"504 after {elapsed:.1f}s with a 1 s deadline"
        wait_idle(srv, 10)

        t0 = time.monotonic()
        s = Stream(srv, body)
        try:
            status = s.begin()
            if status == 504:   # the deadline passed before the stream started
                error_of(status, s.resp.read(), 504, etype="timeout_error")
            else:
                assert status == 200
                events = list(s.events())
                elapsed = time.monotonic() - t0
                assert len(events) >= 2 and events[-1] == "[DONE]", events[-3:]
                last = json.loads(events[-2])
                assert "error" in last, f"no error event before [DONE]: {events[-3:]}"
                assert last["error"]["type"] == "timeout_error", last
                for key in ("message", "param", "code"):
                    assert key in last["error"], last
                for e in events[:-2]:
                    chunk = json.loads(e)
                    assert "error" not in chunk
                    assert all(c.get("finish_reason") in (None, "") for c in chunk["choices"]), \
                        f"the stream finished normally before the deadline: {chunk}"
                assert elapsed < 10, f"the stream ended {elapsed:.1f}s after a 1 s deadline"
        finally:
            s.abort()
        wait_idle(srv, 10)
        assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 10. clients that go away


def test_disconnect_mid_decode_frees_the_sequence(server):
    wait_idle(server, 30)
    s = Stream(server, {"prompt": LONG_PROMPT, "max_tokens": 1500, "temperature": 0})
    try:
        assert s.begin() == 200
        events = s.events()
        for _ in range(3):
            chunk = json.loads(next(events))
            assert chunk["choices"][0].get("finish_reason") in (None, ""), chunk
        assert metrics(server)["lpx_running_sequences"] == 1
    finally:
        s.abort()
    t0 = time.monotonic()
    wait_idle(server, 6)   # not cancelled, it would run for another 25 s or more
    print(f"idle {time.monotonic() - t0:.2f}s after the disconnect")
    assert_healthy(server)
    assert_log_clean(server)


def test_disconnect_mid_prefill_frees_the_sequence():
    # Engine steps of 32 prompt tokens: "cancelled at the next engine step" is then quick even on
    # a loaded machine, while the whole prefill (~65 steps) and 1000 tokens take far longer.
    with running("--set", "model.batch_tokens=32", model=MODEL) as srv:
        prompt = " ".join(f"item{i % 97} of the list," for i in range(300))   # ~2060 tokens
        payload = json.dumps({"prompt": prompt, "max_tokens": 1000, "temperature": 0}).encode()
        generated = metrics(srv).get("lpx_generated_tokens_total")
        sock = socket.create_connection(addr(srv), timeout=60)
        try:
            sock.sendall(post_raw_head(srv, "/v1/completions", len(payload)) + payload)
            wait_metrics(srv, lambda m: m["lpx_running_sequences"] >= 1, 15, "admitted")
        finally:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        t0 = time.monotonic()
        after = wait_idle(srv, 8)
        print(f"idle {time.monotonic() - t0:.2f}s after the disconnect")
        assert after.get("lpx_generated_tokens_total") == generated, \
            "tokens were generated: the disconnect came after the prefill"
        assert_healthy(srv)
        assert_log_clean(srv)


def test_truncated_and_garbage_requests_are_harmless(tiny_server):
    srv = tiny_server
    # A body cut short: Content-Length promises more than ever arrives.
    sock = socket.create_connection(addr(srv), timeout=30)
    sock.sendall(post_raw_head(srv, "/v1/completions", 5000) + b'{"prompt": "hel')
    time.sleep(0.3)
    sock.close()
    # Garbage that is not HTTP at all.
    for junk in (b"HELLO\r\n\r\n", bytes(range(256)) * 16,
                 b"POST /v1/completions HTTP/1.1\r\nContent-Length: abc\r\n\r\n{}",
                 b"POST /v1/completions HTTP/1.1\r\nContent-Length: -5\r\n\r\n{}",
                 b"POST /v1/completions HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n"
                 b"\r\n{}",
                 b"POST /v1/completions HTTP/1.1\r\nContent-Length: 2\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"):
        sock = socket.create_connection(addr(srv), timeout=30)
        try:
            send_until_answered(sock, junk)
            try:
                status, _, data = read_response(sock)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                status = None   # closing the connection is an answer too
            except http.client.BadStatusLine as e:
                pytest.fail(f"{junk[:40]!r}: not an HTTP answer: {e!r}")
            if status is not None:
                assert 400 <= status < 500, (junk[:40], status, data)
        finally:
            sock.close()
        assert_healthy(srv)
    wait_idle(srv, 10)


def test_pipelined_requests_are_answered_in_order(tiny_server):
    srv = tiny_server
    body = json.dumps({"prompt": TINY_PROMPT, "max_tokens": 3, "temperature": 0}).encode()
    get = f"GET /health HTTP/1.1\r\nHost: {addr(srv)[0]}\r\n\r\n".encode()
    sock = socket.create_connection(addr(srv), timeout=60)
    try:
        sock.sendall(get + post_raw_head(srv, "/v1/completions", len(body)) + body + get +
                     f"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        reader = ResponseReader(sock)
        answers = [reader.read("GET"), reader.read(), reader.read("GET"), reader.read("GET")]
    finally:
        sock.close()
    assert [a[0] for a in answers] == [200, 200, 200, 404], answers
    assert json.loads(answers[0][2]) == {"status": "ok"}
    assert json.loads(answers[1][2])["object"] == "text_completion", answers[1]
    assert json.loads(answers[2][2]) == {"status": "ok"}
    error_of(answers[3][0], answers[3][2], 404, etype="not_found_error")


def test_many_idle_connections_do_not_block_others(tiny_server):
    srv = tiny_server
    idle = []
    try:
        for _ in range(300):
            idle.append(socket.create_connection(addr(srv), timeout=30))
        for s in idle[:100]:     # a third also start a request and stop mid-header
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Le")
        t0 = time.monotonic()
        text = completion_text(srv, {"prompt": TINY_PROMPT, "max_tokens": 4, "temperature": 0},
                               timeout=30)
        assert text and time.monotonic() - t0 < 10
        assert_healthy(srv)
    finally:
        for s in idle:
            s.close()
    assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 11. slowloris


def test_slowloris_is_cut_off_and_others_are_served():
    with running("--set", "transport.header_timeout_s=2") as srv:
        sock = socket.create_connection(addr(srv), timeout=30)
        t0 = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        closed_at = None
        other = {}

        def normal_request():
            t = time.monotonic()
            try:
                other["status"] = completion(srv, {"prompt": TINY_PROMPT, "max_tokens": 4,
                                                   "temperature": 0}, timeout=30)[0]
            except Exception as e:  # noqa: BLE001 - reported below
                other["error"] = repr(e)
            other["seconds"] = time.monotonic() - t

        helper = None
        while time.monotonic() - t0 < 15:
            readable, _, _ = select.select([sock], [], [], 1.0)
            if readable:
                try:
                    data = sock.recv(65536)
                except (ConnectionResetError, OSError):
                    data = b""
                if not data:
                    closed_at = time.monotonic() - t0
                    break
                continue   # e.g. a 408; the connection must still close
            try:
                sock.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                closed_at = time.monotonic() - t0
                break
            if helper is None:
                helper = threading.Thread(target=normal_request)
                helper.start()
        sock.close()
        if helper:
            helper.join(60)
        assert closed_at is not None, "the server kept a slowloris connection open for 15 s"
        assert 1.5 <= closed_at <= 6, f"closed after {closed_at:.1f}s with header_timeout_s=2"
        assert other.get("status") == 200, other
        assert other["seconds"] < 5, other
        assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 12. a hundred concurrent streams, half abandoned


def test_hundred_streams_half_cancelled_are_reproducible_and_leak_nothing():
    with running("--max-sequences", "8", "--set", "transport.max_queued=200") as srv:
        def body(i):
            return {"prompt": "The quick brown fox", "max_tokens": 24, "temperature": 0.8,
                    "seed": i}

        def run_one(i, cancel, results):
            s = None
            try:
                s = Stream(srv, body(i), timeout=180)
                status = s.begin()
                if status != 200:
                    results[i] = ("status", status, s.resp.read()[:300])
                    return
                text, finish = [], None
                for ev in s.events(errors="surrogateescape"):
                    if ev == "[DONE]":
                        results[i] = ("done", "".join(text), finish)
                        return
                    chunk = json.loads(ev)
                    if "error" in chunk:
                        results[i] = ("error", chunk)
                        return
                    for c in chunk["choices"]:
                        text.append(c.get("text", ""))
                        finish = c.get("finish_reason") or finish
                    if cancel:
                        results[i] = ("cancelled",)
                        return
                results[i] = ("eof", "".join(text))
            except Exception as e:  # noqa: BLE001 - reported by the test
                results[i] = ("exception", repr(e))
            finally:
                if s is not None:
                    s.abort()

        # warm up (first-use allocations), then measure
        assert completion_text(srv, dict(body(0), max_tokens=4))
        wait_idle(srv, 10)
        rss_before = metrics(srv)["process_resident_memory_bytes"]

        results = {}
        threads = [threading.Thread(target=run_one, args=(i, i % 2 == 1, results))
                   for i in range(100)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not any(t.is_alive() for t in threads), "streams still running after 300 s"
        bad = {i: r for i, r in results.items()
               if r[0] != ("cancelled" if i % 2 else "done")}
        assert len(results) == 100 and not bad, f"{len(bad)} streams went wrong: " \
            f"{dict(list(bad.items())[:5])}"
        after = wait_idle(srv, 15)
        rss_after = after["process_resident_memory_bytes"]
        assert rss_after <= rss_before + 50 * 2**20, \
            f"RSS grew {(rss_after - rss_before) / 2**20:.1f} MiB"

        alone = {}
        for i in range(0, 100, 2):
            run_one(i, False, alone)
            assert alone[i][0] == "done", alone[i]
        differing = [i for i in range(0, 100, 2) if alone[i][1] != results[i][1]]
        assert not differing, "same seed, different output: " + "; ".join(
            f"seed {i}: {results[i][1]!r} vs {alone[i][1]!r}" for i in differing[:3])
        assert len({results[i][1] for i in range(0, 100, 2)}) > 10, \
            "seeds make no difference: temperature 0.8 is not sampling"
        broken = [(i, r[1]) for i, r in results.items() if r[0] == "done" and
                  any("\udc80" <= ch <= "\udcff" for ch in r[1])]
        assert not broken, f"{len(broken)} streams sent deltas that are not whole UTF-8 " \
            f"characters, e.g. seed {broken[0][0]}: {broken[0][1]!r}"
        wait_idle(srv, 10)
        assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 13. API keys and public binding


def test_api_key_is_required(tmp_path):
    ok_body = {"prompt": TINY_PROMPT, "max_tokens": 2, "temperature": 0}
    with running("--api-key", "sekrit") as srv:
        status, _, data = completion(srv, ok_body)
        error_of(status, data, 401, etype="authentication_error")
        for auth in ("Bearer wrong", "Bearer sekri", "Bearer sekritt", "sekrit", "Basic sekrit",
                     "Bearer ", "Bearer  sekrit x"):
            status, _, data = completion(srv, ok_body, headers={"Authorization": auth})
            error_of(status, data, 401, etype="authentication_error")
        status, _, data = completion(srv, ok_body, headers={"Authorization": "Bearer sekrit"})
        assert status == 200, data
        for path in ("/v1/models", "/metrics"):
            status, _, data = request(srv, "GET", path)
            error_of(status, data, 401, etype="authentication_error")
        status, _, data = request(srv, "GET", "/v1/models",
                                  headers={"Authorization": "Bearer sekrit"})
        assert status == 200, data
        for path in ("/health", "/ready"):
            status, _, data = request(srv, "GET", path)
            assert status == 200, (path, data)

    key_file = tmp_path / "keys"
    key_file.write_text("# the team's keys\n\nalpha-key\nbeta-key\n")
    with running("--api-key-file", str(key_file)) as srv:
        for key in ("alpha-key", "beta-key"):
            status, _, data = completion(srv, ok_body, headers={"Authorization": f"Bearer {key}"})
            assert status == 200, (key, data)
        for auth in (None, "Bearer # the team's keys", "Bearer ", "Bearer gamma-key"):
            status, _, data = completion(srv, ok_body,
                                         headers={"Authorization": auth} if auth else None)
            error_of(status, data, 401, etype="authentication_error")
        assert_healthy(srv)


def test_websocket_key_as_header_or_subprotocol():
    """Browsers cannot set headers on a WebSocket: the key may come as "lpx-api-key.KEY"."""
    body = json.dumps({"prompt": TINY_PROMPT, "max_tokens": 2, "temperature": 0})
    with running("--api-key", "sekrit") as srv:
        url = f"ws://{srv.host}:{srv.port}/v1/ws"

        def exchange(**kwargs):
            ws = websocket.create_connection(url, timeout=60, **kwargs)
            try:
                ws.send(body)
                messages = []
                while not messages or messages[-1] != "[DONE]":
                    messages.append(ws.recv())
                    assert len(messages) < 100, messages
                assert all("error" not in m for m in messages[:-1]), messages
                assert "sekrit" not in str(ws.getheaders()), ws.getheaders()  # never echoed
                return ws.getsubprotocol()
            finally:
                ws.close()

        assert exchange(header=["Authorization: Bearer sekrit"]) is None
        assert exchange(subprotocols=["lpx", "lpx-api-key.sekrit"]) == "lpx"
        # The key is never echoed, so "lpx" must be offered with it (a client fails a handshake
        # that selects none of its offers): a clear 400 instead.
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            websocket.create_connection(url, timeout=60, subprotocols=["lpx-api-key.sekrit"])
        assert refused.value.status_code == 400
        assert b"lpx" in refused.value.resp_body
        for kwargs in ({}, {"subprotocols": ["lpx"]}, {"subprotocols": ["lpx", "lpx-api-key.sekri"]},
                       {"subprotocols": ["lpx-api-key.sekritt"]},
                       {"header": ["Authorization: Bearer wrong"]}):
            with pytest.raises(websocket.WebSocketBadStatusException) as refused:
                websocket.create_connection(url, timeout=60, **kwargs)
            assert refused.value.status_code == 401, kwargs
        # Only /v1/ws takes a key that way.
        status, _, data = request(srv, "GET", "/v1/models",
                                  headers={"Sec-WebSocket-Protocol": "lpx-api-key.sekrit"})
        error_of(status, data, 401, etype="authentication_error")
        assert_healthy(srv)


def test_public_bind_needs_a_key():
    args = [PIPELINE, "serve", "--model", TINY_MODEL, "--port", "0", "--host", "0.0.0.0"]
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("serve --host 0.0.0.0 without a key kept running")
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "key" in done.stderr.lower(), done.stderr
    assert "listening" not in done.stderr

    for extra in (["--set", "transport.allow_public_without_key=true"], ["--api-key", "k"]):
        with running("--host", "0.0.0.0", *extra) as srv:
            assert_healthy(srv)


# --------------------------------------------------------------------------------------------
# 14. CORS


PREFLIGHT = {"Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "authorization, content-type"}


def test_no_cors_headers_by_default(tiny_server):
    origin = {"Origin": "http://example.com"}
    status, headers, _ = request(tiny_server, "OPTIONS", "/v1/completions",
                                 headers=dict(origin, **PREFLIGHT))
    assert "access-control-allow-origin" not in headers, (status, headers)
    status, headers, _ = completion(tiny_server, {"prompt": TINY_PROMPT, "max_tokens": 2},
                                    headers=origin)
    assert status == 200
    assert "access-control-allow-origin" not in headers, headers
    assert_healthy(tiny_server)


def test_cors_allows_only_the_listed_origins():
    with running("--set", 'transport.cors_origins=["http://example.com"]') as srv:
        status, headers, _ = request(srv, "OPTIONS", "/v1/chat/completions",
                                     headers=dict({"Origin": "http://example.com"}, **PREFLIGHT))
        assert status in (200, 204), (status, headers)
        assert headers.get("access-control-allow-origin") == "http://example.com", headers
        methods = [m.strip().upper() for m in
                   headers.get("access-control-allow-methods", "").split(",")]
        assert "POST" in methods, headers
        allowed = [h.strip().lower() for h in
                   headers.get("access-control-allow-headers", "").split(",")]
        assert "authorization" in allowed and ("content-type" in allowed or "*" in allowed), \
            headers

        status, headers, _ = completion(srv, {"prompt": TINY_PROMPT, "max_tokens": 2},
                                        headers={"Origin": "http://example.com"})
        assert status == 200
        assert headers.get("access-control-allow-origin") == "http://example.com", headers

        for other in ("http://evil.example", "http://example.com.evil.example",
                      "https://example.com"):
            status, headers, _ = request(srv, "OPTIONS", "/v1/chat/completions",
                                         headers=dict({"Origin": other}, **PREFLIGHT))
            assert "access-control-allow-origin" not in headers, (other, status, headers)
            status, headers, _ = completion(srv, {"prompt": TINY_PROMPT, "max_tokens": 2},
                                            headers={"Origin": other})
            assert "access-control-allow-origin" not in headers, (other, headers)
        assert_healthy(srv)
