#include "eval/perplexity.hpp"

#include <chrono>
#include <optional>
#include <vector>

#include "engine/engine_builder.hpp"
#include "eval/window_logits.hpp"
#include "host/host_cpu.hpp"
#include "util/read_file.hpp"

namespace lpx::core::eval {
namespace {

// The run of `choice`; `described` gets its plugin and every option it runs with, defaults
// included ("cpu (activations=i16, kernels=avx512 (auto), threads=2)").
Expected<std::unique_ptr<WindowLogits>> open_run(const BackendChoice& choice, const ModelFile& file,
                                                 std::uint32_t window, PluginRegistry& registry,
                                                 std::string& described) {
  auto instance = default_instance(registry, choice.plugin, choice.options);
  if (!instance) return unexpected(instance.error());
  const std::string options = host::describe_backend_options(choice.plugin, instance->options.values);
  described = options.empty() ? choice.plugin : choice.plugin + " (" + options + ")";
  return WindowLogits::create(file, instance->instance, window);
}

// Runs one window through `run`, adding the seconds it took to `seconds`.
Expected<bool> timed(WindowLogits& run, std::span<const std::int32_t> window, std::uint32_t first,
                     float* logits, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto done = run.run(window, first, logits);
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return done;
}

}  // namespace

Expected<PerplexityReport> run_perplexity(const PerplexityConfig& config, const ModelFile& file,
                                          const Tokenizer& tokenizer, PluginRegistry& registry,
                                          const WindowProgress& progress) {
  if (config.context < 4) return invalid_argument("the window must have at least 4 tokens");
  auto text = read_whole_file(config.text_path);
  if (!text) return unexpected(text.error());
  auto tokens = tokenizer.encode(*text, Tokenizer::EncodeOptions{.add_bos = true, .add_eos = false});
  if (!tokens) return unexpected(tokens.error().with_context(config.text_path));
  PerplexityReport report;
  report.text_tokens = tokens->size();
  report.context = config.context;
  report.windows = static_cast<std::uint32_t>(tokens->size() / config.context);
  if (config.max_windows != 0 && config.max_windows < report.windows) report.windows = config.max_windows;
  if (report.windows == 0) {
    return invalid_argument(config.text_path + ": " + std::to_string(tokens->size()) +
                            " tokens, fewer than one window of " + std::to_string(config.context) +
                            " (lower --ctx or give a longer text)");
  }
  auto evaluated = open_run(config.evaluated, file, config.context, registry, report.evaluated);
  if (!evaluated) return unexpected(evaluated.error());
  auto reference = open_run(config.reference, file, config.context, registry, report.reference);
  if (!reference) return unexpected(reference.error().prefixed("reference: "));
  const std::uint32_t n_vocab = (*evaluated)->n_vocab();
  if ((*reference)->n_vocab() != n_vocab) return invalid_argument(std::string("the two runs disagree on the vocabulary size"));

  const std::uint32_t first = config.context / 2;
  const std::size_t rows = config.context - first;
  std::vector<float> evaluated_logits(rows * n_vocab), reference_logits(rows * n_vocab);
  std::vector<std::int32_t> window(config.context);
  const std::optional<std::int32_t> bos = tokenizer.vocabulary().add_bos ? tokenizer.bos() : std::nullopt;
  for (std::uint32_t w = 0; w < report.windows; ++w) {
    const auto* start = tokens->data() + std::size_t{w} * config.context;
    window.assign(start, start + config.context);
    if (bos) window[0] = *bos;
    if (auto done = timed(**evaluated, window, first, evaluated_logits.data(), report.evaluated_seconds); !done) {
      return unexpected(done.error());
    }
    if (auto done = timed(**reference, window, first, reference_logits.data(), report.reference_seconds); !done) {
      return unexpected(done.error().prefixed("reference: "));
    }
    for (std::uint32_t p = first; p + 1 < config.context; ++p) {
      if (start[p + 1] < 0 || static_cast<std::uint32_t>(start[p + 1]) >= n_vocab) {
        return invalid_argument(config.text_path + ": token " + std::to_string(start[p + 1]) +
                                " has no row among the model's " + std::to_string(n_vocab) + " logits");
      }
      const std::size_t row = std::size_t{p - first} * n_vocab;
      report.totals.add(score_position({evaluated_logits.data() + row, n_vocab},
                                       {reference_logits.data() + row, n_vocab}, start[p + 1]));
    }
    if (progress) progress(w + 1, report.windows, report.totals);
  }
  return report;
}

}  // namespace lpx::core::eval
