"""Several models per server: routing by the request's `model`, /v1/models, lazy loading,
unloading after keep_alive_s, the memory budget (503 with Retry-After, idle models evicted least
recently used first), and the pipeline reloaded on SIGHUP under load without losing a request.

Models: the shared tiny Llama (a few MB, the default where a test needs a small one) and the
default SmolLM2 file, served under several names where a test needs models of a known size.
"""
import json
import pathlib
import re
import signal
import threading
import time

import subprocess

import pytest

from conftest import MODEL, PIPELINE, TINY_MODEL, Server, request, running

SMOL_MIB = None  # weights + KV of SmolLM2 at context 2048 (measured from the server once)


def completion(srv, model, prompt="Hello", max_tokens=4, **extra):
    body = {"prompt": prompt, "max_tokens": max_tokens, **extra}
    if model is not None:
        body["model"] = model
    return request(srv, "POST", "/v1/completions", body)


def listed(srv):
    status, _, body = request(srv, "GET", "/v1/models")
    assert status == 200, body
    return {m["id"]: m for m in json.loads(body)["data"]}


def pipeline_file(tmp_path, models, engine="", name="models.toml"):
    """A server pipeline with [[models]] (name, path, context) on an ephemeral port."""
    text = ['[pipeline]\nname = "models"\n', f"[engine]\n{engine}\n",
            '[sampler]\nplugin = "greedy"\n',
            '[transport]\nplugin = "http"\nhost = "127.0.0.1"\nport = 0\n']
    for model_name, path, context in models:
        text.append(f'[[models]]\nplugin = "gguf"\nname = "{model_name}"\npath = "{path}"\n'
                    f"context_size = {context}\nmax_sequences = 2\n")
    path = tmp_path / name
    path.write_text("\n".join(text))
    return path


def run_server(path):
    if not pathlib.Path(MODEL).exists():
        pytest.skip(f"{MODEL} is missing (tools/setup.sh installs the default model)")
    return Server([str(path)], command="run")


def stop_ok(srv):
    rc = srv.stop()
    assert rc == 0, f"exit status {rc}\n{srv.log()}"


def test_serve_routes_each_request_to_the_model_it_names():
    with running("--model", MODEL, model=TINY_MODEL) as srv:
        models = listed(srv)
        tiny, smol = pathlib.Path(TINY_MODEL).stem, pathlib.Path(MODEL).stem
        assert list(models) == [tiny, smol]
        assert models[tiny]["default"] and models[tiny]["status"] == "loaded"
        assert not models[smol]["default"] and models[smol]["status"] == "unloaded"

        status, _, body = completion(srv, smol, "The capital of France is", max_tokens=3)
        assert status == 200, body
        answer = json.loads(body)
        assert answer["model"] == smol
        assert answer["choices"][0]["text"].strip().startswith("Paris"), answer
        assert listed(srv)[smol]["status"] == "loaded"

        # No model named: the default. A name nobody serves: 404 model_not_found.
        status, _, body = completion(srv, None)
        assert status == 200 and json.loads(body)["model"] == tiny, body
        status, _, body = completion(srv, "gpt-4o")
        assert status == 404, body
        error = json.loads(body)["error"]
        assert error["code"] == "model_not_found" and error["param"] == "model"
        assert tiny in error["message"] and smol in error["message"]
        # /tokenize routes too: the two models have different vocabularies.
        _, _, a = request(srv, "POST", "/tokenize", {"model": tiny, "text": "Hello world"})
        _, _, b = request(srv, "POST", "/tokenize", {"model": smol, "text": "Hello world"})
        assert json.loads(a)["tokens"] != json.loads(b)["tokens"]
        assert f'lpx_model_loaded{{model="{smol}"}} 1' in request(srv, "GET", "/metrics")[2].decode()
    assert f"model={smol} status=200" in srv.log()


def test_one_model_answers_whatever_name_the_client_sends():
    with running(model=TINY_MODEL) as srv:
        status, _, body = completion(srv, "gpt-3.5-turbo")
        assert status == 200, body
        assert json.loads(body)["model"] == pathlib.Path(TINY_MODEL).stem


def test_an_idle_model_unloads_after_keep_alive_and_loads_again(tmp_path):
    path = pipeline_file(tmp_path, [("tiny", TINY_MODEL, 512), ("smol", MODEL, 512)],
                         engine="keep_alive_s = 1")
    srv = run_server(path)
    try:
        assert completion(srv, "smol")[0] == 200
        assert listed(srv)["smol"]["status"] == "loaded"
        deadline = time.time() + 10
        while listed(srv)["smol"]["status"] != "unloaded" and time.time() < deadline:
            time.sleep(0.2)
        assert listed(srv)["smol"]["status"] == "unloaded", srv.log()
        assert listed(srv)["tiny"]["status"] == "loaded"  # the default stays
        assert "model 'smol' unloaded" in srv.log()
        assert completion(srv, "smol")[0] == 200
    finally:
        stop_ok(srv)


