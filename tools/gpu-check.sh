#!/usr/bin/env bash
# The one-call GPU check, sized for one short lease of the device machine (15 minutes in all,
# start-up included; docs/cuda.md, "The one-call GPU check"). Four stages in priority order,
# each with its own time budget, 420 s in all; a stage that runs out is cut where it is and the
# next one starts:
#   smoke   60 s  doctor --require-gpu (no usable GPU stops the check here) and a few kernel tests
#   decode 100 s  batch-1 decode at context depth 0, 512 and 2048 (and pp512): SmolLM2-135M Q4_1
#                 and bf16 models shaped like Qwen2.5-0.5B and Llama-3.2-1B
#   tests  170 s  every GPU test the smoke stage did not run
#   sweep   90 s  aggregate decode at batch 8/32/64; the persistent kernel; batch 1 without kernel
#                 overlap; steps not queued behind each other; device sampling
# $OUT (the device tool's folder; default build-gpu-check/) gets these 7 flat files and no others
# (the device tool returns at most 8):
#   summary.txt  what ran, how long each stage took, and the results table
#   gpu.md       a section ready to paste into docs/perf/gpu.md (GPU, driver, clocks, commit,
#                command, tokens/s, ms per step, % of the bandwidth roofline, the prediction)
#   doctor.txt   nvidia-smi and `lpx-pipeline doctor`
#   tests.log    the GPU tests' output
#   bench.jsonl  one line per bench run: its name, command, exit status and JSON results
#   bench.log    the bench runs' stderr
#   clocks.csv   nvidia-smi every half second while benches run: SM and memory clocks, power, load
#
#   tools/gpu-check.sh [--stages LIST]             configure and build here for sm_90, then check
#   tools/gpu-check.sh --prebuilt [--stages LIST]  the build carried in .gpu-bundle/ (made by
#                                                  tools/gpu-bundle.sh); on the device tool:
#                                                  carry [".gpu-bundle"], timeout_s 480
#   OUT=DIR tools/gpu-check.sh --dry-run           every step that needs no GPU: arguments, the
#                                                  bundle (when there is one) and the carry size,
#                                                  the stage plan, the report fed with a sample
#                                                  result, the $OUT layout; no build needed
# LIST: stages to run, comma-separated, e.g. --stages decode,sweep to redo just the numbers.
# Exit status: 0 every stage that ran passed; 1 a test or bench failed or a stage ran out of time;
# 2 bad arguments or an unusable bundle.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

usage() { sed -n '/^#   tools/,/^# 2 bad/p' "$0" | sed 's/^# \{0,1\}//'; }

