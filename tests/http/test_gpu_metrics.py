"""GPU gauges in /metrics from NVML, driven by a fake libnvidia-ml (tests/fakes/fake_nvml.c) on
machines without a GPU: gpu_metrics = "on" loads it whatever the backend; without NVML "on"
refuses to start, saying why; "auto" with a CPU backend shows no GPU gauges."""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import PIPELINE, ROOT, TINY_MODEL, request, running

FAKE_NVML = os.environ.get("LPX_FAKE_NVML", str(ROOT / "build/tests/libfake-nvml.so"))


def samples(body):
    out = {}
    for line in body.decode().splitlines():
        m = re.match(r"^(lpx_gpu_\w+)(\{[^}]*\})\s+(\S+)$", line)
        if m:
            out[m.group(1) + m.group(2)] = float(m.group(3))
    return out


def test_the_gauges_of_every_gpu_nvml_reports(monkeypatch):
    assert pathlib.Path(FAKE_NVML).exists(), FAKE_NVML
    monkeypatch.setenv("LPX_NVML_LIBRARY", FAKE_NVML)
    with running("--set", "transport.gpu_metrics=on") as srv:
        status, _, body = request(srv, "GET", "/metrics")
        assert status == 200
        got = samples(body)
        gpu0 = '{gpu="0",name="Fake H200 \\"0\\"",uuid="GPU-fake-0"}'
        gpu1 = '{gpu="1",name="Fake H200 \\"1\\"",uuid="GPU-fake-1"}'
        assert got["lpx_gpu_memory_used_bytes" + gpu0] == 10 * 2**30
        assert got["lpx_gpu_memory_used_bytes" + gpu1] == 11 * 2**30
        assert got["lpx_gpu_memory_total_bytes" + gpu0] == 150 * 2**30
        assert got["lpx_gpu_utilization_ratio" + gpu1] == pytest.approx(0.43)
        assert got["lpx_gpu_temperature_celsius" + gpu0] == 55
        assert got["lpx_gpu_power_watts" + gpu0] == 312.5
        assert "lpx_gpu_power_watts" + gpu1 not in got, "GPU 1 does not report power"
        assert got["lpx_gpu_sm_clock_hertz" + gpu0] == 1.98e9
        assert got["lpx_gpu_throttle_reasons" + gpu0] == 4
        assert got['lpx_gpu_throttled{gpu="0",name="Fake H200 \\"0\\"",uuid="GPU-fake-0",reason="sw_power_cap"}'] == 1
        assert got['lpx_gpu_throttled{gpu="0",name="Fake H200 \\"0\\"",uuid="GPU-fake-0",reason="hw_slowdown"}'] == 0
        assert body.decode().count("# TYPE lpx_gpu_memory_used_bytes gauge") == 1


def test_on_without_nvml_refuses_to_start_and_says_why(monkeypatch):
    monkeypatch.setenv("LPX_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    result = subprocess.run([PIPELINE, "serve", "--model", TINY_MODEL, "--port", "0",
                             "--set", "transport.gpu_metrics=on"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert 'gpu_metrics = "on": NVML cannot be loaded' in result.stderr, result.stderr


def test_auto_with_a_cpu_backend_shows_no_gpu_gauges(monkeypatch):
    monkeypatch.setenv("LPX_NVML_LIBRARY", FAKE_NVML)
    with running() as srv:
        status, _, body = request(srv, "GET", "/metrics")
        assert status == 200 and b"lpx_gpu_" not in body
