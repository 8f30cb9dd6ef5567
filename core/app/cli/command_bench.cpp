// `lpx-pipeline bench`: prompt and decode speed of one model on this machine (see
// core/app/bench/bench_runner.hpp), as a markdown table or, with --json, one JSON array.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <thread>

#include "bench/bench_runner.hpp"
#include "cli/backend_options.hpp"
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "engine/engine_config.hpp"
#include "engine/device_choice.hpp"
#include "cli/exit_codes.hpp"
#include "logging/logging.hpp"
#include "metrics/metrics_registry.hpp"
#include "plugin_host/host_services.hpp"

namespace lpx::cli {
namespace {

// --sample KEY=VALUE pairs as request overrides, and their text for the report.
core::Expected<std::string> parse_sampling(const std::vector<std::string>& pairs,
                                           lpx_sampling_overrides& out) {
  out = {};
  out.struct_size = sizeof(out);
  std::string text;
  for (const std::string& pair : pairs) {
    const std::size_t eq = pair.find('=');
    const std::string key = pair.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    double number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (eq == std::string::npos || value.empty() || ec != std::errc() ||
        end != value.data() + value.size()) {
      return core::invalid_argument("--sample wants KEY=NUMBER, not '" + pair + "'");
    }
    const bool whole = number == std::floor(number) && number >= 0;
    if (key == "temperature") {
      out.temperature = number;
      out.set |= LPX_SET_TEMPERATURE;
    } else if (key == "top_p") {
      out.top_p = number;
      out.set |= LPX_SET_TOP_P;
    } else if (key == "min_p") {
      out.min_p = number;
      out.set |= LPX_SET_MIN_P;
    } else if ((key == "top_k" || key == "seed") && whole) {
      if (key == "top_k") {
        out.top_k = static_cast<std::int64_t>(number);
        out.set |= LPX_SET_TOP_K;
      } else {
        out.seed = static_cast<std::uint64_t>(number);
        out.set |= LPX_SET_SEED;
      }
    } else {
      return core::invalid_argument("--sample: '" + pair +
                              "' is not one of temperature, top_k, top_p, min_p, seed "
                              "(top_k and seed are whole numbers)");
    }
    text += (text.empty() ? "" : " ") + pair;
  }
  return text.empty() ? std::string("greedy") : "sampled (" + text + ")";
}

}  // namespace

int bench_command(const BenchArguments& a) {
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  core::bench::BenchConfig config;
  config.model = a.model;
  auto backend = core::backend_for_device(a.device, a.backend, registry);
  if (!backend) {
    std::cerr << "error: " << backend.error() << "\n";
    return kExitRuntimeError;
  }
  config.backend = backend->plugin;
  config.backend_options = backend->options;
  // --threads is the CPU backends' option; a GPU backend has none.
  if (a.threads != 0 && backend_declares(registry, backend->plugin, "threads")) {
    config.backend_options["threads"] = std::int64_t{a.threads};
  }
  if (auto added = add_backend_options(a.options, config.backend_options); !added) {
    std::cerr << "error: " << added.error() << "\n";
    return kExitUsageError;
  }
  auto sampling = parse_sampling(a.sample, config.sampling);
  if (!sampling) {
    std::cerr << "error: " << sampling.error() << "\n";
    return kExitUsageError;
  }
  config.sampling_text = *sampling;
  auto speculative = a.speculative.resolved_mode();
  if (!speculative) {
    std::cerr << "error: " << speculative.error() << "\n";
    return kExitUsageError;
  }
  if (*speculative != "off") {
    config.max_draft = core::kDefaultMaxDraft;
    config.draft_model = a.speculative.draft_model;
    config.sampling_text += *speculative == "ngram" ? ", ngram speculation"
                                                    : ", speculation drafted by " + config.draft_model;
  }
  if (!a.adapter.empty()) {
    config.adapter = a.adapter;
    config.sampling_text += ", LoRA adapter " + a.adapter + " per request";
  }
  if (a.no_overlap_steps) {
    config.overlap_steps = false;
    config.sampling_text += ", each step alone (overlap_steps off)";
  }
  config.prompt_lengths = a.prompt_lengths;
  config.generate_lengths = a.generate_lengths;
  config.batches = a.batches;
  config.depths = a.depths;
  config.repetitions = a.repetitions;
  config.bandwidth_threads = a.threads != 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  auto report = core::bench::run_bench(config, registry);
  if (!report) {
    std::cerr << "error: " << report.error() << "\n";
    return kExitRuntimeError;
  }
  std::cout << (a.json ? core::bench::report_json(*report) : core::bench::report_markdown(*report));
  return kExitOk;
}

Command add_bench_command(CLI::App& parent) {
  auto bench = std::make_shared<BenchArguments>();
  CLI::App* bench_app = parent.add_subcommand(
      "bench", "Prompt and decode speed, latency, memory and roofline share of a model");
  bench_app->add_option("--model", bench->model, "Model file, or synth:NAME:TYPE (see synth)")->required();
  bench_app->add_option("--device", bench->device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  bench_app->add_option("--backend", bench->backend, "Backend plugin by name; overrides --device");
  bench_app->add_option("-p,--prompt", bench->prompt_lengths, "Prompt lengths (ppN tests), e.g. 128,512")
      ->delimiter(',')
      ->capture_default_str();
  bench_app->add_option("-n,--generate", bench->generate_lengths, "Generated lengths (tgN tests)")
      ->delimiter(',')
      ->capture_default_str();
  bench_app->add_option("--batch", bench->batches, "Concurrent sequences of the tg tests, e.g. 1,8,32")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  bench_app->add_option("-d,--depth", bench->depths,
                        "Tokens already in each sequence's context when a tg test starts "
                        "(tgN @ dD), e.g. 0,512,2048; pp tests ignore it")
      ->delimiter(',')
      ->check(CLI::Range(0u, 1u << 20))
      ->capture_default_str();
  bench_app->add_option("--threads", bench->threads, "Backend threads (0 = its default)");
  bench_app->add_option("--reps", bench->repetitions, "Repetitions of each test")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  bench_app->add_option("--option", bench->options, "Backend option KEY=VALUE (e.g. activations=f32)");
  bench_app->add_option("--sample", bench->sample,
                        "Sample instead of greedy, KEY=VALUE of temperature, top_k, top_p, min_p, "
                        "seed (e.g. temperature=0.8 top_p=0.95)");
  bench_app->add_option("--adapter", bench->adapter,
                        "LoRA adapter FILE[@SCALE] every request runs with, resident beside the weights (as a "
                        "served \"MODEL:ADAPTER\" request)");
  bench_app->add_flag("--no-overlap-steps", bench->no_overlap_steps,
                      "Device models: run each decode step alone, not queued behind the last one "
                      "([engine] overlap_steps = false)");
  bench_app->add_flag("--json", bench->json, "One JSON array instead of the table");
  add_speculative_flags(*bench_app, bench->speculative);
  return {bench_app, [bench] {
    return bench_command(*bench);
  }};
}

}  // namespace lpx::cli