mode=build
stages=smoke,decode,tests,sweep
while (($#)); do
  case $1 in
    --prebuilt) mode=prebuilt ;;
    --dry-run) mode=dry-run ;;
    --stages) [[ $# -ge 2 ]] || { echo "error: --stages wants a list, e.g. decode,sweep" >&2; exit 2; }
      stages=$2; shift ;;
    --stages=*) stages=${1#--stages=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

# --- the plan: stages, budgets, files ---------------------------------------------------------
stage_order=(smoke decode tests sweep)
declare -A budget=([smoke]=60 [decode]=100 [tests]=170 [sweep]=90)
total_budget=420
declare -A wanted=()
for s in ${stages//,/ }; do
  [[ -n ${budget[$s]:-} ]] || { echo "error: --stages: unknown stage '$s' (known: ${stage_order[*]})" >&2; exit 2; }
  wanted[$s]=1
done
sum=0
for s in "${stage_order[@]}"; do sum=$((sum + budget[$s])); done
((sum <= total_budget)) || { echo "error: stage budgets add up to $sum s, over $total_budget s" >&2; exit 2; }

out=${OUT:-$root/build-gpu-check}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
out_files=(summary.txt gpu.md doctor.txt tests.log bench.jsonl bench.log clocks.csv)
for f in "${out_files[@]}"; do rm -f "$out/$f"; done  # only ours: $OUT may hold other things
for f in "${out_files[@]}"; do : >"$out/$f"; done
work=$(mktemp -d)
sampler=
trap '[[ -n $sampler ]] && kill "$sampler" 2>/dev/null; rm -rf "$work"' EXIT

started=$SECONDS
# Progress goes to summary.txt and the terminal (fd 3), also from steps whose output is redirected.
exec 3>&1
say() { printf '== %s (%ds)\n' "$*" $((SECONDS - started)) | tee -a "$out/summary.txt" >&3; }
note() { printf '   %s\n' "$*" | tee -a "$out/summary.txt" >&3; }
report=(python3 "$root/tools/gpu_report.py")

# --- the build: carried, made here, or (dry run) none -----------------------------------------
bundle=${LPX_GPU_BUNDLE:-$root/.gpu-bundle}
bundle_files=(MANIFEST build/bin/lpx-pipeline build/tests/cuda_kernel_tests
  build/tests/cuda_engine_tests build/lib/lpx/plugins/lpx-cuda.so build/lib/lpx/plugins/lpx-cpu.so
  build/lib/lpx/plugins/lpx-gguf.so build/lib/lpx/plugins/lpx-greedy.so
  shared/models/llama-2-tiny-random.gguf)
carry_limit_kib=$((64 * 1024))

# What the device tool carries besides the bundle: tracked and untracked-not-ignored files.
tree_kib() {
  git ls-files -z --cached --others --exclude-standard 2>/dev/null |
    du -ck --apparent-size --files0-from=- 2>/dev/null | tail -1 | cut -f1
}
tree_commit() { echo "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +dirty)"; }

# check_bundle DIR [carry]: every file the check needs, a manifest naming the commit, and with
# `carry` (here, before the trip) the bundle plus the working tree within what the tool carries.
# On the device machine the tree has arrived already, and may not be a git checkout at all.
check_bundle() {
  local dir=$1 carry=${2:-} problems=() f kib=0 tree=0
  for f in "${bundle_files[@]}"; do [[ -s $dir/$f ]] || problems+=("$f is missing or empty"); done
  for f in build/bin/lpx-pipeline build/tests/cuda_kernel_tests build/tests/cuda_engine_tests; do
    [[ -s $dir/$f && ! -x $dir/$f ]] && problems+=("$f is not executable")
  done
  [[ -s $dir/MANIFEST ]] && ! grep -q '^commit=' "$dir/MANIFEST" && problems+=("MANIFEST names no commit")
  kib=$(du -sk --apparent-size "$dir" | cut -f1)
  if [[ -n $carry ]]; then
    tree=$(tree_kib)
    ((kib + tree <= carry_limit_kib)) ||
      problems+=("bundle ${kib} KiB + working tree ${tree} KiB exceed the ${carry_limit_kib} KiB the device tool carries")
  fi
  if ((${#problems[@]})); then
    printf 'error: bundle %s: %s\n' "$dir" "${problems[@]}" | tee -a "$out/summary.txt" >&2
    return 1
  fi
  note "bundle $dir: complete, $((kib / 1024)) MiB${carry:+ + tree $((tree / 1024)) MiB of the 64 MiB carried};" \
    "$(grep -E '^(commit|built)=' "$dir/MANIFEST" | tr '\n' ' ')"
}

commit=unknown
case $mode in
  prebuilt)
    [[ -d $bundle ]] || { echo "error: no $bundle (run tools/gpu-bundle.sh here, then carry it)" >&2; exit 2; }
    check_bundle "$bundle" || exit 2
    commit=$(sed -n 's/^commit=//p' "$bundle/MANIFEST")
    # The tests find plugins, the tiny model and models/ through these instead of the paths of
    # the machine the build was made on (tests/engine/engine_test_support.cpp).
    export LPX_TEST_PLUGIN_DIR=$bundle/build/lib/lpx/plugins LPX_TEST_SHARED_DIR=$bundle/shared
    export LPX_TEST_MODELS_DIR=$root/models
    build_dir=$bundle/build
    export LD_LIBRARY_PATH=$bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    # The machine's C++ runtime unless it is older than the build's (GCC 12: GLIBCXX_3.4.30): ask
    # the loader which libstdc++ the binary gets, rather than trusting ldconfig to be on PATH.
    system_cxx=$(ldd "$bundle/build/bin/lpx-pipeline" 2>/dev/null | awk '/libstdc\+\+\.so\.6/ {print $3; exit}')
    if [[ -z $system_cxx || $system_cxx == "not" ]] || ! grep -q GLIBCXX_3.4.30 "$system_cxx" 2>/dev/null; then
      LD_LIBRARY_PATH=$bundle/lib-fallback:$LD_LIBRARY_PATH
    fi
    ;;
  build)
    build_dir=$root/build-gpu
    say "configure + build (sm_90)"
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLPX_CUDA=ON \
      -DLPX_CUDA_ARCHITECTURES=90 >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; exit 2; }
    cmake --build build-gpu --parallel "$(nproc)" --target lpx-pipeline cuda_kernel_tests \
      cuda_engine_tests >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 2; }
    commit=$(tree_commit)
    started=$SECONDS  # the 420 s are the stages' alone
    ;;
  dry-run)
    build_dir=$bundle/build
    say "dry run: arguments parsed (stages: ${stages}); nothing below touches a GPU"
    if [[ -d $bundle ]]; then
      check_bundle "$bundle" carry || exit 2
      commit=$(sed -n 's/^commit=//p' "$bundle/MANIFEST")
    else
      tree=$(tree_kib)
      note "no bundle at $bundle (tools/gpu-bundle.sh makes one; it is checked when present);" \
        "the working tree alone carries $((tree / 1024)) MiB of the 64"
      ((tree < carry_limit_kib / 2)) || { echo "error: the working tree is ${tree} KiB: no room for a bundle" >&2; exit 2; }
      commit=$(tree_commit)
    fi
    ;;
esac
bin=$build_dir/bin/lpx-pipeline
# Here a GPU test that cannot find a usable GPU fails rather than skips (gpu_test_support.hpp).
export LPX_EXPECT_GPU=1

# cuBLAS is the machine's. Where the toolkit's lib64 lacks it, a pip-installed one will do:
# CUDA 13 wheels put it in nvidia/cu13/lib, CUDA 12 ones in nvidia/cublas/lib.
if [[ $mode != dry-run ]] && ldd "$build_dir"/lib/lpx/plugins/lpx-cuda.so | grep -q "not found"; then
  pip_cublas=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit
for base in nvidia.__path__:
    for lib in sorted(glob.glob(os.path.join(base, "*", "lib", "libcublas.so.*")), reverse=True):
        print(os.path.dirname(lib))
        raise SystemExit
PY
  )
  [[ -n $pip_cublas ]] && export LD_LIBRARY_PATH=$pip_cublas:$LD_LIBRARY_PATH
  say "lpx-cuda.so: missing libraries, trying ${pip_cublas:-(no pip cuBLAS found)}"
  ldd "$build_dir"/lib/lpx/plugins/lpx-cuda.so | grep "not found" | tee -a "$out/summary.txt"
