"""kill -9 at any moment, then --resume: every input id ends up exactly once across results.jsonl
and failures.jsonl, no line is torn, and (greedy) the texts equal those of an uninterrupted run."""
import os
import re
import time

import pytest

from conftest import (Job, assert_at_most_once, assert_exactly_once, batch, describe, line_count,
                      outcomes, prompt_records, read_json, texts, write_jsonl)

COUNT = 600
MAX_TOKENS = 16
# Whole lines written when each kill -9 lands: very early, ~25 %, ~60 % (the second resumed run),
# ~85 % (the third).
KILL_AT = [1, COUNT // 4, COUNT * 60 // 100, COUNT * 85 // 100]


@pytest.fixture(scope="module")
def job_input(tmp_path_factory):
    directory = tmp_path_factory.mktemp("input")
    source = directory / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(COUNT, max_tokens=MAX_TOKENS, blank_every=50))
    return source, expected


@pytest.fixture(scope="module")
def uninterrupted(job_input, tmp_path_factory):
    source, expected = job_input
    run_dir = tmp_path_factory.mktemp("uninterrupted") / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", MAX_TOKENS)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    return run_dir


@pytest.fixture(scope="module")
def killed_four_times(job_input, tmp_path_factory):
    """The job killed with SIGKILL four times (the first run, then three --resume runs), each when
    the output files hold KILL_AT[i] whole lines, then resumed to the end. Returns the run
    directory, the answered count seen after each kill, and the final process."""
    source, _ = job_input
    base = tmp_path_factory.mktemp("killed")
    run_dir = base / "run"
    seen_after_kill = []
    for attempt, target in enumerate(KILL_AT):
        resume = ["--resume"] if attempt else []
        job = Job(base / f"stderr-{attempt}.txt", "--input", source, "--run-dir", run_dir,
                  "--max-tokens", MAX_TOKENS, *resume)
        job.wait_for_lines(run_dir, target)
        assert job.kill9() == -9
        # At every moment the files hold whole, parseable lines (bar a torn last line) and no id
        # twice: exactly once is an invariant, not only an end state.
        counts = assert_at_most_once(run_dir, allow_torn_tail=True)
        seen_after_kill.append(len(counts))
        assert read_json(run_dir / "summary.json")["status"] == "running"
    final = batch("--input", source, "--run-dir", run_dir, "--max-tokens", MAX_TOKENS, "--resume")
    return run_dir, seen_after_kill, final


def test_kill9_then_resume_exactly_once(job_input, killed_four_times):
    _, expected = job_input
    run_dir, seen_after_kill, final = killed_four_times
    assert final.returncode == 0, describe(final)
    # Each kill landed where intended: after the target, before the end, and later each time.
    for target, seen in zip(KILL_AT, seen_after_kill):
        assert target <= seen < COUNT, (KILL_AT, seen_after_kill)
    assert seen_after_kill == sorted(seen_after_kill)

    assert_exactly_once(run_dir, expected)          # also: every line parses, ends with \n
    results, failures = outcomes(run_dir)
    assert failures == [] and len(results) == COUNT
    for r in results:
        assert r["line"] == expected[str(r["id"])], r

    summary = read_json(run_dir / "summary.json")
    assert summary["status"] == "complete", summary
    assert summary["counts"] == {"inputs": COUNT, "ok": COUNT, "failed": 0, "remaining": 0}
    assert summary["this_run"]["ok"] == COUNT - seen_after_kill[-1]

    log = (run_dir / "run.log").read_text()
    assert len(re.findall(r"^\S+ started: ", log, re.M)) == 1, log
    resumed = [int(n) for n in re.findall(r"resumed: \d+ inputs, (\d+) already done", log)]
    assert len(resumed) == len(KILL_AT), log   # three killed resumes and the final one
    assert resumed == sorted(resumed) and resumed[-1] == seen_after_kill[-1], (resumed, log)
    assert log.rstrip().endswith(f"complete: {COUNT} ok, 0 failed"), log


def test_resumed_texts_equal_uninterrupted(killed_four_times, uninterrupted):
    """Greedy decoding: which inputs shared a batch, and which ran twice, changes no text."""
    run_dir, _, final = killed_four_times
    assert final.returncode == 0, describe(final)
    resumed, reference = texts(run_dir), texts(uninterrupted)
    assert len(reference) == COUNT
    differing = [k for k in reference if resumed.get(k) != reference[k]]
    assert not differing, (f"{len(differing)} texts differ, e.g. {differing[0]!r}: "
                           f"{resumed.get(differing[0])!r} vs {reference[differing[0]]!r}")


