"""The run directory is the job's state: it is never reused by another job, nothing in it is
touched when a run is refused, and one process at a time works in it."""
import signal

from conftest import (Job, assert_exactly_once, batch, describe, outcomes, prompt_records,
                      read_json, snapshot, write_jsonl)


def _finished_run(tmp_path, count=20):
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(count))
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4)
    assert proc.returncode == 0, describe(proc)
    return source, expected, run_dir


def test_second_run_without_resume_is_refused_untouched(tmp_path):
    source, _, run_dir = _finished_run(tmp_path)
    before = snapshot(run_dir)
    assert {"results.jsonl", "failures.jsonl", "summary.json", "run.json", "run.log"} <= set(before)

    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4)
    assert proc.returncode == 1, describe(proc)
    assert "already holds a run" in proc.stderr and "--resume" in proc.stderr, proc.stderr
    assert snapshot(run_dir) == before      # same files, same bytes, same modification times


def test_interrupted_run_without_resume_is_refused_untouched(tmp_path):
    source = tmp_path / "prompts.jsonl"
    write_jsonl(source, prompt_records(300))
    run_dir = tmp_path / "run"
    job = Job(tmp_path / "stderr.txt", "--input", source, "--run-dir", run_dir, "--max-tokens", 16)
    job.wait_for_lines(run_dir, 20)
    job.kill9()
    before = snapshot(run_dir)
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 16)
    assert proc.returncode == 1, describe(proc)
    assert snapshot(run_dir) == before


def test_directory_with_other_files_is_refused_untouched(tmp_path):
    source = tmp_path / "prompts.jsonl"
    write_jsonl(source, prompt_records(3))
    run_dir = tmp_path / "mine"
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("do not delete\n")
    before = snapshot(run_dir)
    proc = batch("--input", source, "--run-dir", run_dir)
    assert proc.returncode == 1, describe(proc)
    assert snapshot(run_dir) == before


def test_resume_with_another_input_is_refused(tmp_path):
    _, _, run_dir = _finished_run(tmp_path)
    other = tmp_path / "other.jsonl"
    write_jsonl(other, prompt_records(20, seed=7))
    before = snapshot(run_dir)
    proc = batch("--input", other, "--run-dir", run_dir, "--max-tokens", 4, "--resume")
    assert proc.returncode == 1, describe(proc)
    assert "cannot resume" in proc.stderr and "differs" in proc.stderr, proc.stderr
    assert snapshot(run_dir) == before


def test_resume_with_the_input_changed_in_place_is_refused(tmp_path):
    """The input is identified by its bytes (sha256), not its path."""
    source, _, run_dir = _finished_run(tmp_path)
    with open(source, "a") as f:
        f.write('{"id": "late", "prompt": "appended after the run"}\n')
    before = snapshot(run_dir)
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4, "--resume")
    assert proc.returncode == 1, describe(proc)
    assert snapshot(run_dir) == before


def test_resume_with_another_shard_is_refused(tmp_path):
    source = tmp_path / "prompts.jsonl"
    write_jsonl(source, prompt_records(20))
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4, "--shard", "0/2")
    assert proc.returncode == 0, describe(proc)
    before = snapshot(run_dir)
    for shard in (["--shard", "1/2"], []):
        proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4, "--resume", *shard)
        assert proc.returncode == 1, describe(proc)
        assert "shard" in proc.stderr, proc.stderr
    assert snapshot(run_dir) == before


def test_resume_on_missing_or_empty_directory_starts(tmp_path):
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(10))
    empty = tmp_path / "empty"
    empty.mkdir()
    for run_dir in (tmp_path / "missing" / "nested", empty):
        proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 4, "--resume")
        assert proc.returncode == 0, describe(proc)
        assert_exactly_once(run_dir, expected)
        assert read_json(run_dir / "summary.json")["status"] == "complete"


def test_second_process_on_the_same_directory_is_refused(tmp_path):
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(300))
    run_dir = tmp_path / "run"
    job = Job(tmp_path / "stderr.txt", "--input", source, "--run-dir", run_dir, "--max-tokens", 16)
    try:
        job.wait_for_lines(run_dir, 10)
        proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 16, "--resume")
        assert proc.returncode == 1, describe(proc)
        assert "in use" in proc.stderr, proc.stderr
        assert job.process.poll() is None, "the first process should still be running"
    finally:
        if job.process.poll() is None:
            job.signal(signal.SIGTERM)
        status = job.wait()
    assert status == 1
    # The refused process wrote nothing: the interrupted run resumes to exactly once.
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 16, "--resume")
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    results, _ = outcomes(run_dir)
    assert len(results) == 300