fi

# --- stages, steps and the time they may take --------------------------------------------------
deadline=$((started + total_budget))
stage_name='' stage_start=0 stage_end=0 stage_failed=0
failed=0
stage_results=()

stage() {  # NAME: starts it; its end is its budget from now, or the deadline if sooner
  stage_name=$1 stage_start=$SECONDS stage_failed=0
  stage_end=$((SECONDS + budget[$1]))
  ((stage_end > deadline)) && stage_end=$deadline
  say "stage $1 (budget ${budget[$1]} s, $((stage_end - SECONDS)) s left of it)"
}
stage_done() {
  local used=$((SECONDS - stage_start)) verdict=passed
  ((stage_failed)) && verdict=failed
  ((SECONDS >= stage_end && !stage_failed)) && verdict="ran out of time"
  [[ $mode == dry-run ]] && verdict=planned
  [[ $verdict == passed || $verdict == planned ]] || failed=1
  stage_results+=("--stage" "$stage_name: $verdict, $used s of ${budget[$stage_name]}")
  note "stage $stage_name: $verdict after $used s"
}

# step LIMIT COMMAND...: runs COMMAND for at most LIMIT seconds, and never past the stage's end.
# Returns COMMAND's status, 124 (or 137, killed) when cut short, 125 when no time was left to
# start it. The limits in each stage add up to a few seconds under its budget: the slack is for
# what runs between steps (nvidia-smi, the report's record calls).
step() {
  local limit=$1
  shift
  local left=$((stage_end - SECONDS))
  ((limit > left)) && limit=$left
  if ((limit < 5)); then
    note "skipped, stage out of time: ${*##*/}"
    return 125
  fi
  if [[ $mode == dry-run ]]; then
    note "would run for at most ${limit} s: $*"
    return 0
  fi
  timeout -k 2 "$((limit - 2))" "$@"
}

