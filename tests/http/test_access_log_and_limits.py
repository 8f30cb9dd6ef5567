"""The access log (one line per request, X-Request-Id honoured and echoed) and per-key limits
(requests and tokens per minute: 429 with Retry-After, which the official client waits out)."""
import json
import re
import time

import openai
import pytest

from conftest import request, running


def access_lines(srv, expected, timeout=10):
    """The server's access-log lines once there are `expected` of them."""
    deadline = time.time() + timeout
    while True:
        lines = [line for line in srv.log().splitlines() if "access: " in line or '"event":"access"' in line]
        if len(lines) >= expected or time.time() > deadline:
            return lines
        time.sleep(0.05)


def fields(line):
    """The key=value pairs of a text access line."""
    return dict(re.findall(r"(\w+)=(\S+)", line.split("access: ", 1)[1]))


def key_file(tmp_path, text):
    path = tmp_path / "keys"
    path.write_text(text)
    return str(path)


def completion(srv, key, max_tokens=4, headers=None):
    hdrs = {"Authorization": "Bearer " + key, **(headers or {})}
    return request(srv, "POST", "/v1/completions",
                   {"prompt": "Hello there", "max_tokens": max_tokens, "temperature": 0}, hdrs)


def test_every_request_gets_one_line_with_its_id_key_tokens_and_status(tmp_path):
    keys = key_file(tmp_path, "# comment\nsekrit-alice id=alice\nsekrit-bob\n")
    with running("--api-key-file", keys) as srv:
        status, headers, body = completion(srv, "sekrit-alice", headers={"X-Request-Id": "trace-42"})
        assert status == 200, body
        assert headers["x-request-id"] == "trace-42"
        usage = json.loads(body)["usage"]
        status, headers, _ = completion(srv, "sekrit-bob", headers={"X-Request-Id": "bad id!"})
        assert status == 200
        generated = headers["x-request-id"]
        assert re.fullmatch(r"[0-9a-f]{16}", generated), generated
        status, _, _ = request(srv, "GET", "/v1/models", headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, _, _ = request(srv, "GET", "/health")
        assert status == 200

        lines = access_lines(srv, 4)
        assert len(lines) == 4, srv.log()
        first, second, refused, health = (fields(line) for line in lines)
        assert first["id"] == "trace-42"
        assert first["key"] == "alice"
        assert first["model"] == "llama-2-tiny-random"
        assert first["endpoint"] == "/v1/completions"
        assert first["method"] == "POST"
        assert first["status"] == "200"
        assert int(first["prompt_tokens"]) == usage["prompt_tokens"]
        assert int(first["completion_tokens"]) == usage["completion_tokens"] == 4
        assert first["finish"] == "length"
        assert float(first["ttft_ms"]) > 0 and float(first["duration_ms"]) >= float(first["ttft_ms"])
        assert first["client"].startswith("127.0.0.1:")
        assert second["id"] == generated
        assert re.fullmatch(r"key-[0-9a-f]{8}", second["key"]), second  # never the key itself
        assert refused["status"] == "401" and refused["key"] == "-" and "prompt_tokens" not in refused
        assert health["endpoint"] == "/health" and health["status"] == "200"
        assert "sekrit" not in srv.log()


def test_streamed_requests_are_logged_when_the_stream_ends_and_json_lines_parse(tmp_path):
    with running("--set", "transport.access_log=\"json\"") as srv:
        client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0)
        stream = client.completions.create(model="m", prompt="Hello", max_tokens=6, stream=True,
                                           extra_headers={"X-Request-Id": "s-1"})
        assert len("".join(chunk.choices[0].text for chunk in stream if chunk.choices)) > 0
        lines = access_lines(srv, 1)
        assert len(lines) == 1, srv.log()
        record = json.loads(lines[0][lines[0].index("{"):])
        assert record["request_id"] == "s-1"
        assert record["status"] == 200
        assert record["completion_tokens"] == 6
        assert record["key_id"] is None
        assert record["finish_reason"] == "length"


