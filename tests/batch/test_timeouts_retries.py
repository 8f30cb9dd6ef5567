"""Per-attempt timeouts: a timed-out attempt is retried after retry_backoff_ms (doubling) up to
max_attempts, then written to failures.jsonl with code "timeout" and its attempt count."""
import re

from conftest import batch, describe, outcomes, read_json, write_jsonl


def _long_job(tmp_path, count=4):
    source = tmp_path / "long.jsonl"
    expected = write_jsonl(source, [{"id": f"t{i}", "prompt": f"Tell me a long story, part {i}",
                                     "max_tokens": 2000} for i in range(count)])
    return source, expected


def test_timeouts_fail_after_max_attempts(tmp_path):
    source, expected = _long_job(tmp_path)
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir,
                 "--set", "transport.item_timeout_s=0.001",
                 "--set", "transport.max_attempts=2",
                 "--set", "transport.retry_backoff_ms=10")
    assert proc.returncode == 0, describe(proc)   # every input failed: the job still completed
    results, failures = outcomes(run_dir)
    assert results == []
    assert sorted(f["id"] for f in failures) == sorted(expected)
    for f in failures:
        assert f["code"] == "timeout", f
        assert f["attempts"] == 2, f
        assert f["line"] == expected[f["id"]], f
        assert "timed out" in f["error"], f

    log = (run_dir / "run.log").read_text()
    for key, line in expected.items():
        assert re.search(rf"input '{key}' \(line {line}\), attempt 1: timed out.*retrying in 10 ms",
                         log), log
        assert f"input '{key}' (line {line}), attempt 2" not in log, log   # no third attempt
    summary = read_json(run_dir / "summary.json")
    assert summary["status"] == "complete"
    assert summary["counts"] == {"inputs": 4, "ok": 0, "failed": 4, "remaining": 0}
    assert summary["this_run"]["retries"] == 4


def test_backoff_doubles(tmp_path):
    source, expected = _long_job(tmp_path, count=1)
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir,
                 "--set", "transport.item_timeout_s=0.001",
                 "--set", "transport.max_attempts=3",
                 "--set", "transport.retry_backoff_ms=10")
    assert proc.returncode == 0, describe(proc)
    _, failures = outcomes(run_dir)
    assert len(failures) == 1 and failures[0]["attempts"] == 3, failures
    log = (run_dir / "run.log").read_text()
    assert re.search(r"attempt 1: timed out.*retrying in 10 ms", log), log
    assert re.search(r"attempt 2: timed out.*retrying in 20 ms", log), log


def test_generous_timeout_answers_first_time(tmp_path):
    source = tmp_path / "short.jsonl"
    expected = write_jsonl(source, [{"id": f"s{i}", "prompt": "hi"} for i in range(6)])
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 8,
                 "--set", "transport.item_timeout_s=60", "--set", "transport.max_attempts=2")
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(run_dir)
    assert failures == [] and sorted(r["id"] for r in results) == sorted(expected)
    assert all(r["attempts"] == 1 for r in results)
    assert "retry" not in (run_dir / "run.log").read_text()