smoke_filter='GemvTypes.MatchesTheReferenceForEveryBatch/*:CudaOps.*:CudaAttention.MatchesReferenceAndExactSoftmax:CudaSamplingProgram.MatchesTheReferenceOnRandomProgramsAndLogits'

run_tests() {  # LIMIT LABEL BINARY [GTEST ARGUMENTS...]
  local limit=$1 label=$2 binary=$3 rc first
  shift 3
  first=$(($(wc -l <"$out/tests.log") + 1))
  printf '=== %s\n' "$label" >>"$out/tests.log"
  step "$limit" "$build_dir/tests/$binary" --gtest_brief=1 "$@" >>"$out/tests.log" 2>&1
  rc=$?
  printf '=== exit %d\n' "$rc" >>"$out/tests.log"
  [[ $mode == dry-run ]] && return 0
  ((rc == 0)) || { stage_failed=1; note "$binary: exit $rc$( ((rc == 124)) && echo ' (cut at its time limit)')"; }
  tail -n "+$first" "$out/tests.log" | grep -E '^\[  (FAILED|PASSED|SKIPPED) ' | head -8 |
    sed 's/^/   /' | tee -a "$out/summary.txt" >&3
}

bench_run() {  # NAME LIMIT MODEL [BENCH ARGUMENTS...]: one line of bench.jsonl
  local name=$1 limit=$2 model=$3 rc
  shift 3
  local command=("$bin" --log-level warn bench --device cuda --model "$model" --json "$@")
  printf '=== %s\n' "$name" >>"$out/bench.log"
  step "$limit" "${command[@]}" >"$work/$name.json" 2>>"$out/bench.log"
  rc=$?
  [[ $mode == dry-run ]] && return 0
  "${report[@]}" record "$out" "$name" "$rc" "$work/$name.json" -- "${command[@]#"$build_dir"/bin/}"
  ((rc == 0)) || { stage_failed=1; note "bench $name: exit $rc"; tail -3 "$out/bench.log" | sed 's/^/   /'; }
}

start_clock_sampler() {
  [[ $mode == dry-run || -n $sampler ]] && return
  echo "timestamp, clocks.sm [MHz], clocks.mem [MHz], power.draw [W], temperature.gpu, utilization.gpu [%]" >"$out/clocks.csv"
  timeout "$total_budget" nvidia-smi \
    --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv,noheader,nounits -lms 500 >>"$out/clocks.csv" 2>/dev/null &
  sampler=$!
}

# The report: gpu.md and the table (from whatever ran), then the check of $OUT's layout.
finish() {
  say "report"
  local command_text="tools/gpu-check.sh --$mode --stages $stages"
  [[ $mode == build ]] && command_text="tools/gpu-check.sh --stages $stages"
  if [[ $mode == dry-run ]]; then
    # The writer fed with a sample result: the predictions of docs/cuda.md, marked as such.
    "${report[@]}" sample "$out" "$root/docs/cuda.md" || failed=1
  fi
  "${report[@]}" report "$out" --mode "$mode" --commit "$commit" --command "$command_text" \
    --predictions "$root/docs/cuda.md" "${stage_results[@]}" | tee -a "$out/summary.txt"
  ((PIPESTATUS[0] == 0)) || failed=1
  "${report[@]}" check-out "$out" | tee -a "$out/summary.txt"
  ((PIPESTATUS[0] == 0)) || failed=1
  say "done, exit $failed"
  exit "$failed"
}

