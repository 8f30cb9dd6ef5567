// `lpx-pipeline perplexity`: how well one backend configuration predicts a text, and how far
// its next-token distributions are from a reference run of the same model, measured as
// llama-perplexity does: the text is tokenized once (BOS first when the model adds one), cut
// into windows of `context` tokens, each evaluated from an empty cache with its first token
// made BOS (when the model has one); the second half of each window is scored, every position
// with at least context/2 tokens before it (the last token of a window predicts nothing).
// The reference is the float-activation path of the CPU kernels (activations = "f32"), whose
// bits the `cpu` and `cpu-scalar` plugins share (tested bit for bit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/device_choice.hpp"
#include "eval/token_scores.hpp"
#include "model/model_file.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/expected.hpp"

namespace lpx::core::eval {

struct PerplexityConfig {
  std::string text_path;
  BackendChoice evaluated;
  BackendChoice reference{"cpu", {{"activations", OptionValue{std::string("f32")}}}};
  std::uint32_t context = 512;  // tokens per window
  std::uint32_t max_windows = 0;  // 0: every whole window of the text
};

struct PerplexityReport {
  std::string evaluated, reference;  // each run's plugin and options, defaults included
  std::uint64_t text_tokens = 0;
  std::uint32_t windows = 0;
  std::uint32_t context = 0;
  ScoreTotals totals;
  double evaluated_seconds = 0, reference_seconds = 0;  // forward passes only
};

// After each window: its number (1-based), the count, and the totals so far.
using WindowProgress = std::function<void(std::uint32_t, std::uint32_t, const ScoreTotals&)>;

// `file` and `tokenizer` are the model's. Errors name the text file, the model or the backend.
Expected<PerplexityReport> run_perplexity(const PerplexityConfig& config, const ModelFile& file,
                                          const Tokenizer& tokenizer, PluginRegistry& registry,
                                          const WindowProgress& progress = {});

}  // namespace lpx::core::eval
