"""Progress on stderr: log lines every log_interval_s when stderr is not a terminal, a live bar
redrawn with carriage returns when it is (or when forced)."""
import os
import pty
import re
import subprocess

from conftest import (PIPELINE, TINY_MODEL, assert_exactly_once, batch, describe, prompt_records,
                      read_json, write_jsonl)

COUNT = 300          # about 4 s on the tiny model at 16 tokens each on 2 cores
PROGRESS_LINE = re.compile(r"progress (\d+)/(\d+)\s+ok (\d+)\s+failed (\d+)")


def _input(tmp_path):
    source = tmp_path / "prompts.jsonl"
    expected = write_jsonl(source, prompt_records(COUNT))
    return source, expected


def test_progress_log_lines(tmp_path):
    source, expected = _input(tmp_path)
    proc = batch("--input", source, "--run-dir", tmp_path / "run", "--max-tokens", 16,
                 "--set", "transport.progress=log", "--set", "transport.log_interval_s=1")
    assert proc.returncode == 0, describe(proc)
    assert "\r" not in proc.stderr
    lines = PROGRESS_LINE.findall(proc.stderr)
    done = [int(d) for d, total, _, _ in lines]
    assert all(int(total) == COUNT for _, total, _, _ in lines), lines
    assert len(lines) >= 3, proc.stderr           # start, at least one interval, end
    assert any(0 < d < COUNT for d in done), done  # a line written while the job ran
    assert done == sorted(done) and done[-1] == COUNT, done
    assert all(int(ok) + int(failed) == int(d) for d, _, ok, failed in lines), lines
    assert_exactly_once(tmp_path / "run", expected)


def test_progress_off(tmp_path):
    source, _ = _input(tmp_path)
    proc = batch("--input", source, "--run-dir", tmp_path / "run", "--max-tokens", 2,
                 "--set", "transport.progress=off")
    assert proc.returncode == 0, describe(proc)
    assert not PROGRESS_LINE.search(proc.stderr), proc.stderr
    assert "[#" not in proc.stderr and "\r" not in proc.stderr


def test_auto_without_terminal_logs(tmp_path):
    source, _ = _input(tmp_path)
    proc = batch("--input", source, "--run-dir", tmp_path / "run", "--max-tokens", 2)
    assert proc.returncode == 0, describe(proc)
    assert "\r" not in proc.stderr and "[#" not in proc.stderr
    assert f"progress {COUNT}/{COUNT}" in proc.stderr, proc.stderr


def _run_on_terminal(args, timeout=120):
    """Runs the command with stderr on a pseudo-terminal; returns (exit status, bytes written)."""
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=slave)
    finally:
        os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:        # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(master)
    return process.wait(timeout), output


def test_bar_on_a_terminal(tmp_path):
    source, expected = _input(tmp_path)
    status, output = _run_on_terminal([PIPELINE, "batch", "--model", TINY_MODEL, "--input",
                                       str(source), "--run-dir", str(tmp_path / "run"),
                                       "--max-tokens", "16"])
    text = output.decode("utf-8", "replace")
    assert status == 0, text[-3000:]
    redraws = text.count("\r")
    assert redraws >= 3, text[-3000:]
    assert "[#" in text, text[-3000:]
    assert f"{COUNT}/{COUNT}" in text, text[-3000:]
    assert re.search(rf"\r[^\r\n]*\[[#.]+\] \d+/{COUNT}", text), text[-3000:]
    assert "ETA" in text and "tok/s" in text
    assert not PROGRESS_LINE.search(text), "log lines instead of a bar on a terminal"
    assert_exactly_once(tmp_path / "run", expected)


def test_bar_forced_without_terminal(tmp_path):
    source, _ = _input(tmp_path)
    proc = batch("--input", source, "--run-dir", tmp_path / "run", "--max-tokens", 4,
                 "--set", "transport.progress=bar")
    assert proc.returncode == 0, describe(proc)
    assert "\r" in proc.stderr and f"] {COUNT}/{COUNT}" in proc.stderr, proc.stderr[-2000:]


def test_progress_counts_after_resume(tmp_path):
    """On --resume the progress counts include what ran before, split into ok and failed as in
    results.jsonl / failures.jsonl (and summary.json)."""
    records = prompt_records(30)
    for i in range(0, 30, 5):
        records[i] = f"not JSON {i}"
    source = tmp_path / "prompts.jsonl"
    write_jsonl(source, records)
    run_dir = tmp_path / "run"
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 2)
    assert proc.returncode == 0, describe(proc)
    proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 2, "--resume",
                 "--set", "transport.progress=log")
    assert proc.returncode == 0, describe(proc)
    summary = read_json(run_dir / "summary.json")
    assert summary["counts"] == {"inputs": 30, "ok": 24, "failed": 6, "remaining": 0}
    lines = PROGRESS_LINE.findall(proc.stderr)
    assert lines, proc.stderr
    for done, total, ok, failed in lines:
        assert (int(done), int(total)) == (30, 30), proc.stderr
        assert (int(ok), int(failed)) == (24, 6), proc.stderr