smollm2=models/SmolLM2-135M-Instruct.Q4_1.gguf
# Not carried (98 MB): the synthetic one has the same shapes, types and bytes per token.
[[ -f $smollm2 ]] || smollm2=synth:smollm2-135m:Q4_1
qwen=synth:qwen2.5-0.5b:BF16
llama=synth:llama-3.2-1b:BF16

if [[ -n ${wanted[smoke]:-} ]]; then
  stage smoke
  if [[ $mode == dry-run ]]; then
    echo "(dry run: nvidia-smi and doctor not run)" >"$out/doctor.txt"
  else
    # A wedged driver must not hang the lease: everything that talks to the GPU has a timeout.
    timeout 15 nvidia-smi >"$out/doctor.txt" 2>&1
    timeout 15 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm,clocks.max.mem \
      --format=csv >>"$out/doctor.txt" 2>&1
  fi
  if ! step 15 "$bin" doctor --require-gpu >>"$out/doctor.txt" 2>&1; then
    stage_failed=1
    grep -iE "usable|driver|error" "$out/doctor.txt" | head -5 | sed 's/^/   /' | tee -a "$out/summary.txt"
    stage_done
    say "no usable GPU: the other stages need one; stopping"
    finish
  fi
  run_tests 35 "cuda_kernel_tests (smoke: GEMV, ops, attention, sampling)" cuda_kernel_tests \
    "--gtest_filter=$smoke_filter"
  stage_done
fi

if [[ -n ${wanted[decode]:-} ]]; then
  stage decode
  start_clock_sampler
  bench_run decode-smollm2-q4_1 28 "$smollm2" -p 512 -n 128 -d 0,512,2048 --batch 1 --reps 3
  bench_run decode-qwen2.5-0.5b-bf16 28 "$qwen" -p 512 -n 128 -d 0,512,2048 --batch 1 --reps 3
  bench_run decode-llama-3.2-1b-bf16 38 "$llama" -p 512 -n 128 -d 0,512,2048 --batch 1 --reps 3
  stage_done
fi

if [[ -n ${wanted[tests]:-} ]]; then
  stage tests
  run_tests 60 "cuda_kernel_tests (all the smoke stage did not run)" cuda_kernel_tests \
    "--gtest_filter=-$smoke_filter"
  # The engine tests write and quantize a few synthetic models first (the 1B-shaped bf16 and
  # Q4_K_M ones take a few seconds of the 16 cores): the larger share.
  run_tests 105 cuda_engine_tests cuda_engine_tests
  stage_done
fi

if [[ -n ${wanted[sweep]:-} ]]; then
  stage sweep
  start_clock_sampler
  bench_run sweep-smollm2-q4_1 13 "$smollm2" -p 0 -n 128 --batch 8,32,64 --reps 2
  bench_run sweep-qwen2.5-0.5b-bf16 13 "$qwen" -p 0 -n 128 --batch 8,32,64 --reps 2
  bench_run sweep-llama-3.2-1b-bf16 18 "$llama" -p 0 -n 128 --batch 8,32,64 --reps 2
  # The persistent decode kernel against the graphs (the decode stage's rows) at batch 1.
  bench_run megakernel-smollm2-q4_1 9 "$smollm2" -p 0 -n 128 -d 0,512 --batch 1 --reps 3 \
    --option megakernel=true
  bench_run megakernel-llama-3.2-1b-bf16 11 "$llama" -p 0 -n 128 -d 0,512 --batch 1 --reps 3 \
    --option megakernel=true
  # What kernel overlap (programmatic dependent launch, on by default) is worth at batch 1, and
  # what sampling on the device costs over greedy.
  bench_run smollm2-q4_1-no-overlap 7 "$smollm2" -p 0 -n 128 --batch 1 --reps 3 --option overlap=false
  # What queueing step N + 1 before step N's token is read is worth (the decode stage's rows
  # have it on).
  bench_run smollm2-q4_1-steps-alone 7 "$smollm2" -p 0 -n 128 --batch 1,8 --reps 3 \
    --no-overlap-steps
  bench_run smollm2-q4_1-sampled 8 "$smollm2" -p 0 -n 128 --batch 1,64 --reps 2 \
    --sample temperature=0.8 top_p=0.95 seed=1
  stage_done
fi

finish
