// `lpx-pipeline quality --model F [--json] [--compare OTHER]`: the repeat test
// (core/app/quality/quality_run.hpp): a table of what went wrong in the answers, or one JSON
// object of counts; with --compare, the same for OTHER and how far its greedy answers drift.
#include <cstdio>
#include <iostream>

#include <boost/json.hpp>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "engine/device_choice.hpp"
#include "metrics/metrics_registry.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "quality/quality_run.hpp"

namespace lpx::cli {
namespace {

using core::quality::QualityCounts;
using core::quality::QualityReport;

struct QualityArguments {
  std::string model_path, compare_path;
  bool json = false;
  unsigned runs = 3;
  std::uint32_t max_tokens = 128;
  std::uint32_t context = 2048;
  std::string device = "cpu";
  std::string backend;
};

boost::json::object counts_json(const QualityCounts& c) {
  return {{"runs", c.runs},           {"empty", c.empty},           {"bad_utf8", c.bad_utf8},
          {"special_leaks", c.special_leaks}, {"early_stops", c.early_stops}, {"loops", c.loops},
          {"nondeterministic", c.nondeterministic}};
}

boost::json::object report_json(const QualityReport& r) {
  boost::json::object out = counts_json(r.counts);
  out["model"] = r.model;
  out["chat_template"] = r.chat_template;
  boost::json::array prompts;
  for (const auto& p : r.prompts) {
    boost::json::array greedy, sampled;
    for (const auto& a : p.greedy) greedy.emplace_back(a.text);
    for (const auto& a : p.sampled) sampled.emplace_back(a.text);
    prompts.push_back(boost::json::object{{"language", p.language}, {"prompt", p.prompt},
                                          {"nondeterministic", p.nondeterministic},
                                          {"greedy", std::move(greedy)}, {"sampled", std::move(sampled)}});
  }
  out["prompts"] = std::move(prompts);
  return out;
}

void print_table(const QualityReport& r) {
  std::printf("model: %s%s\n\n", r.model.c_str(),
              r.chat_template ? "" : " (no chat template: the prompts went in as plain text)");
  std::printf("| prompt | runs | empty | bad UTF-8 | special leaks | early stops | loops | greedy repeatable |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const auto& p : r.prompts) {
    std::size_t runs = 0, empty = 0, utf8 = 0, leaks = 0, early = 0, loops = 0;
    for (const auto* list : {&p.greedy_faults, &p.sampled_faults}) {
      for (const auto& f : *list) {
        ++runs;
        empty += f.empty;
        utf8 += f.bad_utf8;
        leaks += f.special_leak;
        early += f.early_stop;
        loops += f.loop;
      }
    }
    std::string shown = p.prompt;
    if (shown.size() > 40) {  // cut at a character's start, never inside one
      std::size_t cut = 40;
      while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
      shown = shown.substr(0, cut) + "...";
    }
    std::printf("| %s: %s | %zu | %zu | %zu | %zu | %zu | %zu | %s |\n", p.language.c_str(), shown.c_str(), runs,
                empty, utf8, leaks, early, loops, p.nondeterministic ? "NO" : "yes");
  }
  const QualityCounts& c = r.counts;
  std::printf("| total | %llu | %llu | %llu | %llu | %llu | %llu | %llu nondeterministic |\n",
              static_cast<unsigned long long>(c.runs), static_cast<unsigned long long>(c.empty),
              static_cast<unsigned long long>(c.bad_utf8), static_cast<unsigned long long>(c.special_leaks),
              static_cast<unsigned long long>(c.early_stops), static_cast<unsigned long long>(c.loops),
              static_cast<unsigned long long>(c.nondeterministic));
}

int quality_command(const QualityArguments& a) {
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  auto backend = core::backend_for_device(a.device, a.backend, registry);
  if (!backend) {
    std::cerr << "error: " << backend.error() << "\n";
    return kExitRuntimeError;
  }
  core::quality::QualityConfig config;
  config.backend = *backend;
  config.runs = a.runs;
  config.max_tokens = a.max_tokens;
  config.context = a.context;
  auto report = core::quality::run_quality(a.model_path, config, registry);
  if (!report) {
    std::cerr << "error: " << report.error() << "\n";
    return kExitRuntimeError;
  }
  std::optional<QualityReport> other;
  if (!a.compare_path.empty()) {
    auto compared = core::quality::run_quality(a.compare_path, config, registry);
    if (!compared) {
      std::cerr << "error: --compare: " << compared.error() << "\n";
      return kExitRuntimeError;
    }
    other = std::move(*compared);
  }
  std::optional<core::quality::Divergence> divergence;
  if (other) {
    auto measured = core::quality::answer_divergence(*report, a.compare_path, config, registry);
    if (!measured) {
      std::cerr << "error: --compare: " << measured.error() << "\n";
      return kExitRuntimeError;
    }
    divergence = *measured;
  }
  if (a.json) {
    boost::json::object out = report_json(*report);
    if (other) {
      const auto drift = core::quality::greedy_drift(*report, *other);
      boost::json::object compare = report_json(*other);
      compare["identical_greedy_answers"] = drift.identical;
      compare["prompts_compared"] = drift.prompts;
      compare["mean_common_prefix_tokens"] = drift.mean_common_prefix;
      compare["mean_answer_tokens"] = drift.mean_base_tokens;
      compare["kl_positions"] = divergence->positions;
      compare["mean_kl"] = divergence->mean_kl;
      compare["kl_error"] = divergence->kl_error;
      compare["top1_agreement"] = divergence->top1_agreement;
      compare["perplexity"] = divergence->other_perplexity;
      compare["model_perplexity"] = divergence->base_perplexity;
      out["compare"] = std::move(compare);
    }
    std::cout << boost::json::serialize(out) << "\n";
    return kExitOk;
  }
  print_table(*report);
  if (other) {
    std::printf("\ncompared with:\n");
    print_table(*other);
    const auto drift = core::quality::greedy_drift(*report, *other);
    std::printf("\ngreedy answers identical to the first model's: %llu of %llu; on average the first %.1f of "
                "%.1f tokens agree\n",
                static_cast<unsigned long long>(drift.identical), static_cast<unsigned long long>(drift.prompts),
                drift.mean_common_prefix, drift.mean_base_tokens);
    std::printf("on the first model's greedy answers (%llu positions): mean KL %.6f ± %.6f, same top token %.1f %%, "
                "perplexity %.3f against the first model's %.3f\n",
                static_cast<unsigned long long>(divergence->positions), divergence->mean_kl, divergence->kl_error,
                100.0 * divergence->top1_agreement, divergence->other_perplexity, divergence->base_perplexity);
  }
  return kExitOk;
}

}  // namespace

Command add_quality_command(CLI::App& parent) {
  auto args = std::make_shared<QualityArguments>();
  CLI::App* app = parent.add_subcommand(
      "quality", "Repeat fixed prompts in several languages and count empty, garbled, leaking, cut-off, looping "
                 "and nondeterministic answers");
  app->add_option("--model", args->model_path, "Model: a GGUF file or a Hugging Face directory")->required();
  app->add_option("--compare", args->compare_path,
                  "A second model (e.g. the quantized one): the same counts, and how its greedy answers drift");
  app->add_flag("--json", args->json,
                "One JSON object: runs, empty, bad_utf8, special_leaks, early_stops, loops, nondeterministic "
                "(and the answers)");
  app->add_option("--runs", args->runs, "Greedy runs and sampled runs (seeds 1..N) of each prompt")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  app->add_option("--max-tokens", args->max_tokens, "Most tokens per answer")
      ->check(CLI::Range(1u, 8192u))
      ->capture_default_str();
  app->add_option("--context", args->context, "Positions per sequence")->check(CLI::Range(64u, 1u << 20))->capture_default_str();
  app->add_option("--device", args->device, "cpu, cuda, cuda:N or auto")->check(core::check_device)->capture_default_str();
  app->add_option("--backend", args->backend, "Backend plugin by name; overrides --device");
  return {app, [args] { return quality_command(*args); }};
}

}  // namespace lpx::cli
