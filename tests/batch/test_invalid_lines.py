"""Lines that are wrong in themselves go straight to failures.jsonl (code invalid_request, with
their line number and id when known) and the job still answers the rest; duplicate ids stop the
job before anything runs."""
import json

from conftest import batch, describe, outcomes, read_json, write_jsonl

LONG_PROMPT = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)


def test_invalid_lines_fail_alone(tmp_path):
    records = [
        {"id": "ok-1", "prompt": "hello"},                                   # 1
        "this is not JSON",                                                 # 2
        {"id": "no-prompt", "max_tokens": 4},                               # 3
        {"id": "tokens-text", "prompt": "hi", "max_tokens": "four"},        # 4
        {"id": "temperature-text", "prompt": "hi", "temperature": "hot"},   # 5
        {"id": "stop-number", "prompt": "hi", "stop": 7},                   # 6
        {"id": "n-two", "prompt": "hi", "n": 2},                            # 7
        {"id": "ok-2", "prompt": "world"},                                  # 8
        "[1, 2, 3]",                                                        # 9
        {"id": "too-long", "prompt": LONG_PROMPT},                          # 10
        {"id": 17, "prompt": "an integer id"},                              # 11
        None,                                                               # 12 (blank)
        {"prompt": "no id: my id is my line number"},                       # 13
        '{"id": "cut-short", "prompt": "hi',                                # 14
    ]
    source = tmp_path / "mixed.jsonl"
    write_jsonl(source, records)
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--context", 64, "--max-tokens", 4)
    assert proc.returncode == 0, describe(proc)   # every input answered or failed

    results, failures = outcomes(run_dir)
    assert sorted(r["id"] for r in results) == ["13", "17", "ok-1", "ok-2"]
    assert all(r["usage"]["completion_tokens"] == 4 for r in results), results

    by_line = {f["line"]: f for f in failures}
    assert len(by_line) == len(failures), "a line failed twice"
    assert sorted(by_line) == [2, 3, 4, 5, 6, 7, 9, 10, 14]
    for f in failures:
        expected = "context_length_exceeded" if f.get("id") == "too-long" else "invalid_request"
        assert f["code"] == expected, f
        assert isinstance(f["error"], str) and f["error"], f
        assert isinstance(f["attempts"], int) and f["attempts"] <= 1, f  # never retried
    known = {3: "no-prompt", 4: "tokens-text", 5: "temperature-text", 6: "stop-number",
             7: "n-two", 10: "too-long"}
    for line, key in known.items():
        assert by_line[line].get("id") == key, by_line[line]
    for line in (2, 9):       # not a JSON object: no id to report
        assert "id" not in by_line[line] or by_line[line]["id"] is None, by_line[line]
    assert "JSON" in by_line[2]["error"]
    assert "prompt" in by_line[3]["error"] and "messages" in by_line[3]["error"]
    assert "max_tokens" in by_line[4]["error"]
    assert "temperature" in by_line[5]["error"]
    assert "'n'" in by_line[7]["error"]
    assert "context" in by_line[10]["error"] and "64" in by_line[10]["error"], by_line[10]

    summary = read_json(run_dir / "summary.json")
    assert summary["status"] == "complete"
    assert summary["counts"] == {"inputs": 13, "ok": 4, "failed": 9, "remaining": 0}


def test_prompt_longer_than_context_is_not_retried(tmp_path):
    """Deterministic failures are written at once, whatever max_attempts says."""
    source = tmp_path / "long.jsonl"
    write_jsonl(source, [{"id": "long", "prompt": LONG_PROMPT}, {"id": "short", "prompt": "hi"}])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--context", 64, "--max-tokens", 4,
                 "--set", "transport.max_attempts=5", "--set", "transport.retry_backoff_ms=10")
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(run_dir)
    assert [r["id"] for r in results] == ["short"]
    assert len(failures) == 1 and failures[0]["id"] == "long", failures
    assert failures[0]["code"] == "context_length_exceeded" and failures[0]["attempts"] == 1, failures
    assert failures[0]["param"] == "prompt", failures  # the engine's field, not a parsed message
    assert "retry" not in (run_dir / "run.log").read_text()


def test_duplicate_ids_refuse_the_job(tmp_path):
    source = tmp_path / "dup.jsonl"
    write_jsonl(source, [
        {"id": "a", "prompt": "x"},
        {"id": "b", "prompt": "x"},
        None,
        {"id": "c", "prompt": "x"},
        {"id": "b", "prompt": "y"},
    ])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir)
    assert proc.returncode == 1, describe(proc)
    message = proc.stderr
    assert "duplicate" in message and "'b'" in message, message
    assert "lines 2 and 5" in message, message
    assert "'a'" not in message and "'c'" not in message, message
    assert not run_dir.exists() or not any(run_dir.iterdir()), list(run_dir.iterdir())


def test_integer_id_equal_to_a_line_number_is_a_duplicate(tmp_path):
    """An integer id is its decimal text, and a line without id is its line number: 2 == "2"."""
    source = tmp_path / "dup.jsonl"
    source.write_text("\n".join(json.dumps(x) for x in [
        {"id": "a", "prompt": "x"}, {"prompt": "x"}, {"id": 2, "prompt": "y"}]) + "\n")
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir)
    assert proc.returncode == 1, describe(proc)
    assert "'2'" in proc.stderr and "lines 2 and 3" in proc.stderr, proc.stderr
    assert not run_dir.exists() or not any(run_dir.iterdir())


def test_missing_input_file(tmp_path):
    run_dir = tmp_path / "run"
    proc = batch("--input", tmp_path / "nowhere.jsonl", "--run-dir", run_dir)
    assert proc.returncode == 1, describe(proc)
    assert "nowhere.jsonl" in proc.stderr
    assert not run_dir.exists()
