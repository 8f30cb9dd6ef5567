"""tools/gpu-check.sh and tools/gpu_report.py without a GPU (docs/cuda.md, "The one-call GPU check").

The dry run must work on a checkout with no build and no bundle, finish well inside 300 s, plan
every stage inside its budget and the 420 s total, and leave at most 8 flat files in $OUT with a
gpu.md marked as a sample. The bundle check must name what is missing. The report writer must
read what `lpx-pipeline bench --json` really prints (run here on the CPU).

Environment (CTest sets LPX_PIPELINE; defaults suit a run from the repository root):
  LPX_PIPELINE    the lpx-pipeline binary            (build/bin/lpx-pipeline)
  LPX_TINY_MODEL  the shared tiny Llama (no template) (../shared/models/llama-2-tiny-random.gguf)
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = ROOT / "tools/gpu-check.sh"
REPORT = ROOT / "tools/gpu_report.py"
PIPELINE = os.environ.get("LPX_PIPELINE", str(ROOT / "build/bin/lpx-pipeline"))
TINY_MODEL = os.environ.get("LPX_TINY_MODEL",
                            str(ROOT.parent / "shared/models/llama-2-tiny-random.gguf"))
BUDGETS = {"smoke": 60, "decode": 100, "tests": 170, "sweep": 90}
OUT_FILES = {"summary.txt", "gpu.md", "doctor.txt", "tests.log", "bench.jsonl", "bench.log",
             "clocks.csv"}
BUNDLE_FILES = ["MANIFEST", "build/bin/lpx-pipeline", "build/tests/cuda_kernel_tests",
                "build/tests/cuda_engine_tests", "build/lib/lpx/plugins/lpx-cuda.so",
                "build/lib/lpx/plugins/lpx-cpu.so", "build/lib/lpx/plugins/lpx-gguf.so",
                "build/lib/lpx/plugins/lpx-greedy.so", "shared/models/llama-2-tiny-random.gguf"]


def gpu_check(out, *args, bundle):
    env = dict(os.environ, OUT=str(out), LPX_GPU_BUNDLE=str(bundle))
    return subprocess.run(["bash", str(CHECK), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def fake_bundle(path):
    for name in BUNDLE_FILES:
        f = path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("commit=0123456789ab\nbuilt=2026-12-01T00:00:00Z\n" if name == "MANIFEST"
                     else "#!/bin/sh\nexit 0\n")
        f.chmod(0o755)
    return path


def test_the_dry_run_plans_every_stage_within_its_budget(tmp_path):
    out = tmp_path / "out"
    started = time.monotonic()
    r = gpu_check(out, "--dry-run", bundle=tmp_path / "no-bundle")
    assert r.returncode == 0, r.stdout + r.stderr
    assert time.monotonic() - started < 300
    assert {p.name for p in out.iterdir()} == OUT_FILES
    assert all(p.is_file() for p in out.iterdir())

    summary = (out / "summary.txt").read_text()
    assert "no bundle at" in summary
    # Each stage's commands and their limits, which fit the stage's budget.
    sections = re.split(r"^== stage ", summary, flags=re.M)[1:]
    assert [s.split()[0] for s in sections] == list(BUDGETS)
    for section in sections:
        stage = section.split()[0]
        limits = [int(n) for n in re.findall(r"would run for at most (\d+) s", section)]
        assert limits, f"stage {stage} plans no command:\n{section}"
        assert sum(limits) <= BUDGETS[stage], f"stage {stage}: {limits}"
    assert sum(BUDGETS.values()) <= 420
    assert "-d 0,512,2048" in summary  # decode at depth
    assert "--batch 8,32,64" in summary

    gpu_md = (out / "gpu.md").read_text()
    assert "DRY RUN" in gpu_md and "not a measurement" in gpu_md
    assert re.search(r"Commit: [0-9a-f]{12}", gpu_md), gpu_md
    for depth in ("tg128 |", "tg128 @ d512 |", "tg128 @ d2048 |"):
        assert depth in gpu_md
    # The sample is the predictions' midpoints: every row within its predicted range.
    rows = [line for line in gpu_md.splitlines() if line.startswith("| decode-") or
            line.startswith("| sweep-")]
    assert len(rows) == 18 and all("| within |" in row for row in rows), gpu_md


def test_only_the_named_stages_run(tmp_path):
    r = gpu_check(tmp_path, "--dry-run", "--stages", "decode,sweep", bundle=tmp_path / "none")
    assert r.returncode == 0, r.stderr
    summary = (tmp_path / "summary.txt").read_text()
    assert "stage decode" in summary and "stage sweep" in summary
    assert "stage smoke" not in summary and "stage tests" not in summary


def test_bad_arguments_are_usage_errors(tmp_path):
    r = gpu_check(tmp_path, "--dry-run", "--stages", "smoke,warp", bundle=tmp_path / "none")
    assert r.returncode == 2 and "unknown stage 'warp'" in r.stderr
    r = gpu_check(tmp_path, "--frobnicate", bundle=tmp_path / "none")
    assert r.returncode == 2 and "unknown argument '--frobnicate'" in r.stderr
    r = gpu_check(tmp_path, "--prebuilt", bundle=tmp_path / "none")
    assert r.returncode == 2 and "gpu-bundle.sh" in r.stderr


def test_the_bundle_check_names_what_is_wrong(tmp_path):
    bundle = fake_bundle(tmp_path / "bundle")
    r = gpu_check(tmp_path / "out", "--dry-run", bundle=bundle)
    assert r.returncode == 0, r.stderr
    summary = (tmp_path / "out/summary.txt").read_text()
    assert "complete" in summary and "commit=0123456789ab" in summary
    assert "Commit: 0123456789ab" in (tmp_path / "out/gpu.md").read_text()

    (bundle / "build/lib/lpx/plugins/lpx-cuda.so").unlink()
    (bundle / "build/tests/cuda_engine_tests").chmod(0o644)
    r = gpu_check(tmp_path / "out", "--dry-run", bundle=bundle)
    assert r.returncode == 2
    assert "build/lib/lpx/plugins/lpx-cuda.so is missing" in r.stderr
    assert "build/tests/cuda_engine_tests is not executable" in r.stderr

    fake_bundle(bundle)
    (bundle / "MANIFEST").write_text("built=today\n")
    r = gpu_check(tmp_path / "out", "--dry-run", bundle=bundle)
    assert r.returncode == 2 and "MANIFEST names no commit" in r.stderr

    fake_bundle(bundle)
    with open(bundle / "build/bin/lpx-pipeline", "wb") as f:  # over what the device tool carries
        f.truncate(65 << 20)
        f.write(b"x")
    r = gpu_check(tmp_path / "out", "--dry-run", bundle=bundle)
    assert r.returncode == 2 and "exceed the 65536 KiB" in r.stderr


def test_the_report_reads_real_bench_output(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    command = [PIPELINE, "--log-level", "warn", "bench", "--model", TINY_MODEL, "-p", "8", "-n",
               "8", "-d", "0,32", "--batch", "1,2", "--reps", "1", "--json"]
    bench = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert bench.returncode == 0, bench.stderr
    (tmp_path / "bench.json").write_text(bench.stdout)
    results = json.loads(bench.stdout)
    for status, name in ((0, "decode-tiny"), (124, "sweep-tiny")):
        subprocess.run([sys.executable, REPORT, "record", out, name, str(status),
                        tmp_path / "bench.json", "--", *command], check=True)
    (tmp_path / "missing.json").unlink(missing_ok=True)
    subprocess.run([sys.executable, REPORT, "record", out, "sweep-none", "125",
                    tmp_path / "missing.json", "--", "lpx-pipeline", "bench"], check=True)
    runs = [json.loads(line) for line in (out / "bench.jsonl").read_text().splitlines()]
    assert [r["run"] for r in runs] == ["decode-tiny", "sweep-tiny", "sweep-none"]
    assert runs[0]["results"] == results and "-d 0,32 " in runs[0]["command"]
    assert runs[1]["error"] == "cut at its time limit"
    assert runs[2]["results"] == [] and "out of time" in runs[2]["error"]

    # A predictions table whose tg8 @ d32 batch-1 row holds any rate, and one that none reaches.
    tg = next(r for r in results if r["test"] == "tg8" and r["depth"] == 32 and r["batch"] == 1)
    predictions = tmp_path / "cuda.md"
    predictions.write_text(
        "# predictions\n\n<!-- gpu-check predictions -->\n"
        "| model | weights per step | depth | batch | predicted tokens/s | why |\n"
        "|---|---:|---:|---:|---:|---|\n"
        f"| `{TINY_MODEL}` | 1.0 MiB | 32 | 1 | 1–1,000,000,000 | anything |\n"
        f"| `{TINY_MODEL}` | 1.0 MiB | 0 | 2 | 1,000,000,000–2,000,000,000 | too fast |\n\n"
        "after the table\n")
    (out / "tests.log").write_text(
        "=== cuda_kernel_tests (smoke)\n[  PASSED  ] 40 tests.\n=== exit 0\n"
        "=== cuda_engine_tests\n[  PASSED  ] 9 tests.\n[  FAILED  ] 1 test, listed below:\n"
        "[  FAILED  ] CudaEngine.TeacherForcedLogitsMatchTheCpu/0\n=== exit 1\n")
    r = subprocess.run([sys.executable, REPORT, "report", out, "--mode", "prebuilt", "--commit",
                        "0123456789ab", "--command", "tools/gpu-check.sh --prebuilt",
                        "--predictions", predictions, "--stage", "decode: passed, 12 s of 100"],
                       capture_output=True, text=True, check=True)
    gpu_md = (out / "gpu.md").read_text()
    assert r.stdout.strip() in gpu_md
    assert "DRY RUN" not in gpu_md
    assert "Commit: 0123456789ab" in gpu_md and "Stage decode: passed, 12 s of 100" in gpu_md
    assert "Tests: cuda_kernel_tests (smoke): 40 passed, 0 failed" in gpu_md
    assert ("Tests: cuda_engine_tests: 9 passed, 1 failed "
            "(CudaEngine.TeacherForcedLogitsMatchTheCpu/0)") in gpu_md
    row = next(line for line in gpu_md.splitlines() if line.startswith("| decode-tiny | tg8 @ d32 | 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[3].replace(",", "")) == round(tg["tokens_per_s"])
    assert abs(float(cells[4]) - 1000.0 / tg["tokens_per_s"]) < 0.001  # ms per step at batch 1
    assert cells[5] == f"{tg['roofline_percent']:.0f}"
    assert cells[6] == "1–1,000,000,000" and cells[7] == "within"
    below = next(line for line in gpu_md.splitlines() if line.startswith("| decode-tiny | tg8 | 2 |"))
    assert "| below |" in below
    assert "| sweep-none | — |" in gpu_md and "out of time" in gpu_md
    assert "TTFT" in next(line for line in gpu_md.splitlines() if "| pp8 |" in line)


def test_the_real_smollm2_file_is_judged_by_the_synthetic_prediction(tmp_path):
    """gpu-check benches models/SmolLM2-….gguf when it was carried: same bytes per token as
    synth:smollm2-135m:Q4_1, so the same predictions apply."""
    out = tmp_path / "out"
    out.mkdir()
    result = {"test": "tg128", "batch": 1, "depth": 0, "tokens_per_s": 2000.0, "stddev": 0.0,
              "ttft_ms": 1.0, "model": "/anywhere/models/SmolLM2-135M-Instruct.Q4_1.gguf",
              "roofline_percent": 5.0}
    (out / "bench.jsonl").write_text(json.dumps(
        {"run": "decode-smollm2-q4_1", "status": 0, "command": "bench", "results": [result]}) + "\n")
    r = subprocess.run([sys.executable, REPORT, "report", out, "--mode", "prebuilt", "--commit",
                        "0123456789ab", "--command", "tools/gpu-check.sh --prebuilt",
                        "--predictions", ROOT / "docs/cuda.md"], capture_output=True, text=True,
                       check=True)
    row = next(line for line in r.stdout.splitlines() if line.startswith("| decode-smollm2-q4_1"))
    # The synthetic model's batch-1, depth-0 range, as docs/cuda.md's table gives it.
    table = (ROOT / "docs/cuda.md").read_text().split("<!-- gpu-check predictions -->")[1]
    predicted = next(line.split("|")[5].strip() for line in table.splitlines()
                     if line.startswith("| `synth:smollm2-135m:Q4_1` |")
                     and line.split("|")[3].strip() == "0" and line.split("|")[4].strip() == "1")
    assert 2000 >= int(predicted.split("–")[0].replace(",", "")), predicted  # the sample is within
    assert f"| {predicted} | within |" in row, row


def test_the_out_check_enforces_what_the_device_tool_returns(tmp_path):
    def check():
        return subprocess.run([sys.executable, REPORT, "check-out", tmp_path], capture_output=True,
                              text=True)
    for i in range(8):
        (tmp_path / f"f{i}.txt").write_text("x")
    assert check().returncode == 0
    (tmp_path / "f8.txt").write_text("x")
    r = check()
    assert r.returncode == 1 and "9 files" in r.stdout
    (tmp_path / "f8.txt").unlink()
    (tmp_path / "f7.txt").unlink()
    deep = tmp_path / "a/b/c"
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("x")
    r = check()
    assert r.returncode == 1 and "more than 2 folders down" in r.stdout
