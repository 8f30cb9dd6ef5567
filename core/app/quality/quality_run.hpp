// `lpx-pipeline quality --model F`: the repeat test. Every fixed prompt (quality_prompts.hpp) is
// answered `runs` times greedily and `runs` times sampled (temperature 0.8 with seeds 1..runs),
// all submitted together as a server would batch them, through the model's chat template; each
// answer is checked (answer_checks.hpp), and greedy answers that differ between runs of one
// prompt make that prompt nondeterministic. With a second model (--compare), both answer the
// same greedy prompts and the report says how far the second's answers drift from the first's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/device_choice.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "quality/answer_checks.hpp"
#include "util/expected.hpp"

namespace lpx::core::quality {

struct QualityConfig {
  BackendChoice backend{"cpu", {}};
  unsigned runs = 3;             // greedy runs, and sampled runs, per prompt
  std::uint32_t max_tokens = 128;
  std::uint32_t context = 2048;
};

struct QualityCounts {
  std::uint64_t runs = 0, empty = 0, bad_utf8 = 0, special_leaks = 0, early_stops = 0, loops = 0;
  std::uint64_t nondeterministic = 0;  // prompts whose greedy answers differ between runs
};

struct PromptResult {
  std::string language, prompt;
  std::vector<Answer> greedy, sampled;
  std::vector<AnswerFaults> greedy_faults, sampled_faults;
  bool nondeterministic = false;
};

struct QualityReport {
  std::string model;
  bool chat_template = true;  // false: the prompts went in as plain text (the model has none)
  std::vector<PromptResult> prompts;
  QualityCounts counts;
};

Expected<QualityReport> run_quality(const std::string& model_path, const QualityConfig& config,
                                    PluginRegistry& registry);

// How `other`'s greedy answers drift from `base`'s, prompt by prompt (first greedy run of each).
struct Drift {
  std::uint64_t prompts = 0, identical = 0;
  double mean_common_prefix = 0;  // tokens both answers share from their start, averaged
  double mean_base_tokens = 0;
};
Drift greedy_drift(const QualityReport& base, const QualityReport& other);

// How far `other`'s next-token distributions are from `base`'s on base's greedy answers (each
// answer as plain text, tokenized by base, BOS first where the model adds one), scored as
// `perplexity` scores a backend against its reference (eval/token_scores.hpp): mean KL(base ||
// other), top-1 agreement, and both perplexities. The models must share a vocabulary.
struct Divergence {
  std::uint64_t positions = 0;
  double mean_kl = 0, kl_error = 0, top1_agreement = 0;
  double base_perplexity = 0, other_perplexity = 0;
};
Expected<Divergence> answer_divergence(const QualityReport& base, const std::string& other_path,
                                       const QualityConfig& config, PluginRegistry& registry);

}  // namespace lpx::core::quality
