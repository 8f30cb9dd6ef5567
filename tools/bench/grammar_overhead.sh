#!/usr/bin/env bash
# Decode speed with and without a JSON Schema held by the grammar sampler, LPX beside llama.cpp,
# on the same model, prompt, threads and machine, runs interleaved (docs/perf/structured-output.md).
#
#   tools/bench/grammar_overhead.sh [MODEL] [RUNS]
#
# LPX: `lpx-pipeline generate` (greedy, 256 tokens) with and without --json-schema-file; its log
# line gives decode tokens/s. The peer: llama.cpp's llama-completion with and without
# --json-schema-file; its perf report gives eval tokens/s and the sampling time, which holds its
# grammar work. Set PEER_BIN to the folder of a llama.cpp build (llama-completion and its
# libraries); without it only LPX runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
model=${1:-$root/models/SmolLM2-135M-Instruct.Q4_1.gguf}
runs=${2:-5}
lpx=${LPX_PIPELINE:-$root/build/bin/lpx-pipeline}
schema=$root/tools/bench/order_schema.json
prompt="Write a customer order with three items as JSON:"
tokens=256
threads=${THREADS:-$(nproc)}

lpx_run() {  # $@: extra flags; prints decode tokens/s and tokens generated
  "$lpx" generate --model "$model" --prompt "$prompt" --temperature 0 --max-tokens "$tokens" \
    "$@" 2>&1 >/dev/null | sed -n 's/.*generated \([0-9]*\) tokens;.*, \([0-9.]*\) tokens\/s.*/\2 \1/p'
}
peer_run() {  # $@: extra flags; prints eval tokens/s, tokens and sampling ms
  LD_LIBRARY_PATH=$PEER_BIN "$PEER_BIN/llama-completion" -m "$model" -p "$prompt" -n "$tokens" \
    --temp 0 -t "$threads" -no-cnv --no-warmup "$@" 2>&1 </dev/null |
    awk '/sampling time/ {for (i = 1; i <= NF; ++i) if ($i == "=") s = $(i + 1)}
         /eval time/ && !/prompt/ {for (i = 1; i <= NF; ++i) {
           if ($i == "runs") n = $(i - 1)
           if ($i == "tokens" && $(i + 1) == "per") t = $(i - 1)}}
         END {print t, n, s "ms-sampling"}'
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $threads threads; model $(basename "$model")"
echo "run lpx_plain lpx_schema [peer_plain peer_schema] (tokens/s, tokens)"
for ((r = 1; r <= runs; ++r)); do
  line="$r | $(lpx_run) | $(lpx_run --json-schema-file "$schema")"
  if [[ -n ${PEER_BIN:-} ]]; then
    line+=" | $(peer_run) | $(peer_run --json-schema-file "$schema")"
  fi
  echo "$line"
done
