"""SIGTERM / SIGINT: in-flight inputs are cancelled (not written), summary.json says
"interrupted", the exit status is 1, and --resume then finishes the job exactly once."""
import re
import signal

import pytest

from conftest import (Job, assert_at_most_once, assert_exactly_once, batch, describe, outcomes,
                      prompt_records, read_json, write_jsonl)

COUNT = 400


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_interrupts_then_resume_completes(tmp_path, sig):
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(COUNT, max_tokens=16))
    run_dir = tmp_path / "run"
    job = Job(tmp_path / "stderr.txt", "--input", source, "--run-dir", run_dir, "--max-tokens", 16)
    job.wait_for_lines(run_dir, COUNT // 5)
    job.signal(sig)
    status = job.wait(timeout=60)
    assert status == 1, job.log()

    # A clean stop: whole lines only, nothing twice, and the summary accounts for every line.
    counts = assert_at_most_once(run_dir)
    done = len(counts)
    assert COUNT // 5 <= done < COUNT
    summary = read_json(run_dir / "summary.json")
    assert summary["status"] == "interrupted", summary
    assert summary["counts"]["ok"] + summary["counts"]["failed"] == done, summary
    assert summary["counts"]["remaining"] == COUNT - done, summary
    assert re.search(rf"interrupted: {COUNT - done} inputs left", (run_dir / "run.log").read_text())
    _, failures = outcomes(run_dir)
    assert failures == [], "cancelled inputs must not be written as failures"

    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 16, "--resume")
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(run_dir, expected)
    results, failures = outcomes(run_dir)
    assert failures == [] and len(results) == COUNT
    assert all(r["attempts"] == 1 for r in results)
    summary = read_json(run_dir / "summary.json")
    assert summary["status"] == "complete"
    assert summary["this_run"]["ok"] == COUNT - done
