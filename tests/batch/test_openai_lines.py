"""Lines in the OpenAI Batch API format (custom_id, method, url, body) get OpenAI batch output
lines back, in results.jsonl or failures.jsonl."""
import json

import pytest

from conftest import (PIPELINE, ROOT, Job, _run, assert_exactly_once, batch, describe, outcomes, read_json,
                      write_jsonl)


def _request(custom_id, url="/v1/completions", method="POST", **body):
    return {"custom_id": custom_id, "method": method, "url": url, "body": body}


def test_completions_lines_get_batch_output_lines(tmp_path):
    source = tmp_path / "openai.jsonl"
    expected = write_jsonl(source, [
        _request("r-1", prompt="Hello there", max_tokens=6),
        _request("r-2", prompt="Once upon a time", max_tokens=3),
        _request("r-3", prompt="Default length"),                 # takes --max-tokens
    ])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 5)
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(run_dir)
    assert failures == []
    assert sorted(r["custom_id"] for r in results) == ["r-1", "r-2", "r-3"]
    assert_exactly_once(run_dir, expected)
    batch_ids = set()
    for r in results:
        assert r["id"].startswith("batch_req_"), r
        batch_ids.add(r["id"])
        assert r["error"] is None, r
        response = r["response"]
        assert response["status_code"] == 200, r
        assert response["request_id"], r
        body = response["body"]
        assert body["object"] == "text_completion", body
        choice = body["choices"][0]
        assert isinstance(choice["text"], str) and choice["text"], body
        assert choice["finish_reason"] == "length", body
        limit = {"r-1": 6, "r-2": 3, "r-3": 5}[r["custom_id"]]
        assert body["usage"]["completion_tokens"] == limit, body
    assert len(batch_ids) == 3


def test_openai_lines_and_plain_lines_share_a_job(tmp_path):
    """The same greedy prompt gives the same text as a plain line and as an OpenAI line."""
    source = tmp_path / "mixed.jsonl"
    write_jsonl(source, [
        {"id": "plain", "prompt": "The same prompt", "max_tokens": 6},
        _request("openai", prompt="The same prompt", max_tokens=6),
    ])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir)
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(run_dir)
    assert failures == []
    plain = next(r for r in results if r.get("id") == "plain")
    openai = next(r for r in results if r.get("custom_id") == "openai")
    assert openai["response"]["body"]["choices"][0]["text"] == plain["text"]


def test_failing_openai_lines_get_error_objects(tmp_path):
    source = tmp_path / "openai.jsonl"
    expected = write_jsonl(source, [
        _request("ok", prompt="Hello", max_tokens=4),
        _request("chat", url="/v1/chat/completions",
                 messages=[{"role": "user", "content": "hi"}], max_tokens=4),  # no template
        _request("embeddings", url="/v1/embeddings", input="x"),
        _request("get", method="GET", prompt="Hello", max_tokens=4),
        _request("bad-param", prompt="Hello", max_tokens="four"),
    ])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    results, failures = outcomes(run_dir)
    assert [r["custom_id"] for r in results] == ["ok"]
    by_id = {f["custom_id"]: f for f in failures}
    assert set(by_id) == {"chat", "embeddings", "get", "bad-param"}
    for key, f in by_id.items():
        assert f["response"] is None, f
        assert f["id"].startswith("batch_req_"), f
        assert f["error"]["code"] == "invalid_request", f
        assert f["error"]["message"], f
        assert f["line"] == expected[key], f
    assert "chat template" in by_id["chat"]["error"]["message"]
    assert "url" in by_id["embeddings"]["error"]["message"]
    assert "method" in by_id["get"]["error"]["message"]
    assert "max_tokens" in by_id["bad-param"]["error"]["message"]
    assert read_json(run_dir / "summary.json")["counts"]["failed"] == 4


