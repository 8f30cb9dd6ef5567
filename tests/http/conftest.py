"""Shared fixtures for the HTTP server tests: start `lpx-pipeline serve` on an ephemeral port.

Environment (CTest sets these; defaults suit a run from the repository root):
  LPX_PIPELINE    the lpx-pipeline binary           (build/bin/lpx-pipeline)
  LPX_MODEL       the default model                 (models/SmolLM2-135M-Instruct.Q4_1.gguf)
  LPX_TINY_MODEL  the shared tiny Llama (no template)(../shared/models/llama-2-tiny-random.gguf)
"""
import contextlib
import http.client
import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PIPELINE = os.environ.get("LPX_PIPELINE", str(ROOT / "build/bin/lpx-pipeline"))
MODEL = os.environ.get("LPX_MODEL", str(ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"))
TINY_MODEL = os.environ.get("LPX_TINY_MODEL",
                            str(ROOT.parent / "shared/models/llama-2-tiny-random.gguf"))

LISTENING = re.compile(r"http: listening on (http://[^\s]+)")


class Server:
    """A running `lpx-pipeline serve`. `url` is e.g. http://127.0.0.1:43123; `log()` is stderr so far."""

    def __init__(self, args, startup_timeout=60, command="serve"):
        self.args = [PIPELINE, "--log-level", "info", command] + list(args)
        self.process = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, errors="replace")
        self._lines = []
        self._ready = threading.Event()
        self.url = None
        threading.Thread(target=self._read, args=(self.process.stderr,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True).start()
        if not self._ready.wait(startup_timeout) or self.url is None:
            self.stop()
            raise RuntimeError("server did not start:\n" + self.log())
        m = re.match(r"http://([^:/]+):(\d+)", self.url)
        self.host, self.port = m.group(1), int(m.group(2))

    def _read(self, stream):
        for line in stream:
            self._lines.append(line)
            m = LISTENING.search(line)
            if m and self.url is None:
                self.url = m.group(1)
                self._ready.set()
        self._ready.set()  # EOF: the process ended

    def _drain(self, stream):
        for _ in stream:
            pass

    def log(self):
        return "".join(self._lines)

    def alive(self):
        return self.process.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Signals the server and returns its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def addr(srv):
    host = srv.host
    if host in ("0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    return host, srv.port


def request(srv, method, path, body=None, headers=None, timeout=60):
    """One request on a fresh connection: (status, {lower-case header: value}, body bytes)."""
    conn = http.client.HTTPConnection(*addr(srv), timeout=timeout)
    try:
        hdrs = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def start_server(*args, model=None, **kwargs):
    """Starts a server on an ephemeral port; extra args go to `serve` (e.g. "--set", "transport.max_queued=2")."""
    model = model or MODEL
    if not pathlib.Path(model).exists():
        pytest.skip(f"{model} is missing (tools/setup.sh installs the default model)")
    return Server(["--model", model, "--port", "0", *args], **kwargs)


@contextlib.contextmanager
def running(*args, model=TINY_MODEL):
    """A server of its own for one test (the tiny model unless told); it must exit 0 on SIGTERM."""
    srv = start_server(*args, model=model)
    try:
        yield srv
    except BaseException:
        srv.stop()
        raise
    rc = srv.stop()
    assert rc == 0, f"exit status {rc} on SIGTERM\n{srv.log()}"


@pytest.fixture(scope="module")
def server():
    """One server on the default model for a whole test module; must exit 0 on SIGTERM."""
    s = start_server()
    yield s
    assert s.stop() == 0, s.log()


@pytest.fixture(scope="module")
def tiny_server():
    """A server on the shared tiny Llama (fast, no chat template)."""
    s = start_server(model=TINY_MODEL)
    yield s
    assert s.stop() == 0, s.log()


def expect_400(call, param):
    """Runs an openai-client call that must be refused: a 400 whose `param` is `param`; returns
    its message."""
    import openai
    with pytest.raises(openai.BadRequestError) as info:
        call()
    error = info.value.response.json()["error"]
    assert error["param"] == param, error
    return error["message"]
