"""A whole job runs to the end: every input answered once; the run directory records what ran."""
import pathlib
import re

from conftest import (TINY_MODEL, batch, describe, outcomes, prompt_records, read_json,
                      sha256_file, write_jsonl)

COUNT = 1000
MAX_TOKENS = 16


def test_thousand_lines_complete(tmp_path):
    source = tmp_path / "prompts.jsonl"
    records = prompt_records(COUNT, max_tokens=MAX_TOKENS, blank_every=97)
    expected = write_jsonl(source, records)
    assert len(expected) == COUNT
    run_dir = tmp_path / "run"

    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", MAX_TOKENS)
    assert proc.returncode == 0, describe(proc)

    results, failures = outcomes(run_dir)
    assert failures == []
    assert len(results) == COUNT
    ids = [str(r["id"]) for r in results]
    assert len(set(ids)) == COUNT, "an id was answered twice"
    assert set(ids) == set(expected)

    by_id = {r["id"]: r for r in results}
    record_of = {n: rec for n, rec in enumerate(records, start=1)}
    for key, number in expected.items():
        r = by_id[key]
        assert set(r) >= {"id", "line", "text", "finish_reason", "usage", "timings", "attempts"}, r
        assert r["line"] == number, r
        assert isinstance(r["text"], str) and r["text"], r
        assert r["attempts"] == 1, r
        limit = record_of[number].get("max_tokens", MAX_TOKENS)
        usage = r["usage"]
        assert 1 <= usage["completion_tokens"] <= limit, r
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"], r
        assert r["finish_reason"] in ("length", "stop"), r
        if r["finish_reason"] == "length":
            assert usage["completion_tokens"] == limit, r

    summary = read_json(run_dir / "summary.json")
    assert summary["status"] == "complete", summary
    assert summary["counts"] == {"inputs": COUNT, "ok": COUNT, "failed": 0, "remaining": 0}
    this_run = summary["this_run"]
    assert this_run["ok"] == COUNT and this_run["failed"] == 0
    assert this_run["completion_tokens"] == sum(r["usage"]["completion_tokens"] for r in results)
    assert this_run["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in results)
    assert this_run["cached_prompt_tokens"] == sum(r["usage"]["cached_tokens"] for r in results)
    assert this_run["wall_time_s"] > 0 and this_run["tokens_per_s"] > 0

    digest = sha256_file(source)
    run = read_json(run_dir / "run.json")
    assert run["input_sha256"] == digest, run
    assert run["input"] == str(source), run
    assert run["shard"] == "", run
    assert summary["input_sha256"] == digest

    # The record of what ran: model file and hash, backend, LPX version, the resolved pipeline.
    assert summary["model"]["sha256"] == sha256_file(TINY_MODEL)
    assert summary["model"]["path"] == TINY_MODEL
    assert summary["device"]["backend"] == "cpu"
    assert summary["lpx"]["version"] and summary["lpx"]["commit"]
    # The host's run record: the machine, the GPUs (none here: an empty list) and the model.
    run = summary["run"]
    assert run["lpx"] == summary["lpx"]
    assert run["cpu"]["model"] and run["cpu"]["isa"] and run["cpu"]["backend"] == "cpu"
    assert run["os"]["kernel"].startswith("Linux")
    assert isinstance(run["gpu"]["devices"], list)
    assert run["models"] == [{"name": pathlib.Path(TINY_MODEL).stem, "path": TINY_MODEL,
                              "bytes": pathlib.Path(TINY_MODEL).stat().st_size,
                              "sha256": sha256_file(TINY_MODEL)}]
    assert "[transport]" in run["pipeline"]
    configuration = summary["configuration"]
    assert "plugin = 'jsonl'" in configuration
    assert re.search(r"^max_tokens = 16$", configuration, re.M), configuration
    assert re.search(r"^max_sequences = 8$", configuration, re.M), configuration
    assert re.search(r"^mode = 'throughput'$", configuration, re.M), configuration

    log = (run_dir / "run.log").read_text()
    assert re.search(rf"started: {COUNT} inputs, 0 already done", log), log
    assert f"complete: {COUNT} ok, 0 failed" in log, log


def test_default_run_directory(tmp_path):
    """Without --run-dir: outputs/<UTC time>-<first 8 hex of the input's sha256>/ under the cwd."""
    source = tmp_path / "small.jsonl"
    expected = write_jsonl(source, prompt_records(5))
    proc = batch("--input", source, "--max-tokens", 2, cwd=tmp_path)
    assert proc.returncode == 0, describe(proc)
    made = list((tmp_path / "outputs").iterdir())
    assert len(made) == 1, made
    assert re.fullmatch(r".*\d.*-" + sha256_file(source)[:8], made[0].name), made[0].name
    results, failures = outcomes(made[0])
    assert failures == [] and {r["id"] for r in results} == set(expected)


def test_line_parameters_and_ids(tmp_path):
    """Ids: strings, integers as their decimal text, none (= line number, blank lines counted).
    A line's own max_tokens beats --max-tokens."""
    source = tmp_path / "p.jsonl"
    write_jsonl(source, [
        {"id": "s", "prompt": "one", "max_tokens": 3},
        None,
        {"id": 42, "prompt": "two"},
        {"prompt": "three", "max_tokens": 5},
    ])
    proc = batch("--input", source, "--run-dir", tmp_path / "run", "--max-tokens", 7)
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(tmp_path / "run")
    assert failures == []
    by_id = {r["id"]: r for r in results}
    assert set(by_id) == {"s", "42", "4"}
    assert by_id["s"]["line"] == 1 and by_id["42"]["line"] == 3 and by_id["4"]["line"] == 4
    assert by_id["s"]["usage"]["completion_tokens"] <= 3
    assert by_id["42"]["usage"]["completion_tokens"] <= 7
    assert by_id["4"]["usage"]["completion_tokens"] <= 5
    assert all(r["finish_reason"] == "length" for r in results), results  # tiny model: no EOS soon
    assert by_id["42"]["usage"]["completion_tokens"] == 7


def test_empty_input(tmp_path):
    """A file with no requests (only blank lines) is a complete job of zero inputs."""
    source = tmp_path / "empty.jsonl"
    source.write_text("\n\n")
    proc = batch("--input", source, "--run-dir", tmp_path / "run")
    assert proc.returncode == 0, describe(proc)
    summary = read_json(tmp_path / "run" / "summary.json")
    assert summary["status"] == "complete"
    assert summary["counts"]["inputs"] == 0
    assert outcomes(tmp_path / "run") == ([], [])


def test_a_shared_prefix_is_computed_once(tmp_path):
    """Lines that start with the same few-shot preamble reuse its KV blocks (prefix caching):
    each result says how many prompt tokens it reused, summary.json adds them up, and every
    answer is the one the same job gives with the cache off."""
    preamble = " ".join(f"Example {i}: the capital of country {i} is city {i}." for i in range(1, 25))
    records = [{"id": str(i), "prompt": f"{preamble} Question {i}:", "max_tokens": 6} for i in range(12)]
    answers = {}
    for label, extra in (("on", []), ("off", ["--set", "engine.prefix_cache=false"])):
        source = tmp_path / f"{label}.jsonl"
        write_jsonl(source, records)
        run_dir = tmp_path / label
        # Four at a time: the first four may all start before any has published the preamble
        # (how many do depends on timing), and every later line starts when one of them has
        # ended, so after its blocks were published.
        proc = batch("--input", source, "--run-dir", run_dir, "--max-sequences", 4, *extra)
        assert proc.returncode == 0, describe(proc)
        results, failures = outcomes(run_dir)
        assert failures == [] and len(results) == len(records)
        answers[label] = {r["id"]: r["text"] for r in results}
        reused = [r["usage"]["cached_tokens"] for r in results]
        summary = read_json(run_dir / "summary.json")
        assert summary["this_run"]["cached_prompt_tokens"] == sum(reused)
        if label == "on":
            assert sum(1 for n in reused if n >= 128) >= len(records) - 4, reused  # all but the first wave
        else:
            assert sum(reused) == 0
    assert answers["on"] == answers["off"]