def test_openai_lines_resume_exactly_once(tmp_path):
    source = tmp_path / "openai.jsonl"
    expected = write_jsonl(source, [_request(f"c{i}", prompt=f"Item {i}: say something",
                                             max_tokens=16) for i in range(300)])
    run_dir = tmp_path / "run"
    job = Job(tmp_path / "stderr.txt", "--input", source, "--run-dir", run_dir)
    job.wait_for_lines(run_dir, 60)
    job.kill9()
    proc = batch("--input", source, "--run-dir", run_dir, "--resume")
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)


def test_duplicate_custom_ids_refuse_the_job(tmp_path):
    source = tmp_path / "dup.jsonl"
    write_jsonl(source, [_request("r1", prompt="x"), {"id": "r0", "prompt": "y"},
                         _request("r1", prompt="z")])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir)
    assert proc.returncode == 1, describe(proc)
    assert "'r1'" in proc.stderr and "lines 1 and 3" in proc.stderr, proc.stderr
    assert not run_dir.exists() or not any(run_dir.iterdir())


def test_chat_lines_with_tools_get_tool_calls(tmp_path):
    """A chat line that requires a tool call on the default model gets message.tool_calls whose
    arguments are the function's JSON (the same parser and grammar as the server's)."""
    model = ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
    if not model.exists():
        pytest.skip(f"{model} is missing (tools/setup.sh fetches it)")
    weather = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}},
               "required": ["city"], "additionalProperties": False}
    source = tmp_path / "tools.jsonl"
    write_jsonl(source, [_request(
        "t-1", url="/v1/chat/completions", max_tokens=60, temperature=0,
        messages=[{"role": "user", "content": "What is the weather in Oslo?"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": weather}}],
        tool_choice="required", parallel_tool_calls=False)])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, model=model)
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(run_dir)
    assert failures == []
    choice = results[0]["response"]["body"]["choices"][0]
    assert choice["finish_reason"] == "tool_calls", choice
    call = choice["message"]["tool_calls"][0]
    assert call["id"].startswith("call_") and call["function"]["name"] == "get_weather"
    arguments = json.loads(call["function"]["arguments"])
    assert set(arguments) == {"city"} and isinstance(arguments["city"], str) and len(arguments["city"]) <= 20


def test_lines_choose_lora_adapters_by_model(tmp_path):
    """`batch --adapter NAME=FILE`: a line whose model is "MODEL:NAME" runs with the adapter, other
    model names run the model alone, and an adapter the model lacks fails that line only."""
    base = tmp_path / "qwen3.gguf"
    convert = _run([PIPELINE, "convert", str(ROOT / "tests/fixtures/hf/qwen3"), "-o", str(base)], 120)
    assert convert.returncode == 0, describe(convert)
    adapter = ROOT / "tests/fixtures/lora/qwen3-lora-r4.gguf"
    source = tmp_path / "adapters.jsonl"
    lines = [_request(f"{i}-{model}", model=model, prompt="Hello there", max_tokens=6, logprobs=1)
             for i in range(2) for model in ("qwen3", "qwen3:full", "gpt-4o-mini")]
    expected = write_jsonl(source, lines + [_request("nope", model="qwen3:nope", prompt="Hi", max_tokens=2)])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--adapter", f"full={adapter}", model=base)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    results, failures = outcomes(run_dir)
    assert [f["custom_id"] for f in failures] == ["nope"], failures
    assert "no LoRA adapter 'nope'" in failures[0]["error"]["message"], failures[0]
    logprobs = {r["custom_id"]: r["response"]["body"]["choices"][0]["logprobs"]["token_logprobs"] for r in results}
    for i in range(2):
        assert logprobs[f"{i}-gpt-4o-mini"] == logprobs[f"{i}-qwen3"]
        assert logprobs[f"{i}-qwen3:full"] != logprobs[f"{i}-qwen3"], "the adapter changes the answer"
        assert logprobs[f"{i}-qwen3:full"] == logprobs["0-qwen3:full"]