@pytest.mark.parametrize("delay_ms", [0, 1, 2, 5, 20])
def test_kill9_during_startup_then_resume(tmp_path, delay_ms):
    """A crash while the run directory is being set up (lock, run.log, run.json being written)
    must not leave a directory that --resume refuses: a scheduler always passes --resume."""
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(40))
    run_dir = tmp_path / "run"
    job = Job(tmp_path / "stderr.txt", "--input", source, "--run-dir", run_dir,
              "--max-tokens", 4, "--resume")
    deadline = time.monotonic() + 60
    while not run_dir.exists() and job.process.poll() is None and time.monotonic() < deadline:
        pass  # a busy wait: the window between mkdir and the first result is milliseconds
    time.sleep(delay_ms / 1000)
    job.kill9()
    left = sorted(os.listdir(run_dir)) if run_dir.exists() else None
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4, "--resume")
    assert proc.returncode == 0, f"after a kill that left {left}:\n" + describe(proc)
    assert_exactly_once(run_dir, expected)
    assert read_json(run_dir / "summary.json")["status"] == "complete"


def _small_run(tmp_path, records, *args):
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, records)
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 8, *args)
    assert proc.returncode == 0, describe(proc)
    return source, expected, run_dir


def _tear_last_line(path):
    """Replaces the file's last line with its first half and no newline, as a crash in the middle
    of a write would. Returns the original line (bytes)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    assert lines.pop() == b"" and lines, data[-200:]
    last = lines.pop()
    path.write_bytes(b"".join(line + b"\n" for line in lines) + last[:len(last) // 2])
    return last


def test_torn_results_line_is_cut_and_answered_again(tmp_path):
    source, expected, run_dir = _small_run(tmp_path, prompt_records(60))
    before = texts(run_dir)
    torn = _tear_last_line(run_dir / "results.jsonl")
    torn_id = re.match(rb'\{"id":"([^"]+)"', torn).group(1).decode()

    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 8, "--resume")
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    assert texts(run_dir) == before          # the torn input ran again, to the same greedy text
    log = (run_dir / "run.log").read_text()
    assert re.search(r"discarded a partial last line of results\.jsonl", log), log
    assert "resumed: 60 inputs, 59 already done" in log, log
    assert read_json(run_dir / "summary.json")["this_run"]["ok"] == 1
    assert torn_id in before


def test_partial_line_appended_after_kill(tmp_path):
    """kill -9 mid-run, then a partial line (no newline) for an input not yet answered, appended
    by hand: --resume cuts it off, says so in run.log, and answers that input exactly once."""
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(200))
    run_dir = tmp_path / "run"
    job = Job(tmp_path / "stderr.txt", "--input", source, "--run-dir", run_dir, "--max-tokens", 8)
    job.wait_for_lines(run_dir, 60)
    job.kill9()
    counts = assert_at_most_once(run_dir, allow_torn_tail=True)
    unanswered = sorted(set(expected) - set(counts), key=lambda k: expected[k])
    victim = unanswered[-1]
    results = run_dir / "results.jsonl"
    data = results.read_bytes()
    if not data.endswith(b"\n"):         # the kill itself tore a line: keep only whole lines
        data = data[:data.rfind(b"\n") + 1]
    partial = f'{{"id":"{victim}","line":{expected[victim]},"finish_reason":"length","text":"hal'
    results.write_bytes(data + partial.encode())

    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 8, "--resume")
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    assert partial.encode() not in results.read_bytes()
    log = (run_dir / "run.log").read_text()
    assert f"discarded a partial last line of results.jsonl ({len(partial)} bytes)" in log, log


def test_torn_failures_line_is_cut_and_failed_again(tmp_path):
    records = prompt_records(20)
    records[4] = "{not json"
    records[9] = {"id": "no-prompt"}
    records[14] = {"id": "bad-type", "prompt": "x", "max_tokens": "many"}
    source, expected, run_dir = _small_run(tmp_path, records)
    _, failures = outcomes(run_dir)
    assert sorted(f["line"] for f in failures) == [5, 10, 15]
    torn = _tear_last_line(run_dir / "failures.jsonl")
    torn_line = int(re.search(rb'"line":(\d+)', torn).group(1))

    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 8, "--resume")
    assert proc.returncode == 0, describe(proc)
    results, failures = outcomes(run_dir)
    assert sorted(f["line"] for f in failures) == [5, 10, 15], failures   # once each
    assert len(results) == 17 and len({r["id"] for r in results}) == 17
    log = (run_dir / "run.log").read_text()
    assert "discarded a partial last line of failures.jsonl" in log, log
    assert torn_line in (5, 10, 15)


def test_resume_of_a_complete_run_changes_nothing(tmp_path):
    source, expected, run_dir = _small_run(tmp_path, prompt_records(30))
    before = {name: (run_dir / name).read_bytes() for name in ("results.jsonl", "failures.jsonl")}
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 8, "--resume")
    assert proc.returncode == 0, describe(proc)
    for name, data in before.items():
        assert (run_dir / name).read_bytes() == data, name
    assert read_json(run_dir / "summary.json")["status"] == "complete"
    assert line_count(run_dir / "results.jsonl") == 30