def test_a_key_over_its_requests_per_minute_gets_429_with_retry_after(tmp_path):
    keys = key_file(tmp_path, "limited id=slow rpm=2\nfree id=free\n")
    with running("--api-key-file", keys) as srv:
        assert completion(srv, "limited")[0] == 200
        assert completion(srv, "limited")[0] == 200
        status, headers, body = completion(srv, "limited")
        assert status == 429, body
        error = json.loads(body)["error"]
        assert error["type"] == "rate_limit_error" and error["code"] == "rate_limit_exceeded"
        assert "requests" in error["message"] and "slow" in error["message"]
        assert 29 <= int(headers["retry-after"]) <= 30  # a request every 30 s
        assert 28000 < int(headers["retry-after-ms"]) <= 30001
        assert completion(srv, "free")[0] == 200, "other keys are not limited"
        statuses = [fields(line)["status"] for line in access_lines(srv, 4)]
        assert statuses == ["200", "200", "429", "200"], srv.log()


def test_the_official_client_waits_out_a_token_limit(tmp_path):
    # 600 tokens a minute (10 a second); one 650-token request leaves the key ~60 below zero.
    keys = key_file(tmp_path, "tokens id=tok tpm=600\n")
    with running("--api-key-file", keys, "--context", "1024") as srv:
        impatient = openai.OpenAI(base_url=srv.url + "/v1", api_key="tokens", max_retries=0)
        big = impatient.completions.create(model="m", prompt="Hello", max_tokens=650, temperature=0)
        assert big.usage.prompt_tokens + big.usage.completion_tokens > 600
        with pytest.raises(openai.RateLimitError) as refused:
            impatient.completions.create(model="m", prompt="Hello", max_tokens=2)
        wait_ms = int(refused.value.response.headers["retry-after-ms"])
        assert 1000 < wait_ms < 12000, wait_ms

        patient = openai.OpenAI(base_url=srv.url + "/v1", api_key="tokens", max_retries=2)
        start = time.time()
        answer = patient.completions.create(model="m", prompt="Hello", max_tokens=2)
        assert answer.usage.completion_tokens == 2
        assert time.time() - start >= wait_ms / 1000 - 1.5, "it retried after the server's wait"
        statuses = [fields(line)["status"] for line in access_lines(srv, 4)]
        assert statuses[:2] == ["200", "429"] and statuses[-1] == "200", srv.log()


def test_n_choices_count_their_prompt_once_as_usage_does(tmp_path):
    with running() as srv:
        status, _, body = request(srv, "POST", "/v1/completions",
                                  {"prompt": "Hello there", "max_tokens": 3, "n": 3, "seed": 1})
        assert status == 200, body
        usage = json.loads(body)["usage"]
        line = fields(access_lines(srv, 1)[0])
        assert int(line["prompt_tokens"]) == usage["prompt_tokens"]
        assert int(line["completion_tokens"]) == usage["completion_tokens"] == 9


def test_metrics_may_be_served_without_a_key_and_nothing_else_is(tmp_path):
    keys = key_file(tmp_path, "sekrit id=ops\n")
    with running("--api-key-file", keys, "--set", "transport.metrics_without_key=true") as srv:
        status, _, body = request(srv, "GET", "/metrics")
        assert status == 200 and b"lpx_up 1" in body
        assert request(srv, "GET", "/v1/models")[0] == 401
    with running("--api-key-file", keys) as srv:
        assert request(srv, "GET", "/metrics")[0] == 401


def test_two_keys_with_one_id_are_refused_at_start(tmp_path):
    import subprocess
    from conftest import PIPELINE, TINY_MODEL
    keys = key_file(tmp_path, "one id=ops\ntwo id=ops\n")
    result = subprocess.run([PIPELINE, "serve", "--model", TINY_MODEL, "--port", "0",
                             "--api-key-file", keys], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"api_key_file {keys}:2: id 'ops' names an earlier key too" in result.stderr
    assert "one" not in result.stderr.split("id 'ops'")[0].split(keys)[-1]


def test_a_websocket_upgrade_is_logged_when_its_handshake_has_ended():
    import base64
    import os
    import socket
    with running() as srv:
        def upgrade(key_header):
            with socket.create_connection((srv.host, srv.port), timeout=10) as s:
                s.sendall(("GET /v1/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                           "Sec-WebSocket-Version: 13\r\n" + key_header + "\r\n").encode())
                head = s.recv(4096).decode(errors="replace")
                return head.split("\r\n", 1)[0]
        good = upgrade("Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode() + "\r\n")
        assert " 101 " in good, good
        bad = upgrade("")  # no Sec-WebSocket-Key: the handshake fails
        assert " 400 " in bad, bad
        lines = [fields(line) for line in access_lines(srv, 2) if "endpoint=/v1/ws" in line]
        assert sorted(f["status"] for f in lines) == ["101", "400"], lines
