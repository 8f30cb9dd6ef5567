// The subcommands of lpx-pipeline. Each command's file registers its subcommand and options
// (add_*_command) and runs it (*_command), returning an exit code from exit_codes.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/engine_flags.hpp"

namespace lpx::cli {

// A registered subcommand: `app` was chosen when it was parsed; `run` then runs it with its
// parsed options and returns the exit code.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_run_command(CLI::App& parent);
Command add_generate_command(CLI::App& parent);
Command add_serve_command(CLI::App& parent);
Command add_batch_command(CLI::App& parent);
Command add_batch_merge_command(CLI::App& parent);
Command add_bench_command(CLI::App& parent);
Command add_synth_command(CLI::App& parent);
Command add_plugins_command(CLI::App& parent);
Command add_inspect_command(CLI::App& parent);
Command add_tokenize_command(CLI::App& parent);
Command add_doctor_command(CLI::App& parent);
Command add_perplexity_command(CLI::App& parent);
Command add_quantize_command(CLI::App& parent);
Command add_convert_command(CLI::App& parent);
Command add_quality_command(CLI::App& parent);

struct RunArguments {
  std::string pipeline_path;
  std::vector<std::string> overrides;  // "a.b.c=value"
  bool show_stats = false;
};
int run_command(const RunArguments& arguments);

struct GenerateArguments {
  std::string model_path;
  std::string prompt;
  std::string prompt_file;
  std::uint32_t max_tokens = 128;
  double temperature = 0.8;
  std::optional<std::uint64_t> seed;
  std::string device = "auto";
  std::string backend;  // a backend plugin by name; overrides --device
  std::uint32_t context_size = 0;
  bool ids = false;
  std::string grammar_file;      // a GBNF grammar the answer is held to
  std::string json_schema_file;  // or a JSON Schema
  SpeculativeFlags speculative;
  std::string quantize;  // --quantize TYPE: quantize the weights as the model loads
  std::vector<std::string> loras;  // --lora FILE[@SCALE]: adapters merged as it loads
};
int generate_command(const GenerateArguments& arguments);

struct ServeArguments {
  std::vector<std::string> model_paths;  // --model, repeatable: the first is the default
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;
  std::string api_key_file;
  std::string device = "cpu";
  std::string backend;
  std::uint32_t context_size = 4096;
  // Streams decoded together: 8, as llama-server -np 8 serves them. With 4, eight clients meant
  // four waited behind whole answers (TTFT p50 1,037 ms against 89 ms with 8, 2-core Xeon,
  // docs/perf/server.md). The KV cache holds every sequence at full context (SmolLM2-135M at
  // 4,096: 740 MiB).
  std::uint32_t max_sequences = 8;
  SpeculativeFlags speculative;        // [speculative]
  std::string quantize;                // [model] quantize
  std::vector<std::string> loras;      // [model] lora
  std::vector<std::string> adapters;   // [model] adapters (of the first --model)
  std::vector<std::string> overrides;  // "a.b.c=value", as for run
};
// `run` of a pipeline written from the flags: [model] FILE (or [[models]] for several), the
// http transport.
int serve_command(const ServeArguments& arguments);

struct BatchArguments {
  std::string model_path;
  std::string input;
  std::string run_dir;
  bool resume = false;
  std::string shard;  // "I/N"
  std::string device = "cpu";
  std::string backend;
  std::uint32_t context_size = 4096;
  std::uint32_t max_sequences = 8;
  std::uint32_t max_tokens = 0;  // for lines without one; 0 = until the model stops
  SpeculativeFlags speculative;  // [speculative]
  std::string quantize;          // [model] quantize
  std::vector<std::string> loras;  // [model] lora
  std::vector<std::string> adapters;  // [model] adapters
  std::vector<std::string> overrides;
};
// `run` of a batch pipeline written from the flags: [model] FILE in throughput mode, jsonl.
int batch_command(const BatchArguments& arguments);

struct BatchMergeArguments {
  std::vector<std::string> run_dirs;
  std::string output;  // empty: outputs/merged-<time>-<input hash>/
};
// Combines the run directories of a sharded job into one and lists missing ids.
int batch_merge_command(const BatchMergeArguments& arguments);

struct BenchArguments {
  std::string model;  // a file, or synth:NAME:TYPE
  std::string device = "cpu";
  std::string backend;
  std::vector<std::uint32_t> prompt_lengths{128};
  std::vector<std::uint32_t> generate_lengths{64};
  std::vector<std::uint32_t> batches{1};
  std::vector<std::uint32_t> depths{0};  // context already filled before each tg test
  unsigned threads = 0;  // 0: the backend's default
  std::uint32_t repetitions = 3;
  std::vector<std::string> options;  // backend options KEY=VALUE
  std::vector<std::string> sample;   // sampling KEY=VALUE (temperature, top_k...); empty: greedy
  std::string adapter;               // --adapter FILE[@SCALE]: every request runs with it
  bool no_overlap_steps = false;     // --no-overlap-steps: [engine] overlap_steps = false
  SpeculativeFlags speculative;
  bool json = false;
};
// Prefill and decode speed, latency, memory and roofline share of one model.
int bench_command(const BenchArguments& arguments);

struct PerplexityArguments {
  std::string model_path;
  std::string text_path;
  bool json = false;
  std::uint32_t context = 512;    // tokens per window
  std::uint32_t max_windows = 0;  // 0: all
  std::string device = "cpu";
  std::string backend;
  std::vector<std::string> options;  // the evaluated backend's KEY=VALUE
  unsigned threads = 0;
  std::string reference_backend = "cpu";
};
// Perplexity, KL divergence and top-1 agreement against the f32 reference (eval/perplexity.hpp).
int perplexity_command(const PerplexityArguments& arguments);

struct SynthArguments {
  std::string like;    // a model shape name, e.g. smollm2-135m
  std::string type;    // F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K
  std::string output;
  std::uint64_t seed = 1;
  std::uint32_t layers = 0;  // 0: the model's; else fewer (or more) layers of the same shape
};
// Writes a synthetic GGUF shaped like a named model, then inspects it.
int synth_command(const SynthArguments& arguments);

struct PluginsArguments {
  bool show_options = false;
  bool json = false;
};
int plugins_command(const PluginsArguments& arguments);

struct InspectArguments {
  std::string model_path;
};
// Validates a model file completely and prints a summary; exit 1 with "error: FILE: ..." if invalid.
int inspect_command(const InspectArguments& arguments);

struct TokenizeArguments {
  std::string model_path;
  std::string text;  // one of text and file
  std::string file;
  bool no_bos = false;
  bool parse_special = false;
};
// Prints the token ids of the text as one JSON array.
int tokenize_command(const TokenizeArguments& arguments);

struct DoctorArguments {
  bool require_gpu = false;  // exit 1 when no GPU is usable
  bool json = false;
};
// GPU health check: this binary's CUDA build, the driver, each GPU, a test kernel and copy
// bandwidth, with advice for every problem. Exit 0 even without a GPU unless require_gpu.
int doctor_command(const DoctorArguments& arguments);

// The multi-line text printed by --version.
std::string version_text();

}  // namespace lpx::cli
