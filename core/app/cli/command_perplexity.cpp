// `lpx-pipeline perplexity`: a backend configuration's perplexity on a text, and its mean KL
// divergence and top-1 agreement against the float-activation reference (eval/perplexity.hpp).
#include <cstdio>
#include <iostream>

#include <boost/json.hpp>

#include "cli/backend_options.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "eval/perplexity.hpp"
#include "metrics/metrics_registry.hpp"
#include "plugin_host/host_services.hpp"
#include "tokenizer/vocabulary.hpp"

namespace lpx::cli {
namespace {

// Six significant digits: KL divergences range from 1e-9 (a rounding change) to 1.
std::string significant(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string report_text(const PerplexityArguments& a, const core::eval::PerplexityReport& r) {
  const auto& t = r.totals;
  std::string out;
  out += "model:           " + a.model_path + "\n";
  out += "text:            " + a.text_path + " (" + std::to_string(r.text_tokens) + " tokens; " +
         std::to_string(r.windows) + " windows of " + std::to_string(r.context) + ", " +
         std::to_string(t.count()) + " positions scored)\n";
  out += "evaluated:       " + r.evaluated + ", " +
         fixed(static_cast<double>(r.windows) * r.context / r.evaluated_seconds, 1) + " tokens/s\n";
  out += "reference:       " + r.reference + ", " +
         fixed(static_cast<double>(r.windows) * r.context / r.reference_seconds, 1) + " tokens/s\n";
  out += "perplexity:      " + fixed(t.perplexity(), 4) + " ± " + fixed(t.perplexity_error(), 4) +
         " (reference " + fixed(t.reference_perplexity(), 4) + ")\n";
  out += "KL divergence:   " + significant(t.mean_kl()) + " ± " + significant(t.kl_error()) + "\n";
  out += "top-1 agreement: " + fixed(100 * t.top1_agreement(), 2) + " %\n";
  return out;
}

std::string report_json(const core::eval::PerplexityReport& r) {
  const auto& t = r.totals;
  boost::json::object o;
  o["perplexity"] = t.perplexity();
  o["perplexity_error"] = t.perplexity_error();
  o["reference_perplexity"] = t.reference_perplexity();
  o["kl_divergence"] = t.mean_kl();
  o["kl_divergence_error"] = t.kl_error();
  o["top1_agreement"] = t.top1_agreement();
  o["tokens"] = t.count();
  o["text_tokens"] = r.text_tokens;
  o["windows"] = r.windows;
  o["context"] = r.context;
  o["evaluated"] = r.evaluated;
  o["reference"] = r.reference;
  return boost::json::serialize(o) + "\n";
}

}  // namespace

int perplexity_command(const PerplexityArguments& a) {
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  core::eval::PerplexityConfig config;
  config.text_path = a.text_path;
  config.context = a.context;
  config.max_windows = a.max_windows;
  auto backend = core::backend_for_device(a.device, a.backend, registry);
  if (!backend) {
    std::cerr << "error: " << backend.error() << "\n";
    return kExitRuntimeError;
  }
  config.evaluated = *backend;
  if (auto added = add_backend_options(a.options, config.evaluated.options); !added) {
    std::cerr << "error: " << added.error() << "\n";
    return kExitUsageError;
  }
  config.reference.plugin = a.reference_backend;
  for (core::BackendChoice* run : {&config.evaluated, &config.reference}) {
    if (a.threads != 0 && backend_declares(registry, run->plugin, "threads")) {
      run->options["threads"] = std::int64_t{a.threads};
    }
  }
  auto file = core::ModelFile::open(a.model_path, registry);
  if (!file) {
    std::cerr << "error: " << file.error() << "\n";
    return kExitRuntimeError;
  }
  auto vocabulary = core::load_vocabulary(**file);
  if (!vocabulary) {
    std::cerr << "error: " << vocabulary.error().with_context(a.model_path) << "\n";
    return kExitRuntimeError;
  }
  auto tokenizer = core::Tokenizer::create(std::move(*vocabulary));
  if (!tokenizer) {
    std::cerr << "error: " << tokenizer.error().with_context(a.model_path) << "\n";
    return kExitRuntimeError;
  }
  const auto progress = [&](std::uint32_t window, std::uint32_t windows, const core::eval::ScoreTotals& t) {
    std::cerr << "[" << window << "/" << windows << "] perplexity " << fixed(t.perplexity(), 4) << ", KL "
              << significant(t.mean_kl()) << "\n";
  };
  auto report = core::eval::run_perplexity(config, **file, **tokenizer, registry, progress);
  if (!report) {
    std::cerr << "error: " << report.error() << "\n";
    return kExitRuntimeError;
  }
  std::cout << (a.json ? report_json(*report) : report_text(a, *report));
  return kExitOk;
}

Command add_perplexity_command(CLI::App& parent) {
  auto args = std::make_shared<PerplexityArguments>();
  CLI::App* app = parent.add_subcommand(
      "perplexity", "Perplexity of a text, and KL divergence and top-1 agreement against the f32 reference");
  app->add_option("--model", args->model_path, "Model file")->required();
  app->add_option("--file", args->text_path, "Text file to score")->required();
  app->add_flag("--json", args->json,
                "One JSON object: perplexity, kl_divergence, top1_agreement, tokens and more");
  app->add_option("--ctx", args->context, "Tokens per window; the second half of each is scored")
      ->check(CLI::Range(4u, 1u << 16))
      ->capture_default_str();
  app->add_option("--chunks", args->max_windows, "Score at most this many windows (0 = the whole text)")
      ->capture_default_str();
  app->add_option("--device", args->device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  app->add_option("--backend", args->backend, "Backend plugin by name; overrides --device");
  app->add_option("--option", args->options,
                  "Option KEY=VALUE of the evaluated backend (e.g. activations=q8)");
  app->add_option("--threads", args->threads, "Threads of both runs (0 = the backends' default)");
  app->add_option("--reference-backend", args->reference_backend,
                  "Backend of the reference run, with activations=f32: cpu or cpu-scalar (the same bits)")
      ->check(CLI::IsMember({"cpu", "cpu-scalar"}))
      ->capture_default_str();
  return {app, [args] { return perplexity_command(*args); }};
}

}  // namespace lpx::cli
