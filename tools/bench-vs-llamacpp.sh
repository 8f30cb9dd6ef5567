#!/usr/bin/env bash
# LPX and llama.cpp side by side on the same GGUF files, threads and lengths: repetitions are
# interleaved (LPX, llama.cpp, LPX, …) so both see the same machine state. Prints a Markdown
# table with the ratio per test, for docs/perf/cpu.md. A benchmark, not a test: run it by hand
# on an otherwise idle machine; never in CI.
#
#   tools/bench-vs-llamacpp.sh [-t THREADS] [-p 64] [-n 64,128] [-r 5] [-o "KEY=VALUE …"] MODEL…
#
# MODEL: a GGUF file, or synth:NAME:TYPE (written once with `lpx-pipeline synth`, see README).
# -o: LPX backend options (e.g. "activations=f32"); without it LPX runs twice per repetition,
# with the activations the shipped pipelines use (pipelines/chat.toml) and with "q8" (llama.cpp's
# arithmetic). Above the table: the CPU model and vector features, LPX's commit and kernel set,
# the peer's build. llama-bench: $LLAMA_BENCH, else
# /work/peer/llama.cpp-build/bin/llama-bench, else built here from PyPI's llama-cpp-python sdist
# ($PEER_VERSION, default 0.3.36: its vendored llama.cpp, without AMX on CPUs that advertise it)
# into ${PEER_DIR:-/tmp/lpx-peer}.
set -euo pipefail
threads=2 prompt=64 generate=128 repetitions=5 options=""
while getopts "t:p:n:r:o:" flag; do
  case "$flag" in
    t) threads=$OPTARG ;; p) prompt=$OPTARG ;; n) generate=$OPTARG ;;
    r) repetitions=$OPTARG ;; o) options=$OPTARG ;; *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($#)) || { echo "usage: $0 [-t N] [-p LIST] [-n LIST] [-r N] [-o OPTIONS] MODEL..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
lpx=${LPX_PIPELINE:-$root/build/bin/lpx-pipeline}
[[ -x $lpx ]] || { echo "error: $lpx not found (run tools/setup.sh)" >&2; exit 1; }

llama_bench=${LLAMA_BENCH:-/work/peer/llama.cpp-build/bin/llama-bench}
if [[ ! -x $llama_bench ]]; then
  peer=${PEER_DIR:-/tmp/lpx-peer}
  llama_bench=$peer/build/bin/llama-bench
  if [[ ! -x $llama_bench ]]; then
    echo "building llama-bench from PyPI's llama-cpp-python sdist into $peer" >&2
    mkdir -p "$peer"
    python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$peer" \
      "llama-cpp-python==${PEER_VERSION:-0.3.36}"
    tar -xzf "$peer"/llama_cpp_python-*.tar.gz -C "$peer"
    src=$(ls -d "$peer"/llama_cpp_python-*/vendor/llama.cpp)
    # A native build compiles ggml's AMX path in where the CPU advertises AMX, and in VMs whose
    # kernel did not enable the tiles it dies with SIGILL on the first prompt: leave it out.
    no_amx=""
    grep -q amx_tile /proc/cpuinfo && no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    cmake -S "$src" -B "$peer/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
      -DCMAKE_C_FLAGS="$no_amx" -DCMAKE_CXX_FLAGS="$no_amx" >/dev/null
    cmake --build "$peer/build" --target llama-bench -j "$(nproc)" >/dev/null
  fi
fi

# The LPX configurations: -o's, or the pipelines' default activations and q8.
configs=()
if [[ -n $options ]]; then
  configs+=("$options")
else
  default=$(sed -n 's/^activations = "\(.*\)"/\1/p' "$root/pipelines/chat.toml" | head -1)
  [[ -n $default ]] || { echo "error: no activations = \"…\" in pipelines/chat.toml" >&2; exit 1; }
  configs+=("activations=$default")
  [[ $default == q8 ]] || configs+=("activations=q8")
fi
declare -A ours peers
tests=()
for t in ${prompt//,/ }; do ((t > 0)) && tests+=("pp$t"); done  # -p 0 / -n 0: no such test
for t in ${generate//,/ }; do ((t > 0)) && tests+=("tg$t"); done

# What the numbers were measured on.
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|f16c|avx512[a-z_0-9]*|avx_vnni|amx_[a-z0-9]+)$' | tr '\n' ' ' || true)
kernels=$("$lpx" --version | sed -n 's/^cpu kernels: //p')
forced=$(tr ' ' '\n' <<<"$options" | sed -n 's/^kernels=//p')
[[ -n $forced ]] && kernels="$forced (forced)"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
peer_build=$(LD_LIBRARY_PATH=$(dirname "$llama_bench") "$llama_bench" --version 2>&1 | head -1 || true)
echo "* CPU: $cpu_model, $(nproc) CPUs; features: $isa"
echo "* LPX: commit $commit, \`cpu\` backend, kernels $kernels, $threads threads"
echo "* peer: $llama_bench ($peer_build), flash attention off, $threads threads"
echo
echo "| model | test | LPX options | LPX tokens/s | llama.cpp tokens/s | LPX / llama.cpp |"
echo "|---|---|---|---:|---:|---:|"
for model in "$@"; do
  file=$model
  if [[ $model == synth:* ]]; then  # llama-bench needs the file itself
    IFS=: read -r _ like type <<<"$model"
    file=${TMPDIR:-/tmp}/lpx-synth-v4-$like-$type.gguf
    [[ -f $file ]] || "$lpx" synth --like "$like" --type "$type" -o "$file" >/dev/null
  fi
  for ((rep = 0; rep < repetitions; rep++)); do
    for ((c = 0; c < ${#configs[@]}; c++)); do
      lpx_options=()
      for kv in ${configs[c]}; do lpx_options+=(--option "$kv"); done
      json=$("$lpx" --log-level warn bench --model "$file" --threads "$threads" -p "$prompt" -n "$generate" \
        --reps 1 --json "${lpx_options[@]}")
      while IFS=' ' read -r test rate; do ours[$c:$test]+="$rate "; done < <(python3 -c '
import json, sys
for r in json.load(sys.stdin): print(r["test"], r["tokens_per_s"])' <<<"$json")
    done
    # llama.cpp: flash attention off (as in the fixtures); its default OpenMP threads.
    csv=$("$llama_bench" -m "$file" -t "$threads" -p "$prompt" -n "$generate" -r 1 -fa 0 -o csv 2>/dev/null)
    while IFS=' ' read -r test rate; do peers[$test]+="$rate "; done < <(python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    test = ("pp" + r["n_prompt"]) if int(r["n_gen"]) == 0 else ("tg" + r["n_gen"])
    print(test, r["avg_ts"])' <<<"$csv")
  done
  for test in "${tests[@]}"; do
    for ((c = 0; c < ${#configs[@]}; c++)); do
      python3 - "$(basename "$model")" "$test" "${configs[c]}" "${ours[$c:$test]}" "${peers[$test]}" <<'PY'
import statistics, sys
name, test, config, a, b = sys.argv[1:6]
a, b = [float(x) for x in a.split()], [float(x) for x in b.split()]
sd = lambda v: statistics.stdev(v) if len(v) > 1 else 0.0
print(f"| {name} | {test} | {config} | {statistics.mean(a):.2f} ± {sd(a):.2f} | {statistics.mean(b):.2f} ± {sd(b):.2f} "
      f"| {statistics.mean(a) / statistics.mean(b):.2f}× |")
PY
      ours[$c:$test]=""
    done
    peers[$test]=""
  done
done