def smol_mib(tmp_path):
    """What one SmolLM2 at context 2048 holds, as the server measures it (MiB, rounded up)."""
    global SMOL_MIB
    if SMOL_MIB is None:
        srv = run_server(pipeline_file(tmp_path, [("smol", MODEL, 2048)], name="probe.toml"))
        try:
            text = request(srv, "GET", "/metrics")[2].decode()
        finally:
            stop_ok(srv)
        value = re.search(r'lpx_model_memory_bytes\{model="smol"\} (\d+)', text).group(1)
        SMOL_MIB = -(-int(value) // (1 << 20))
    return SMOL_MIB


def test_the_memory_budget_evicts_idle_models_and_refuses_what_cannot_fit(tmp_path):
    one = smol_mib(tmp_path)
    # Room for the tiny default and one SmolLM2, not two.
    budget = one + one // 2
    path = pipeline_file(tmp_path, [("tiny", TINY_MODEL, 512), ("a", MODEL, 2048), ("b", MODEL, 2048)],
                         engine=f"memory_budget_mb = {budget}")
    srv = run_server(path)
    try:
        assert completion(srv, "a")[0] == 200
        assert completion(srv, "b")[0] == 200  # a was idle: unloaded to make room
        models = listed(srv)
        assert models["a"]["status"] == "unloaded" and models["b"]["status"] == "loaded", models

        # While b answers a long request, a cannot load: 503 with Retry-After, and b is untouched.
        stream = {}

        def long_request():
            stream["result"] = completion(srv, "b", "1, 2, 3, 4, 5, 6, 7, 8,", max_tokens=300)

        worker = threading.Thread(target=long_request)
        worker.start()
        deadline = time.time() + 10
        while listed(srv)["b"].get("status") != "loaded" or \
                'lpx_running_sequences{model="b"} 1' not in request(srv, "GET", "/metrics")[2].decode():
            assert time.time() < deadline, srv.log()
            time.sleep(0.02)
        status, headers, body = completion(srv, "a")
        assert status == 503, body
        assert int(headers["retry-after"]) >= 1
        message = json.loads(body)["error"]["message"]
        assert "memory budget" in message and "'a'" in message, message
        worker.join(120)
        assert stream["result"][0] == 200, stream["result"]
        # b is idle now: a loads in its place.
        assert completion(srv, "a")[0] == 200
        assert listed(srv)["b"]["status"] == "unloaded"
    finally:
        stop_ok(srv)


def test_a_model_larger_than_the_budget_is_refused_at_start(tmp_path):
    path = pipeline_file(tmp_path, [("tiny", TINY_MODEL, 512), ("smol", MODEL, 2048)],
                         engine="memory_budget_mb = 20")
    done = subprocess.run([PIPELINE, "run", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "model 'smol'" in done.stderr and "memory budget" in done.stderr, done.stderr


def reload_and_wait_for(srv, text):
    """Sends SIGHUP, waits for `text` in the log, then lets requests run on for half a second."""
    srv.process.send_signal(signal.SIGHUP)
    deadline = time.time() + 20
    while text not in srv.log() and time.time() < deadline:
        time.sleep(0.05)
    assert text in srv.log(), srv.log()
    time.sleep(0.5)


def test_sighup_reloads_the_models_without_losing_a_request(tmp_path):
    path = pipeline_file(tmp_path, [("tiny", TINY_MODEL, 512), ("smol", MODEL, 512)])
    srv = run_server(path)
    results, stop = [], threading.Event()

    def client(model):
        while not stop.is_set():
            status, _, body = completion(srv, model, "Once upon a time", max_tokens=8)
            results.append((model, status, body))

    try:
        assert completion(srv, "smol")[0] == 200
        threads = [threading.Thread(target=client, args=(m,)) for m in ("tiny", "smol", "smol")]
        for t in threads:
            t.start()
        time.sleep(0.5)
        # smol changes (a new engine), a third model appears; tiny is unchanged and keeps its engine.
        pipeline_file(tmp_path, [("tiny", TINY_MODEL, 512), ("smol", MODEL, 1024), ("extra", TINY_MODEL, 256)])
        reload_and_wait_for(srv, "reloaded pipeline")
        # A broken file is refused and the server goes on with what it had.
        path.write_text(path.read_text() + "\n[[models]]\nplugin = \"gguf\"\npath = \"/no/such.gguf\"\n")
        reload_and_wait_for(srv, "reload refused")
        stop.set()
        for t in threads:
            t.join(60)
        models = listed(srv)
        assert list(models) == ["tiny", "smol", "extra"]
        assert models["smol"]["context_length"] == 1024
        assert completion(srv, "extra")[0] == 200
    finally:
        stop.set()
        stop_ok(srv)
    failures = [r for r in results if r[1] != 200]
    assert not failures, failures[:3]
    assert len(results) > 20 and {m for m, _, _ in results} == {"tiny", "smol"}
    assert srv.log().count("loading model 'tiny'") == 1  # the default kept its engine


def test_info_records_the_run(tmp_path):
    import hashlib
    path = pipeline_file(tmp_path, [("tiny", TINY_MODEL, 512), ("smol", MODEL, 512)])
    srv = run_server(path)
    try:
        status, _, body = request(srv, "GET", "/v1/info")
        assert status == 200, body
        info = json.loads(body)
        assert info["lpx"]["version"] and info["lpx"]["commit"]
        assert info["os"]["kernel"].startswith("Linux") and info["os"]["name"]
        assert info["cpu"]["model"] and info["cpu"]["isa"] and info["cpu"]["cores"] >= 1
        assert info["cpu"]["backend"] == "cpu"
        # No GPU machine here: no devices; a GPU host lists each by name.
        assert isinstance(info["gpu"]["devices"], list) and "cuda_build" in info["gpu"]
        by_name = {m["name"]: m for m in info["models"]}
        for name, file in (("tiny", TINY_MODEL), ("smol", MODEL)):
            assert by_name[name]["sha256"] == hashlib.sha256(pathlib.Path(file).read_bytes()).hexdigest()
            assert by_name[name]["path"] == file
        assert "[[models]]" in info["pipeline"] and "name = 'smol'" in info["pipeline"]
        assert [m["name"] for m in info["served_models"]] == ["tiny", "smol"]
        assert info["served_models"][0]["status"] == "loaded"
        assert "run record: {" in srv.log()
    finally:
        stop_ok(srv)


def test_adapters_are_listed_and_chosen_per_request(tmp_path):
    """`serve --adapter NAME=FILE`: /v1/models lists "MODEL:NAME" with its parent (as vLLM's
    multi-LoRA does), a request naming it runs with the adapter, a name the model lacks is a
    404, and requests for the base and the adapter answer side by side as they do alone."""
    root = pathlib.Path(__file__).resolve().parents[2]
    base = tmp_path / "qwen3.gguf"
    subprocess.run([PIPELINE, "convert", str(root / "tests/fixtures/hf/qwen3"), "-o", str(base)],
                   check=True, capture_output=True)
    adapter = root / "tests/fixtures/lora/qwen3-lora-r4.gguf"
    with running("--adapter", f"full={adapter}", "--adapter", f"half={adapter}@0.5", model=str(base)) as srv:
        models = listed(srv)
        assert list(models) == ["qwen3", "qwen3:full", "qwen3:half"], models
        assert models["qwen3:full"]["parent"] == "qwen3"
        assert models["qwen3:full"]["root"] == str(adapter)
        assert "parent" not in models["qwen3"]

        def tokens(model):
            status, _, body = completion(srv, model, "Hello there", max_tokens=8, temperature=0, logprobs=1)
            assert status == 200, body
            answer = json.loads(body)
            assert answer["model"] == (model or "qwen3"), answer
            return answer["choices"][0]["logprobs"]["tokens"], answer["choices"][0]["logprobs"]["token_logprobs"]

        alone = {m: tokens(m) for m in (None, "qwen3:full", "qwen3:half")}
        assert alone["qwen3:full"][1] != alone[None][1], "the adapter changes the answer"
        assert alone["qwen3:full"][1] != alone["qwen3:half"][1], "so does its scale"
        # With one model served, any other name means it; but not an adapter it lacks.
        status, _, body = completion(srv, "anything")
        assert status == 200 and json.loads(body)["model"] == "qwen3", body
        status, _, body = completion(srv, "qwen3:nope")
        assert status == 404 and b"qwen3:full" in body, body

        # Concurrently: the engine batches them together, adapters mixed.
        results = {}
        threads = [threading.Thread(target=lambda m=m, i=i: results.__setitem__((m, i), tokens(m)))
                   for i in range(2) for m in (None, "qwen3:full", "qwen3:half")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for (m, _), got in results.items():
            assert got[0] == alone[m][0], (m, got, alone[m])
        # Metrics: each adapter has its own request histograms; the engine's numbers (loaded,
        # memory, tokens) are its model's, counted once.
        status, _, body = request(srv, "GET", "/metrics")
        assert status == 200
        text = body.decode()
        assert 'lpx_time_to_first_token_seconds_count{model="qwen3:full"}' in text
        assert 'lpx_model_loaded{model="qwen3"} 1' in text
        assert 'lpx_model_loaded{model="qwen3:full"}' not in text
        assert 'lpx_generated_tokens_total{model="qwen3:full"}' not in text
