#!/usr/bin/env python3
"""The report half of tools/gpu-check.sh: standard library only (it runs on the device machine).

  gpu_report.py record OUT NAME STATUS JSON -- COMMAND...   one bench run into OUT/bench.jsonl
  gpu_report.py sample OUT CUDA_MD       (dry run) bench.jsonl from the predictions, marked sample
  gpu_report.py report OUT --mode M --commit C --command TEXT [--predictions CUDA_MD]
                       [--stage TEXT]...  OUT/gpu.md, and the results table on stdout
  gpu_report.py check-out OUT            OUT holds at most 8 files, at most 2 folders down, named
                                         as the device tool returns them
"""
import argparse
import datetime
import json
import pathlib
import re
import shlex
import statistics
import subprocess
import sys

MAX_FILES = 8
MAX_DEPTH = 2  # folders below OUT
NAME = re.compile(r"^[A-Za-z0-9._-]+$")
PREDICTIONS_MARKER = "<!-- gpu-check predictions -->"
SAMPLE_BANDWIDTH_GBS = 4300.0  # the H200's measured copy rate (docs/cuda.md), for sample rows only
# Model files whose predictions are those of a synthetic model of the same shapes and bytes.
ALIASES = {"SmolLM2-135M-Instruct.Q4_1.gguf": "synth:smollm2-135m:Q4_1"}
CUT = {124: "cut at its time limit", 137: "cut at its time limit (killed)",
       125: "not run: its stage was out of time"}


def read_jsonl(path):
    runs = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                runs.append(json.loads(line))
    return runs


def record(args):
    """Appends one run, with its results or why there are none, to OUT/bench.jsonl."""
    run = {"run": args.name, "status": args.status, "command": shlex.join(args.command)}
    text = pathlib.Path(args.json).read_text() if pathlib.Path(args.json).exists() else ""
    try:
        run["results"] = json.loads(text) if text.strip() else []
    except ValueError as error:
        run["results"], run["error"] = [], f"bench printed no JSON ({error})"
    if args.status in CUT:
        run["error"] = CUT[args.status]
    with open(pathlib.Path(args.out) / "bench.jsonl", "a") as f:
        f.write(json.dumps(run) + "\n")


def parse_range(text):
    """'1,800–2,700' -> (1800.0, 2700.0); a single number is a range of one."""
    parts = [float(p.replace(",", "").strip()) for p in re.split(r"[–-]", text) if p.strip()]
    return (parts[0], parts[-1]) if parts else None


def read_predictions(cuda_md):
    """The table after PREDICTIONS_MARKER in docs/cuda.md: (model, depth, batch) -> row."""
    lines = pathlib.Path(cuda_md).read_text().splitlines()
    if PREDICTIONS_MARKER not in lines:
        raise SystemExit(f"{cuda_md}: no '{PREDICTIONS_MARKER}' before the predictions table")
    predictions = {}
    for line in lines[lines.index(PREDICTIONS_MARKER) + 1:]:
        if not line.startswith("|"):
            if predictions:
                break
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not cells[2].isdigit():
            continue  # the header and its rule
        mib = float(cells[1].split()[0].replace(",", ""))
        predictions[(cells[0], int(cells[2]), int(cells[3]))] = {
            "mib": mib, "range": parse_range(cells[4])}
    if not predictions:
        raise SystemExit(f"{cuda_md}: the predictions table has no rows")
    return predictions


def sample(args):
    """A sample result shaped exactly like bench --json: each prediction's midpoint."""
    runs = {}
    for (model, depth, batch), p in read_predictions(args.cuda_md).items():
        low, high = p["range"]
        rate = (low + high) / 2
        name = ("decode-" if batch == 1 else "sweep-") + model.split(":")[1]
        weight_bytes = int(p["mib"] * 2**20)
        runs.setdefault(name, []).append({
            "test": "tg128", "batch": batch, "depth": depth, "tokens_per_s": rate, "stddev": 0.0,
            "ttft_ms": 0.0, "itl_p50_ms": 1000.0 * batch / rate, "itl_p99_ms": 1000.0 * batch / rate,
            "model": model, "model_name": "sample " + model, "backend": "cuda",
            "sampling": "greedy", "weight_bytes": weight_bytes,
            "device": "(sample) NVIDIA H200", "device_bandwidth_gbs": SAMPLE_BANDWIDTH_GBS,
            "roofline_percent": 100.0 * weight_bytes * rate / batch / (SAMPLE_BANDWIDTH_GBS * 1e9)})
    with open(pathlib.Path(args.out) / "bench.jsonl", "a") as f:
        for name, results in runs.items():
            f.write(json.dumps({"run": name, "status": 0, "sample": True,
                                "command": "(dry run: the predictions' midpoints)",
                                "results": results}) + "\n")


