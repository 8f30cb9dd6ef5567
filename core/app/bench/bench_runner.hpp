// `lpx-pipeline bench`: llama-bench's tests on LPX's engine, plus what an engine has and a
// kernel benchmark lacks (batches, time to first token, inter-token latency percentiles).
//   ppN     one request with an N-token prompt: N / time to its first token
//   tgN@B   B requests, each a 1-token prompt generating N tokens (end-of-generation ignored, as llama-bench does):
//           aggregate decode tokens/s; batch 1 is llama-bench's tg
//   tgN @ dD  the same after a D-token prompt (llama-bench's -d): decode with D positions of
//           context to attend to; the prompt's prefill is not timed
// Decode is timed over the window in which every request of the batch is decoding (from the
// last request's first token to the first request's last), so staggered prefills of a batch at
// depth are not counted as decode time.
// Tokens are greedy unless the config sets sampling overrides (then every request samples, on
// the device where the backend runs sampling programs).
// Repetitions after one warm-up run; mean ± sample standard deviation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lpx/engine.h"
#include "pipeline/option_schema.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::core::bench {

struct BenchConfig {
  std::string model;  // a GGUF file, or synth:NAME:TYPE (written once to the temp directory)
  std::string backend = "cpu";
  std::map<std::string, OptionValue> backend_options;
  std::vector<std::uint32_t> prompt_lengths{128};
  std::vector<std::uint32_t> generate_lengths{64};
  std::vector<std::uint32_t> batches{1};
  std::vector<std::uint32_t> depths{0};  // tg tests: context positions filled first
  std::uint32_t repetitions = 3;
  unsigned bandwidth_threads = 1;  // threads of the bandwidth measurement
  lpx_sampling_overrides sampling{};  // set == 0: greedy
  std::string sampling_text = "greedy";  // how the report names it
  std::uint32_t max_draft = 0;  // speculative decoding when > 0: ngram, or
  std::string draft_model;      // drafts from this model file (or synth:NAME:TYPE) when set
  std::string adapter;  // FILE[@SCALE]: a LoRA adapter every request runs with, resident beside the weights
  bool overlap_steps = true;  // EngineConfig::overlap_steps
};

struct BenchResult {
  std::string test;    // "pp128", "tg64"
  std::uint32_t batch = 1;
  std::uint32_t depth = 0;  // tg only: context positions before the first generated token
  double tokens_per_s = 0, stddev = 0;
  double ttft_ms = 0;
  double itl_p50_ms = 0, itl_p99_ms = 0;  // tg only
  double achieved_gbs = 0;                // tg only: weight bytes per step x steps per second
  double roofline_percent = 0;            // tg only: achieved_gbs / bandwidth
  double draft_acceptance = -1;           // tg with speculative decoding: confirmed / drafted
};

struct BenchReport {
  std::string model, model_name, backend;
  std::string backend_options;  // "activations=q8, kernels=avx512 (auto), threads=2"
  std::string host_cpu;         // "Intel(R) Xeon(R) Processor (avx2 fma f16c avx512f ...)"
  std::string sampling = "greedy";
  std::uint64_t weight_bytes = 0;  // streamed per decode step
  double read_bandwidth_gbs = 0, copy_bandwidth_gbs = 0;
  std::uint64_t peak_rss_bytes = 0;
  // GPU backends (plugins with the "device-models" capability): the roofline is the device's
  // measured copy bandwidth, and the device memory in use after the runs is reported.
  bool on_device = false;
  std::string device_name;
  double device_bandwidth_gbs = 0;
  std::uint64_t device_memory_used_bytes = 0;
  std::vector<BenchResult> results;
};

Expected<BenchReport> run_bench(const BenchConfig& config, PluginRegistry& registry);

std::string report_markdown(const BenchReport& report);
std::string report_json(const BenchReport& report);

}  // namespace lpx::core::bench
