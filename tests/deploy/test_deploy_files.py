"""deploy/ checked offline: every Kustomize directory builds with `kubectl kustomize` and its
manifests validate against the Kubernetes 1.30 schemas (kubernetes-validate, strict); the
Dockerfiles pass hadolint, the shell scripts shellcheck; the compose file, the pipeline the
Deployment mounts and the manifests agree with each other and with LPX; every deploy/ path
docs/deploy.md names exists."""
import pathlib
import re
import shutil
import subprocess
import tomllib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES_VERSION = "1.30.0"
KUSTOMIZATIONS = sorted(p.parent for p in (DEPLOY / "k8s").rglob("kustomization.yaml"))


def tool(name):
    path = shutil.which(name)
    assert path, f"{name} is not installed (tools/setup.sh installs it)"
    return path


def build(directory):
    result = subprocess.run([tool("kubectl"), "kustomize", str(directory)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def test_there_are_the_server_overlays_and_the_batch_job():
    names = {str(d.relative_to(DEPLOY / "k8s")) for d in KUSTOMIZATIONS}
    assert {"base", "overlays/cpu", "overlays/gpu", "batch/shards", "batch/merge", "models"} <= names


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=lambda d: str(d.relative_to(DEPLOY)))
def test_kustomization_builds_and_validates(directory, tmp_path):
    documents = build(directory)
    assert documents
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(yaml.safe_dump_all(documents))
    result = subprocess.run([tool("kubernetes-validate"), "-k", KUBERNETES_VERSION, "--strict",
                             "--quiet", str(rendered)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    for doc in documents:
        spec = doc.get("spec", {}).get("template", {}).get("spec")
        if spec is None:
            continue
        assert spec["securityContext"]["runAsNonRoot"] is True, doc["metadata"]["name"]
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]


def by_kind(documents):
    return {doc["kind"]: doc for doc in documents}


def test_the_server_probes_drain_and_pipeline_agree():
    docs = by_kind(build(DEPLOY / "k8s/base"))
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    pipeline = tomllib.loads((DEPLOY / "k8s/base/pipeline.toml").read_text())
    transport = pipeline["transport"]
    assert container["ports"][0]["containerPort"] == transport["port"]
    assert transport["host"] == "0.0.0.0" and transport["api_key_file"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert transport["api_key_file"].startswith(mounts["api-keys"] + "/")
    assert pipeline["model"]["path"].startswith(mounts["models"] + "/")
    assert args_pipeline(container) == mounts["pipeline"] + "/pipeline.toml"
    # SIGTERM: the preStop pause, the drain, and the up to 10 s LPX gives the requests it then
    # cancels must all end before Kubernetes kills the pod.
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    assert pause + transport["drain_timeout_s"] + 10 < pod["terminationGracePeriodSeconds"]
    assert "replicas" not in docs["Deployment"]["spec"], "the autoscaler owns the replica count"
    # The autoscaler's metric must be scrapable without a key (Prometheus sends none).
    assert transport["metrics_without_key"] is True
    # As many kernel threads as requested CPUs.
    threads = container["args"][container["args"].index("--set") + 1]
    assert threads == f"backend.threads={container['resources']['requests']['cpu']}"
    assert docs["ConfigMap"]["data"]["pipeline.toml"] == (DEPLOY / "k8s/base/pipeline.toml").read_text()
    selector = docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == selector
    assert docs["Service"]["spec"]["selector"] == selector
    hpa = docs["HorizontalPodAutoscaler"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == docs["Deployment"]["metadata"]["name"]
    metric = hpa["metrics"][0]["pods"]["metric"]["name"]
    assert metric in (ROOT / "docs/http-server.md").read_text(), f"{metric} is no LPX metric"


def args_pipeline(container):
    args = container["args"]
    assert args[0] == "run"
    return args[1]


def test_the_gpu_overlay_asks_for_a_gpu_and_the_cuda_backend():
    container = by_kind(build(DEPLOY / "k8s/overlays/gpu"))["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert not any(a.startswith("backend.threads") for a in container["args"])
    assert "backend.plugin=cuda" in container["args"]
    assert container["image"].endswith(":cuda")


def test_the_batch_shards_match_their_count_and_the_merge_reads_them_all():
    job = by_kind(build(DEPLOY / "k8s/batch/shards"))["Job"]["spec"]
    assert job["completionMode"] == "Indexed"
    args = job["template"]["spec"]["containers"][0]["args"]
    shard = args[args.index("--shard") + 1]
    assert shard == f"$(SHARD)/{job['completions']}"
    assert "--resume" in args
    merge = by_kind(build(DEPLOY / "k8s/batch/merge"))["Job"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert merge[0] == "batch-merge"
    assert [a for a in merge if a.startswith("/data/runs/shard-")] == \
        [f"/data/runs/shard-{i}" for i in range(job["completions"])]


def test_the_cpu_overlay_runs_a_thread_per_cpu_with_guaranteed_resources():
    container = by_kind(build(DEPLOY / "k8s/overlays/cpu"))["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    resources = container["resources"]
    assert resources["requests"] == resources["limits"]
    assert f"backend.threads={resources['limits']['cpu']}" in container["args"]


def test_the_models_loader_fetches_what_setup_fetches():
    job = by_kind(build(DEPLOY / "k8s/models"))["Job"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in job["env"]}
    setup = (ROOT / "tools/setup.sh").read_text()
    assert f'"{env["PACKAGE"]}:{env["MEMBER"]}"' in setup
    assert env["SHA256"] in setup


def test_dockerfiles_pass_hadolint():
    files = [str(p) for p in sorted((DEPLOY / "docker").glob("Dockerfile.*"))]
    assert len(files) == 2
    result = subprocess.run([tool("hadolint"), "--config", str(DEPLOY / "docker/.hadolint.yaml"), *files],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfiles_run_lpx_unprivileged_with_a_health_check():
    for path in sorted((DEPLOY / "docker").glob("Dockerfile.*")):
        text = path.read_text()
        assert re.search(r"^USER 10001:10001$", text, re.MULTILINE), path
        assert 'ENTRYPOINT ["lpx-pipeline"]' in text, path
        assert "/health" in text.split("HEALTHCHECK", 1)[1], path
        assert "AS build" in text, f"{path}: multi-stage"


def test_shell_scripts_pass_shellcheck():
    scripts = [str(p) for p in sorted((DEPLOY / "slurm").iterdir())] + \
              [str(DEPLOY / "docker/runtime-packages.sh")]
    result = subprocess.run([tool("shellcheck"), *scripts], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_slurm_array_matches_its_shard_count():
    text = (DEPLOY / "slurm/lpx-batch-shards.sbatch").read_text()
    last = int(re.search(r"#SBATCH --array=0-(\d+)", text).group(1))
    assert f"shards={last + 1}" in text


def test_compose_reserves_a_gpu_and_runs_read_only():
    compose = yaml.safe_load((DEPLOY / "docker/compose.yaml").read_text())
    service = compose["services"]["lpx"]
    assert service["read_only"] is True and service["user"] == "10001:10001"
    assert service["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    assert "/health" in " ".join(service["healthcheck"]["test"])
    assert (DEPLOY / "docker" / service["build"]["context"] / service["build"]["dockerfile"]).exists()
    assert service["command"][0] == "serve"


def test_every_deploy_path_the_guide_names_exists():
    guide = (ROOT / "docs/deploy.md").read_text()
    named = set(re.findall(r"(?<![\w/])deploy/[A-Za-z0-9_./-]+[A-Za-z0-9_]", guide))
    assert len(named) >= 8, named
    missing = [p for p in sorted(named) if not (ROOT / p).exists()]
    assert not missing, missing


def test_the_deployments_pipeline_runs_and_drains_on_sigterm(tmp_path):
    """The pipeline the ConfigMap carries, with this machine's model and a key file in place of
    the volumes: it starts listening on all addresses with a key required, and exits 0 on
    SIGTERM, as the pod's shutdown expects."""
    import os
    import signal
    binary = os.environ.get("LPX_PIPELINE", str(ROOT / "build/bin/lpx-pipeline"))
    model = ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
    assert model.exists(), "tools/setup.sh installs the default model"
    keys = tmp_path / "api-keys"
    keys.write_text("sekrit id=ops rpm=60\n")
    process = subprocess.Popen(
        [binary, "run", str(DEPLOY / "k8s/base/pipeline.toml"), "--set", f"model.path={model}",
         "--set", f"transport.api_key_file={keys}", "--set", "transport.port=0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        for line in process.stderr:
            if "listening on" in line:
                break
        assert "listening on http://0.0.0.0:" in line and "API key required" in line, line
        port = int(re.search(r":(\d+) ", line).group(1))
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
            assert response.status == 200  # no key: Prometheus can scrape it
            assert "lpx_queue_depth{" in response.read().decode()
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