def nvidia_smi_facts():
    fields = "name,driver_version,memory.total,compute_cap,clocks.max.sm,clocks.max.mem"
    try:
        text = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = text.strip().splitlines()[0] if text.strip() else ""
    values = [v.strip() for v in first.split(",")]
    return dict(zip(fields.split(","), values)) if len(values) == 6 else None


def clock_summary(path):
    """Median and lowest SM clock, median memory clock, top power and temperature under load."""
    loaded = []
    for line in path.read_text().splitlines()[1:] if path.exists() else []:
        cells = [c.strip() for c in line.split(",")]
        try:
            sm, mem, power, temp, util = (float(c) for c in cells[1:6])
        except (ValueError, IndexError):
            continue
        if util >= 50:
            loaded.append((sm, mem, power, temp))
    if not loaded:
        return "no samples under load (clocks.csv)"
    sm = [s[0] for s in loaded]
    return (f"under load ({len(loaded)} samples of clocks.csv): SM median "
            f"{statistics.median(sm):.0f} MHz (lowest {min(sm):.0f}), memory "
            f"{statistics.median(s[1] for s in loaded):.0f} MHz, power up to "
            f"{max(s[2] for s in loaded):.0f} W, up to {max(s[3] for s in loaded):.0f} °C")


def test_summary(path):
    """(name, outcome) per test run of tests.log: passed, failed (named), skipped, exit status."""
    lines, current = [], None
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("=== exit ") and current:
            status = int(line.split()[2])
            what = f"{current['passed']} passed, {len(current['failed'])} failed"
            if current["skipped"]:
                what += f", {current['skipped']} skipped"
            if current["failed"]:
                what += " (" + ", ".join(current["failed"][:6]) + ")"
            if status == 125:
                what = CUT[125]
            elif status in CUT:
                what += ", " + CUT[status]
            elif status != 0 and not current["failed"]:
                what += f", exit {status}"
            lines.append((current["name"], what))
            current = None
        elif line.startswith("=== "):
            current = {"name": line[4:].strip(), "passed": 0, "failed": [], "skipped": 0}
        elif current:
            if m := re.match(r"\[  PASSED  \] (\d+) test", line):
                current["passed"] = int(m.group(1))
            elif m := re.match(r"\[  SKIPPED \] (\d+) test", line):
                current["skipped"] = int(m.group(1))
            elif m := re.match(r"\[  FAILED  \] ([\w/.]+)", line):
                if not line.rstrip().endswith("listed below:"):
                    current["failed"].append(m.group(1))
    return lines


def result_rows(runs, predictions):
    rows = []
    for run in runs:
        if not run.get("results"):
            rows.append(f"| {run['run']} | — | | | | | | | {run.get('error', 'exit ' + str(run['status']))} |")
            continue
        for r in run["results"]:
            tg = r["test"].startswith("tg")
            rate, batch, depth = r["tokens_per_s"], r.get("batch", 1), r.get("depth", 0)
            step_ms = f"{1000.0 * batch / rate:.3f}" if tg and rate else ""
            roof = f"{r['roofline_percent']:.0f}" if tg and r.get("roofline_percent") else ""
            predicted, verdict = "", ""
            model = ALIASES.get(pathlib.PurePath(r["model"]).name, r["model"])
            p = predictions.get((model, depth, batch)) if tg and (
                run["run"].startswith(("decode-", "sweep-"))) else None
            if p:
                low, high = p["range"]
                predicted = f"{low:,.0f}–{high:,.0f}"
                verdict = "within" if low <= rate <= high else ("below" if rate < low else "above")
            test = r["test"] + (f" @ d{depth}" if depth else "")
            ttft = f"TTFT {r['ttft_ms']:.1f} ms" if not tg else ""
            rows.append(f"| {run['run']} | {test} | {batch} | {rate:,.0f} | {step_ms} | {roof} | "
                        f"{predicted} | {verdict} | {ttft} |")
    return rows


