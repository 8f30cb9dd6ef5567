"""The server's lifecycle (docs/http-server.md): draining on SIGTERM, and answers for paths and
methods it does not serve.

The drain tests use SmolLM2-135M (its greedy answer to "Once upon a time" runs for well over 1500
tokens at ~50 tokens/s on a CPU core), so a stream surely outlives the checks made meanwhile.
"""
import contextlib
import http.client
import json
import signal
import socket
import time

import pytest

from conftest import addr, request, start_server

LONG_PROMPT = "Once upon a time"


def error_of(status, body, expect_status, etype):
    assert status == expect_status, f"expected {expect_status}, got {status}: {body[:500]!r}"
    obj = json.loads(body)
    err = obj["error"]
    for key in ("message", "type", "param", "code"):
        assert key in err, obj
    assert isinstance(err["message"], str) and err["message"], obj
    assert err["type"] == etype, obj
    return err


class Stream:
    """A streaming completion over a raw socket."""

    def __init__(self, srv, body, timeout=120):
        payload = json.dumps(dict(body, stream=True)).encode()
        self.sock = socket.create_connection(addr(srv), timeout=timeout)
        self.sock.sendall((f"POST /v1/completions HTTP/1.1\r\nHost: {addr(srv)[0]}\r\n"
                           f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                           "\r\n").encode() + payload)
        self.resp = http.client.HTTPResponse(self.sock, method="POST")
        self.resp.begin()
        self.status = self.resp.status
        self.events = []           # every data payload so far

    def next_event(self):
        """The next event's data, or None when the server closed the stream."""
        data = []
        while True:
            line = self.resp.readline()
            if not line:
                return "\n".join(data) if data else None
            line = line.rstrip(b"\r\n").decode("utf-8", "replace")
            if line == "" and data:
                self.events.append("\n".join(data))
                return self.events[-1]
            if line.startswith("data:"):
                data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])

    def read_to_end(self):
        """Reads until [DONE] or the end of the connection; True when [DONE] came."""
        while True:
            ev = self.next_event()
            if ev is None:
                return False
            if ev == "[DONE]":
                return True

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.resp.close()


def chunks(events):
    return [json.loads(e) for e in events if e != "[DONE]"]


def finish_reasons(events):
    return [c.get("finish_reason") for ch in chunks(events) if "choices" in ch
            for c in ch["choices"] if c.get("finish_reason")]


# --------------------------------------------------------------------------------------------
# 15. SIGTERM: drain


