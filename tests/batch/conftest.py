"""Shared helpers for the batch-job tests: `lpx-pipeline batch` / `batch-merge` on JSONL files.

The contract under test is docs/batch.md. Every test runs on the shared tiny Llama (fast, greedy,
no chat template) in its own tmp_path.

Environment (CTest sets LPX_PIPELINE; defaults suit a run from the repository root):
  LPX_PIPELINE    the lpx-pipeline binary            (build/bin/lpx-pipeline)
  LPX_TINY_MODEL  the shared tiny Llama (no template) (../shared/models/llama-2-tiny-random.gguf)
"""
import collections
import hashlib
import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PIPELINE = os.environ.get("LPX_PIPELINE", str(ROOT / "build/bin/lpx-pipeline"))
TINY_MODEL = os.environ.get("LPX_TINY_MODEL",
                            str(ROOT.parent / "shared/models/llama-2-tiny-random.gguf"))

# Topics for varied prompts: the tiny model's answers are noise, but prompt lengths should vary.
SENTENCES = [
    "The river froze early that winter, and the mill stood silent until March.",
    "A committee of seven reviewed the proposal and asked for a smaller budget.",
    "Bees communicate the direction of flowers with a dance.",
    "The old lighthouse was converted into a museum in 1987.",
    "She rewrote the compiler's register allocator over a long weekend.",
    "Tea was once so valuable that it was kept in locked boxes.",
    "The marathon route was changed after the bridge closed for repairs.",
    "Octopuses have three hearts and blue blood.",
    "The library extended its opening hours during the exam period.",
    "A small change in the tax code moved billions in investment.",
]
TASKS = ["Summarise in one sentence:", "Translate to French:", "List three keywords for:",
         "Write a headline for:", "Explain to a child:"]


@pytest.fixture(scope="session", autouse=True)
def _binaries():
    if not pathlib.Path(PIPELINE).exists():
        pytest.fail(f"{PIPELINE} is missing (build the project, or set LPX_PIPELINE)")
    if not pathlib.Path(TINY_MODEL).exists():
        pytest.skip(f"{TINY_MODEL} is missing (the shared tiny model; or set LPX_TINY_MODEL)")


# ---------------------------------------------------------------------------------------------
# Input files

def write_jsonl(path, records):
    """Writes one line per record: a dict becomes JSON, a str is written as is (malformed lines),
    None is a blank line. Returns {expected id: line number} for the lines that are requests:
    the line's "id" or "custom_id" as text, else its 1-based line number (blank lines count)."""
    expected = {}
    with open(path, "w", encoding="utf-8") as f:
        for number, record in enumerate(records, start=1):
            if record is None:
                f.write("\n")
                continue
            if isinstance(record, str):
                f.write(record + "\n")
                continue
            f.write(json.dumps(record) + "\n")
            key = record.get("custom_id", record.get("id", number))
            expected[str(key)] = number
    return expected