def report(args):
    out = pathlib.Path(args.out)
    dry = args.mode == "dry-run"
    runs = read_jsonl(out / "bench.jsonl")
    predictions = read_predictions(args.predictions) if args.predictions else {}
    results = [r for run in runs for r in run.get("results", [])]
    bandwidths = [r["device_bandwidth_gbs"] for r in results if r.get("device_bandwidth_gbs")]
    devices = {r["device"] for r in results if r.get("device")}
    facts = None if dry else nvidia_smi_facts()
    today = datetime.date.today().isoformat()
    gpu = facts["name"] if facts else (", ".join(sorted(devices)) or "GPU unknown")
    title = f"## {today} — {gpu}" + (f", driver {facts['driver_version']}" if facts else "")
    md = [title + f" (commit {args.commit})", ""]
    if dry:
        md += ["**DRY RUN: the numbers below are a sample (the predictions' midpoints fed "
               "through the writer), not a measurement.**", ""]
    if facts:
        md.append(f"- GPU: {facts['name']}, {facts['memory.total']}, compute capability "
                  f"{facts['compute_cap']}, driver {facts['driver_version']}")
        md.append(f"- Clocks: SM up to {facts['clocks.max.sm']}, memory "
                  f"{facts['clocks.max.mem']}; {clock_summary(out / 'clocks.csv')}")
    else:
        md.append("- GPU: " + ("(dry run: not read)" if dry else "nvidia-smi did not answer"))
    if bandwidths:
        md.append(f"- Roofline: the device copy bandwidth bench measured, median "
                  f"{statistics.median(bandwidths):,.0f} GB/s" + (" (sample)" if dry else ""))
    md.append(f"- Commit: {args.commit}")
    md.append(f"- Command: `{args.command}`" +
              ("" if args.mode == "build" else " (on the device tool: carry `.gpu-bundle`)"))
    for stage in args.stage:
        md.append(f"- Stage {stage}")
    for name, what in test_summary(out / "tests.log"):
        md.append(f"- Tests: {name}: " + ("planned" if dry else what))
    table = ["| run | test | batch | tokens/s | ms/step | % of roofline | predicted tokens/s | vs "
             "prediction | note |", "|---|---|---:|---:|---:|---:|---:|---|---|"]
    table += result_rows(runs, predictions)
    md += ["", "ms/step: one decode step of the whole batch (per-token latency of each sequence); "
           "% of roofline: weight bytes per step × steps/s over the measured copy bandwidth.", ""]
    md += table
    (out / "gpu.md").write_text("\n".join(md) + "\n")
    print("\n".join(table))


def check_out(args):
    """What the device tool returns: at most 8 files, 2 folders down, plain names."""
    out = pathlib.Path(args.out)
    files = [p for p in out.rglob("*") if p.is_file()]
    problems = []
    if len(files) > MAX_FILES:
        problems.append(f"{len(files)} files, over the {MAX_FILES} the device tool returns")
    for p in out.rglob("*"):
        rel = p.relative_to(out)
        if len(rel.parts) - (1 if p.is_file() else 0) > MAX_DEPTH:
            problems.append(f"{rel}: more than {MAX_DEPTH} folders down")
        if not all(NAME.match(part) for part in rel.parts):
            problems.append(f"{rel}: a name the device tool does not return")
        if p.is_symlink():
            problems.append(f"{rel}: a link, which the device tool does not return")
    if problems:
        print("error: $OUT layout: " + "; ".join(problems))
        return 1
    print(f"$OUT: {len(files)} files of at most {MAX_FILES}: "
          + ", ".join(sorted(str(f.relative_to(out)) for f in files)))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="what", required=True)
    p = commands.add_parser("record")
    p.add_argument("out"), p.add_argument("name"), p.add_argument("status", type=int)
    p.add_argument("json"), p.add_argument("command", nargs="+")
    p = commands.add_parser("sample")
    p.add_argument("out"), p.add_argument("cuda_md")
    p = commands.add_parser("report")
    p.add_argument("out")
    p.add_argument("--mode", choices=["build", "prebuilt", "dry-run"], required=True)
    p.add_argument("--commit", default="unknown"), p.add_argument("--command", required=True)
    p.add_argument("--predictions"), p.add_argument("--stage", action="append", default=[])
    p = commands.add_parser("check-out")
    p.add_argument("out")
    args = parser.parse_args()
    if args.what == "record":
        args.command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else args.command
        record(args)
    elif args.what == "sample":
        sample(args)
    elif args.what == "report":
        report(args)
    else:
        return check_out(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
