#!/usr/bin/env bash
# Side-by-side CPU speed of LPX and llama.cpp on the same model files and thread count, in one
# run (interleaved, so both see the same machine state). Prints a Markdown table for
# docs/perf/cpu.md. Not a test: run it by hand on an otherwise idle machine.
#
#   tools/bench_cpu.sh [-t THREADS] [-r REPETITIONS] [-o "KEY=VALUE ..."] MODEL.gguf...
#
# LLAMA_BENCH: llama.cpp's llama-bench (default /work/peer/llama.cpp-build/bin/llama-bench; see
# docs/peers.md for how it was built). -o passes backend options to LPX (e.g. "activations=f32").
set -euo pipefail
threads=2
repetitions=5
options=""
while getopts "t:r:o:" flag; do
  case "$flag" in
    t) threads=$OPTARG ;;
    r) repetitions=$OPTARG ;;
    o) options=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
root=$(cd "$(dirname "$0")/.." && pwd)
lpx_bench=${LPX_BENCH:-$root/build/bin/lpx-bench-decode}
llama_bench=${LLAMA_BENCH:-/work/peer/llama.cpp-build/bin/llama-bench}
for tool in "$lpx_bench" "$llama_bench"; do
  [[ -x $tool ]] || { echo "error: $tool not found" >&2; exit 1; }
done
lpx_options=()
for kv in $options; do lpx_options+=(--option "$kv"); done

echo "| model | test | LPX tokens/s | llama.cpp tokens/s | LPX / llama.cpp |"
echo "|---|---|---:|---:|---:|"
for model in "$@"; do
  name=$(basename "$model" .gguf)
  # llama.cpp: flash attention off, as in the fixtures; OpenMP threads spinning (its default).
  peer=$("$llama_bench" -m "$model" -t "$threads" -p 64 -n 128 -r "$repetitions" -fa 0 -o csv 2>/dev/null)
  ours=$("$lpx_bench" --model "$model" --threads "$threads" --pp 64 --tg 128 -r "$repetitions" "${lpx_options[@]}")
  ours_pp=$(echo "$ours" | sed -n 's/^pp64: \([0-9.]*\).*/\1/p')
  ours_tg=$(echo "$ours" | sed -n 's/^tg128: \([0-9.]*\).*/\1/p')
  # avg_ts is the tokens/s column of llama-bench's CSV; rows are pp64 then tg128.
  col=$(echo "$peer" | head -1 | tr ',' '\n' | grep -nx 'avg_ts' | cut -d: -f1)
  peer_pp=$(echo "$peer" | sed -n 2p | cut -d, -f"$col" | tr -d '"')
  peer_tg=$(echo "$peer" | sed -n 3p | cut -d, -f"$col" | tr -d '"')
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }
  echo "| $name | pp64 | $ours_pp | $(printf '%.2f' "$peer_pp") | $(ratio "$ours_pp" "$peer_pp") |"
  echo "| $name | tg128 | $ours_tg | $(printf '%.2f' "$peer_tg") | $(ratio "$ours_tg" "$peer_tg") |"
done