def test_sigterm_drains_in_flight_streams_and_exits_0():
    srv = start_server()
    streams = []
    try:
        keep_alive = http.client.HTTPConnection(*addr(srv), timeout=30)
        keep_alive.request("GET", "/health")
        resp = keep_alive.getresponse()
        assert resp.status == 200
        resp.read()
        can_ask_ready = not resp.will_close

        # ~300 tokens each: several seconds, well inside the 30 s drain timeout
        for _ in range(2):
            s = Stream(srv, {"prompt": LONG_PROMPT, "max_tokens": 300, "temperature": 0})
            assert s.status == 200
            first = json.loads(s.next_event())
            assert first["choices"][0].get("finish_reason") in (None, ""), first
            streams.append(s)

        srv.process.send_signal(signal.SIGTERM)
        t_signal = time.monotonic()

        # /ready on the connection opened before the signal: 503 draining (once the signal is seen)
        ready_checked = False
        try:
            if not can_ask_ready:
                raise http.client.CannotSendRequest("the server does not keep connections alive")
            deadline = time.monotonic() + 5
            while True:
                keep_alive.request("GET", "/ready")
                resp = keep_alive.getresponse()
                body = resp.read()
                if resp.status == 503:
                    assert json.loads(body) == {"status": "draining"}, body
                    ready_checked = True
                    break
                assert resp.status == 200, (resp.status, body)
                assert time.monotonic() < deadline, "/ready still 200 5 s after SIGTERM"
                time.sleep(0.05)
        except (http.client.RemoteDisconnected, ConnectionError, http.client.CannotSendRequest,
                http.client.BadStatusLine):
            pass   # the server closed idle keep-alive connections: no way to ask it
        finally:
            keep_alive.close()
        # Let the server close its acceptor (a connection still in the kernel's backlog then may
        # be reset, which is neither a refusal nor an answer).
        time.sleep(0.5 if ready_checked else 1.5)

        # New connections: refused, or answered 503.
        try:
            status, _, body = request(srv, "POST", "/v1/completions",
                                      {"prompt": LONG_PROMPT, "max_tokens": 2}, timeout=10)
        except ConnectionRefusedError:
            pass
        else:
            error_of(status, body, 503, "server_error")
        try:
            status, _, body = request(srv, "GET", "/health", timeout=10)
        except ConnectionRefusedError:
            pass
        else:
            assert status in (200, 503), (status, body)

        # The two streams were not cut short.
        for s in streams:
            assert s.read_to_end(), f"stream ended without [DONE]: {s.events[-3:]}"
            assert not any("error" in c for c in chunks(s.events)), s.events[-3:]
            assert finish_reasons(s.events) == ["length"], s.events[-3:]
            text = "".join(c.get("text", "") for ch in chunks(s.events)
                           for c in ch.get("choices", []))
            assert text
        rc = srv.process.wait(60)
        assert rc == 0, srv.log()
        assert time.monotonic() - t_signal < 40
        if not ready_checked:
            pytest.skip("drain itself passed; /ready could not be asked on a kept-alive "
                        "connection (the server closed it)")
    finally:
        for s in streams:
            s.close()
        srv.stop(signal.SIGKILL)


def test_drain_timeout_cancels_long_streams_and_exits_0():
    srv = start_server("--set", "transport.drain_timeout_s=1")
    s = None
    try:
        # 2000 tokens: > 40 s, far beyond the 1 s drain
        s = Stream(srv, {"prompt": LONG_PROMPT, "max_tokens": 2000, "temperature": 0}, timeout=20)
        assert s.status == 200
        s.next_event()
        srv.process.send_signal(signal.SIGTERM)
        t_signal = time.monotonic()
        try:
            rc = srv.process.wait(6)
        except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired
            pytest.fail(f"still running 6 s after SIGTERM with drain_timeout_s=1\n{srv.log()}")
        took = time.monotonic() - t_signal
        assert rc == 0, srv.log()
        assert took < 5, f"exit {took:.1f}s after SIGTERM with drain_timeout_s=1"

        # The stream ends: an error event then [DONE], or just closed; never a normal finish.
        try:
            done = s.read_to_end()
        except (ConnectionError, http.client.IncompleteRead):
            done = False
        assert "length" not in finish_reasons(s.events), "the stream finished within 1 s?"
        errors = [c for c in chunks(s.events) if "error" in c]
        if done:
            assert errors, f"[DONE] without an error event: {s.events[-3:]}"
        if errors:
            assert errors[-1]["error"].get("type"), errors[-1]
            assert done, "an error event not followed by [DONE]"
    finally:
        if s:
            s.close()
        srv.stop(signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# 16. unknown paths and wrong methods


def test_unknown_path_is_404(tiny_server):
    for method, path in (("GET", "/nope"), ("POST", "/v1/nope"), ("GET", "/v1/completions/x"),
                         ("GET", "/../../etc/passwd")):
        status, _, body = request(tiny_server, method, path,
                                  body={} if method == "POST" else None)
        error_of(status, body, 404, "not_found_error")
    status, _, body = request(tiny_server, "GET", "/health")
    assert status == 200, body


def test_wrong_method_is_405(tiny_server):
    for method, path in (("GET", "/v1/completions"), ("GET", "/v1/chat/completions"),
                         ("DELETE", "/v1/completions"), ("POST", "/health"),
                         ("PUT", "/v1/models")):
        status, _, body = request(tiny_server, method, path)
        error_of(status, body, 405, "invalid_request_error")
    status, _, body = request(tiny_server, "GET", "/health")
    assert status == 200, body