def prompt_records(count, max_tokens=None, seed=0, blank_every=0):
    """`count` varied completion requests with a mix of ids: strings, integers, and none (the line
    number is the id). Every third line sets its own max_tokens (half of `max_tokens`) when
    `max_tokens` is given; the others take the job's --max-tokens. `blank_every` > 0 inserts a
    blank line after every that many requests."""
    records = []
    for i in range(count):
        n = i + seed
        record = {"prompt": f"{TASKS[n % len(TASKS)]} {SENTENCES[(n * 7) % len(SENTENCES)]} ({n})"}
        kind = i % 3
        if kind == 0:
            record["id"] = f"req-{n:05d}"
        elif kind == 1:
            record["id"] = 1_000_000 + n           # an integer id: its decimal text is the id
        # kind 2: no id; its line number is its id (integers above can never collide with it)
        if max_tokens and i % 3 == 1:
            record["max_tokens"] = max(1, max_tokens // 2)
        records.append(record)
        if blank_every and (i + 1) % blank_every == 0:
            records.append(None)
    return records


def sha256_file(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Output files

def read_jsonl(path, allow_torn_tail=False):
    """Every line of an output file, parsed. A line that does not parse, or a missing final
    newline, fails the test; with allow_torn_tail (right after a kill -9) an unterminated last line
    is dropped instead."""
    path = pathlib.Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail:
        assert allow_torn_tail, f"{path}: last line has no newline: {tail[:200]!r}"
    out = []
    for number, raw in enumerate(lines, start=1):
        try:
            value = json.loads(raw)
        except ValueError as e:
            raise AssertionError(f"{path}:{number}: torn or invalid line ({e}): {raw[:200]!r}")
        assert isinstance(value, dict), f"{path}:{number}: not an object: {raw[:200]!r}"
        out.append(value)
    return out


def line_count(path):
    """Newline-terminated lines in a file (0 when it does not exist yet)."""
    try:
        return pathlib.Path(path).read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def answer_key(line):
    """The input id an output line answers: custom_id for OpenAI lines, else id."""
    return str(line["custom_id"]) if "custom_id" in line else str(line["id"])


def outcomes(run_dir, allow_torn_tail=False):
    """(results, failures) of a run directory, parsed."""
    run_dir = pathlib.Path(run_dir)
    return (read_jsonl(run_dir / "results.jsonl", allow_torn_tail),
            read_jsonl(run_dir / "failures.jsonl", allow_torn_tail))


def assert_at_most_once(run_dir, allow_torn_tail=False):
    """No input id appears twice across results.jsonl and failures.jsonl. Returns the Counter."""
    results, failures = outcomes(run_dir, allow_torn_tail)
    # Failures of lines that are not JSON objects carry no id; they are checked by line elsewhere.
    counts = collections.Counter(answer_key(x) for x in results + failures
                                 if "id" in x or "custom_id" in x)
    twice = {k: v for k, v in counts.items() if v > 1}
    assert not twice, f"{run_dir}: ids written more than once: {sorted(twice.items())[:20]}"
    return counts


def assert_exactly_once(run_dir, expected_ids):
    """Every expected id exactly once across the two files, and no other id."""
    counts = assert_at_most_once(run_dir)
    missing = set(expected_ids) - set(counts)
    extra = set(counts) - set(expected_ids)
    assert not missing, f"{run_dir}: {len(missing)} ids never answered, e.g. {sorted(missing)[:10]}"
    assert not extra, f"{run_dir}: ids not in the input: {sorted(extra)[:10]}"


def texts(run_dir):
    """{id: text} of results.jsonl (plain lines only)."""
    results, _ = outcomes(run_dir)
    return {str(r["id"]): r["text"] for r in results}


def read_json(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def snapshot(directory):
    """{file name: (sha256, size, mtime_ns)} of every file in a directory (dot files included)."""
    directory = pathlib.Path(directory)
    out = {}
    for p in sorted(directory.iterdir()):
        st = p.stat()
        out[p.name] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns)
    return out


# ---------------------------------------------------------------------------------------------
# Running the binary

def batch(*args, model=None, timeout=300, cwd=None):
    """Runs `lpx-pipeline batch --model MODEL ARGS…` to the end; returns the CompletedProcess."""
    cmd = [PIPELINE, "batch", "--model", model or TINY_MODEL, *map(str, args)]
    return _run(cmd, timeout, cwd)


def merge(*args, timeout=120):
    """Runs `lpx-pipeline batch-merge ARGS…`; returns the CompletedProcess."""
    cmd = [PIPELINE, "batch-merge", *map(str, args)]
    return _run(cmd, timeout)


def _run(cmd, timeout, cwd=None):
    """Runs to the end; stdout and stderr decoded as they are (no newline translation: a progress
    bar's carriage returns stay visible)."""
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                          cwd=cwd)
    return subprocess.CompletedProcess(cmd, proc.returncode,
                                       proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def describe(proc):
    """A finished process for an assertion message: exit status and the ends of its output."""
    return (f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n"
            f"--- stderr\n{proc.stderr[-3000:]}")


class Job:
    """A `lpx-pipeline batch` running in the background; its output goes to a file, never to a pipe
    that could fill up."""

    def __init__(self, log_path, *args, model=None):
        self.log_path = pathlib.Path(log_path)
        self._log = open(self.log_path, "wb")
        cmd = [PIPELINE, "batch", "--model", model or TINY_MODEL, *map(str, args)]
        self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT)

    def log(self):
        return self.log_path.read_bytes().decode("utf-8", "replace")

    def wait_for_lines(self, run_dir, count, timeout=120):
        """Polls until results.jsonl + failures.jsonl hold `count` whole lines; fails if the job
        ends first. Returns the count seen."""
        run_dir = pathlib.Path(run_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = line_count(run_dir / "results.jsonl") + line_count(run_dir / "failures.jsonl")
            if seen >= count:
                return seen
            if self.process.poll() is not None:
                raise AssertionError(f"job ended (exit {self.process.returncode}) with {seen} of "
                                     f"{count} lines written:\n{self.log()[-3000:]}")
            time.sleep(0.005)
        raise AssertionError(f"no {count} lines within {timeout} s:\n{self.log()[-3000:]}")

    def signal(self, sig):
        self.process.send_signal(sig)

    def wait(self, timeout=300):
        try:
            return self.process.wait(timeout)
        finally:
            self._log.close()

    def kill9(self):
        """kill -9 and reap; returns the exit status (-9)."""
        self.process.send_signal(signal.SIGKILL)
        return self.wait()
