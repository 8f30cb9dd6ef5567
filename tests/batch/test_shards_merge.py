"""--shard I/N splits the input by id hash into disjoint parts; batch-merge combines the shards'
run directories into one equal to an unsharded run, and lists what no shard answered."""
import hashlib

import pytest

from conftest import (assert_exactly_once, batch, describe, merge, outcomes, prompt_records,
                      read_json, texts, write_jsonl)

COUNT = 150
SHARDS = 3


def fnv1a64(text):
    h = 0xcbf29ce484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The same input run unsharded and as three shards. Returns (source, expected ids, single
    run dir, [shard run dirs], base directory)."""
    base = tmp_path_factory.mktemp("shards")
    source = base / "prompts.jsonl"
    records = prompt_records(COUNT, max_tokens=12, blank_every=40)
    records.insert(7, "not json: fails in whichever shard takes line 8")
    expected = write_jsonl(source, records)
    single = base / "single"
    proc = batch("--input", source, "--run-dir", single, "--max-tokens", 12)
    assert proc.returncode == 0, describe(proc)
    shards = []
    for i in range(SHARDS):
        run_dir = base / f"shard-{i}"
        proc = batch("--input", source, "--run-dir", run_dir, "--max-tokens", 12,
                     "--shard", f"{i}/{SHARDS}")
        assert proc.returncode == 0, describe(proc)
        shards.append(run_dir)
    return source, expected, single, shards, base


def test_shards_are_disjoint_non_empty_and_cover_the_input(sharded):
    source, expected, _, shards, _ = sharded
    seen = {}
    for i, run_dir in enumerate(shards):
        results, failures = outcomes(run_dir)
        ids = [str(r["id"]) for r in results] + [str(f["id"]) for f in failures if "id" in f]
        assert ids, f"shard {i} is empty"
        for key in ids:
            assert key not in seen, f"{key} in shards {seen[key]} and {i}"
            seen[key] = i
        assert read_json(run_dir / "run.json")["shard"] == f"{i}/{SHARDS}"
        assert read_json(run_dir / "summary.json")["status"] == "complete"
    assert set(seen) == set(expected)
    # The split is the documented one: FNV-1a 64 of the id, modulo N.
    for key, shard in seen.items():
        assert fnv1a64(key) % SHARDS == shard, key


def test_merge_equals_the_unsharded_run(sharded):
    source, expected, single, shards, base = sharded
    merged = base / "merged"
    proc = merge(*shards, "--output", merged)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(merged, expected)
    assert texts(merged) == texts(single)
    assert len(texts(single)) == COUNT
    _, failures = outcomes(merged)
    assert [f["line"] for f in failures] == [8] and failures[0]["code"] == "invalid_request"
    assert (merged / "missing.txt").read_text().split() == []
    summary = read_json(merged / "summary.json")
    assert summary["status"] == "complete", summary
    assert summary["counts"]["missing"] == 0 and summary["counts"]["duplicates"] == 0
    run = read_json(merged / "run.json")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert run["input_sha256"] == digest and run["shard"] == "", run


def test_merge_of_two_of_three_lists_the_missing_shard(sharded):
    source, expected, single, shards, base = sharded
    merged = base / "partial"
    proc = merge(shards[0], shards[1], "--output", merged)
    assert proc.returncode == 1, describe(proc)
    results, failures = outcomes(shards[2])
    shard_2_ids = {str(r["id"]) for r in results} | {str(f["id"]) for f in failures if "id" in f}
    missing = (merged / "missing.txt").read_text().split()
    assert len(missing) == len(set(missing))
    assert set(missing) == shard_2_ids
    assert "missing.txt" in proc.stderr or "missing" in proc.stderr, proc.stderr

    # The merged directory is a run directory of the whole input: --resume finishes it.
    proc = batch("--input", source, "--run-dir", merged, "--max-tokens", 12, "--resume")
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(merged, expected)
    assert texts(merged) == texts(single)
    assert read_json(merged / "summary.json")["status"] == "complete"


def test_merge_drops_ids_answered_twice(sharded):
    """The same shard passed twice (e.g. a rerun that wrote a second directory): one answer each."""
    _, expected, single, shards, base = sharded
    merged = base / "twice"
    proc = merge(shards[0], shards[0], shards[1], shards[2], "--output", merged)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(merged, expected)
    assert texts(merged) == texts(single)
    results, failures = outcomes(shards[0])
    summary = read_json(merged / "summary.json")
    assert summary["counts"]["duplicates"] == len(results) + len(failures), summary


def test_merge_refuses_runs_of_different_inputs(sharded, tmp_path):
    _, _, _, shards, _ = sharded
    other = tmp_path / "other.jsonl"
    write_jsonl(other, prompt_records(10, seed=3))
    other_run = tmp_path / "other-run"
    proc = batch("--input", other, "--run-dir", other_run, "--max-tokens", 2)
    assert proc.returncode == 0, describe(proc)
    merged = tmp_path / "merged"
    proc = merge(shards[0], other_run, "--output", merged)
    assert proc.returncode == 1, describe(proc)
    assert "input" in proc.stderr, proc.stderr
    assert not merged.exists() or not any(merged.iterdir())
