"""Bounded load test: tools/bench_serve.py against the real `lpx-pipeline serve` on the tiny Llama.

64 concurrent streaming clients send 200 completions (max_tokens 16) to a server running 16
sequences with room for 256 waiting requests, so about 48 requests wait in the engine's queue at
any time and none may be refused. Every request must complete, and the JSON report must hold
sane numbers. Takes a few seconds on 2 cores (generous timeouts keep it well under 2 minutes).
The prompts are fixed here, not bench_serve.py's defaults, so that the test keeps its meaning
when those change.
"""
import json
import pathlib
import subprocess
import sys

from conftest import TINY_MODEL, start_server

BENCH = pathlib.Path(__file__).resolve().parents[2] / "tools" / "bench_serve.py"
REQUESTS = 200
PROMPTS = ["Once upon a time", "In the year 2050, the city of",
           "Here is a recipe for bread. Step 1:", "Chapter 1. The old lighthouse keeper"]


def test_64_concurrent_streams_all_complete(tmp_path):
    prompt_file = tmp_path / "prompts.txt"
    prompt_file.write_text("\n".join(PROMPTS) + "\n", encoding="utf-8")
    srv = start_server("--max-sequences", "16", "--set", "transport.max_queued=256",
                       model=TINY_MODEL)
    try:
        run = subprocess.run([sys.executable, str(BENCH), "--url", srv.url, "--concurrency", "64",
                              "--requests", str(REQUESTS), "--max-tokens", "16",
                              "--prompt-file", str(prompt_file), "--timeout", "60", "--json"],
                             capture_output=True, text=True, timeout=100)
        assert srv.alive(), srv.log()
    finally:
        rc = srv.stop()
    assert run.returncode == 0, \
        f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}\nserver:\n{srv.log()}"
    assert rc == 0, f"exit status {rc} on SIGTERM\n{srv.log()}"

    (level,) = json.loads(run.stdout)["levels"]
    assert level["concurrency"] == 64
    assert level["failed"] == 0 and level["errors"] == [], level
    assert level["completed"] == REQUESTS, level
    assert 0 < level["output_tokens"] <= REQUESTS * 16, level
    assert level["output_tokens_per_s"] > 0 and level["request_throughput"] > 0, level
    for name in ("ttft_ms", "itl_ms", "e2e_ms"):
        p = level[name]
        assert 0 <= p["p50"] <= p["p99"], (name, p)
    assert level["ttft_ms"]["p50"] <= level["ttft_ms"]["p90"] <= level["ttft_ms"]["p99"]
    # every request's first token comes before its end, so the order statistics follow
    assert level["ttft_ms"]["p50"] <= level["e2e_ms"]["p50"]
    assert level["ttft_ms"]["p99"] <= level["e2e_ms"]["p99"]
