#!/usr/bin/env bash
# The one-call GPU check: build for sm_90, run every GPU test, then the GPU benchmark, and
# print a short table (tokens/s, ms/token, % of the measured bandwidth roofline). Full logs
# and JSON go to $OUT when set (the device tool's folder), else build-gpu-check/. Sized to
# finish in under 8 minutes on one H200.
#
#   tools/gpu-check.sh              configure and build here (needs tools/setup.sh's packages)
#   tools/gpu-check.sh --prebuilt   use the build carried in .gpu-bundle/ (tools/gpu-bundle.sh
#                                   makes it on a machine with the packages; docs/cuda.md).
#                                   On the device tool: carry [".gpu-bundle"], timeout ~540 s.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/build-gpu-check}
mkdir -p "$out"
started=$SECONDS
say() { printf '== %s (%ds)\n' "$*" $((SECONDS - started)) | tee -a "$out/summary.txt"; }

if [[ ${1:-} == --prebuilt ]]; then
  bundle=$root/.gpu-bundle
  [[ -x $bundle/build/bin/lpx-pipeline ]] || { echo "error: no $bundle (run tools/gpu-bundle.sh)" >&2; exit 1; }
  # The tests find plugins, the tiny model and models/ through these instead of the paths of
  # the machine the build was made on (tests/engine/engine_test_support.cpp).
  export LPX_TEST_PLUGIN_DIR=$bundle/build/lib/lpx/plugins LPX_TEST_SHARED_DIR=$bundle/shared
  export LPX_TEST_MODELS_DIR=$root/models
  build_dir=$bundle/build
  export LD_LIBRARY_PATH=$bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # The machine's C++ runtime unless it is older than the build's (GCC 12: GLIBCXX_3.4.30).
  if ! grep -q GLIBCXX_3.4.30 "$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')" 2>/dev/null; then
    LD_LIBRARY_PATH=$bundle/lib-fallback:$LD_LIBRARY_PATH
  fi
else
  build_dir=$root/build-gpu
  say "configure + build (sm_90)"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLPX_CUDA=ON \
    -DLPX_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
  cmake --build build-gpu --parallel "$(nproc)" --target lpx-pipeline cuda_kernel_tests \
    cuda_engine_tests >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
fi
bin=$build_dir/bin/lpx-pipeline
# Here a GPU test that cannot find a usable GPU fails rather than skips (gpu_test_support.hpp).
export LPX_EXPECT_GPU=1

# cuBLAS is the machine's: where the toolkit's lib64 lacks it, a pip-installed one will do.
if ldd "$build_dir"/lib/lpx/plugins/lpx-cuda.so | grep -q "not found"; then
  pip_cublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null || true)
  [[ -n $pip_cublas ]] && export LD_LIBRARY_PATH=$pip_cublas:$LD_LIBRARY_PATH
  say "lpx-cuda.so: missing libraries, trying ${pip_cublas:-(no pip cuBLAS found)}"
  ldd "$build_dir"/lib/lpx/plugins/lpx-cuda.so | grep "not found" | tee -a "$out/summary.txt"
fi

say "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee -a "$out/summary.txt"
timeout 30 "$bin" doctor >"$out/doctor.txt" 2>&1
grep -iE "driver|runtime|bandwidth|kernel image|usable" "$out/doctor.txt" | tee -a "$out/summary.txt"

# Time limits sum to under 540 s, the budget of one device call with start-up.
failed=0
for t in cuda_kernel_tests:120 cuda_engine_tests:150; do
  limit=${t#*:} t=${t%:*}
  say "$t"
  timeout "$limit" "$build_dir/tests/$t" --gtest_brief=1 >"$out/$t.log" 2>&1
  rc=$?
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[ .* \] max|tests ran|Failure|error" "$out/$t.log" | head -40 | tee -a "$out/summary.txt"
  ((rc == 0)) || { failed=1; echo "$t: exit $rc" | tee -a "$out/summary.txt"; }
done

# Batch-1 decode and aggregate throughput; synthetic bf16 models of the real shapes.
bench() {  # NAME SECONDS BATCHES MODEL [BENCH ARGUMENTS...]
  local name=$1 limit=$2 batches=$3 model=$4
  shift 4
  say "bench $name"
  timeout "$limit" "$bin" --log-level warn bench --device cuda --model "$model" -p 512 -n 128 \
    --batch "$batches" --reps 3 --json "$@" >"$out/bench-$name.json" 2>"$out/bench-$name.err" ||
    { failed=1; tail -5 "$out/bench-$name.err" | tee -a "$out/summary.txt"; }
}
smollm2=models/SmolLM2-135M-Instruct.Q4_1.gguf
[[ -f $smollm2 ]] || smollm2=synth:smollm2-135m:Q4_1  # not carried (98 MB): same shapes and bytes
bench smollm2-q4_1 50 1,8,32,64 "$smollm2"
# What kernel overlap (programmatic dependent launch, on by default) is worth at batch 1.
bench smollm2-q4_1-no-overlap 25 1 "$smollm2" --option overlap=false
# The same with sampling picked on the device (sampling programs): its cost over greedy.
bench smollm2-q4_1-sampled 30 1,8,32,64 "$smollm2" --sample temperature=0.8 top_p=0.95 seed=1
bench qwen2.5-0.5b-bf16 55 1,8,32,64 synth:qwen2.5-0.5b:BF16
bench llama-3.2-1b-bf16 80 1,8,32,64 synth:llama-3.2-1b:BF16

say "table"
python3 - "$out" <<'PY' | tee -a "$out/summary.txt"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("| model | test | batch | tokens/s | ms/token | % of roofline |")
print("|---|---|---:|---:|---:|---:|")
for f in sorted(out.glob("bench-*.json")):
    try:
        rows = json.loads(f.read_text())
    except ValueError:
        print(f"| {f.stem[6:]} | (no result) | | | | |")
        continue
    for r in rows:
        tps = r["tokens_per_s"]
        per_token = 1000.0 * r.get("batch", 1) / tps if r["test"].startswith("tg") and tps else float("nan")
        roof = r.get("roofline_percent") or float("nan")
        name = f.stem[6:] + (" (synthetic)" if r["model"].startswith("synth:") else "")
        print(f"| {name} | {r['test']} | {r.get('batch', 1)} | {tps:.0f} | {per_token:.3f} | {roof:.0f} |")
PY
say "done, exit $failed"
exit $failed
