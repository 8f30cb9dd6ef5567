// lpx-bench-decode: prompt-processing and decode speed of LPX's engine on one model, in the
// shape of llama-bench's pp/tg tests so the two can be run side by side (tools/bench_cpu.sh):
//   pp N: one request whose prompt is N tokens, time to its first token -> N / time tokens/s
//   tg N: one request with a 1-token prompt generating N tokens (end-of-generation tokens are
//         banned with a logit bias so every run decodes N) -> decode tokens/s
// Also prints the model bytes every decode step streams and the machine's measured read
// bandwidth, so the decode rate can be put against the memory roofline.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/engine_builder.hpp"
#include "logging/logging.hpp"
#include "metrics/metrics_registry.hpp"
#include "plugin_host/host_services.hpp"

namespace {

using namespace lpx;

struct Run {
  double ttft_ms = 0;
  double decode_tps = 0;
};

Run run_once(core::Engine& engine, const std::vector<std::int32_t>& prompt, std::uint32_t generate,
             const std::vector<std::int32_t>& banned) {
  std::vector<float> minus_inf(banned.size(), -INFINITY);
  lpx_sampling_overrides s{};
  s.struct_size = sizeof(s);
  s.logit_bias_tokens = banned.data();
  s.logit_bias_values = minus_inf.data();
  s.logit_bias_count = banned.size();
  Run run;
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt_tokens = prompt.data();
  r.prompt_token_count = prompt.size();
  r.max_tokens = generate;
  r.sampling = &s;
  r.user = &run;
  r.on_done = [](void* user, const lpx_request_result* res) {
    auto& out = *static_cast<Run*>(user);
    out.ttft_ms = res->time_to_first_token_ms;
    out.decode_tps = res->decode_tokens_per_second;
    if (res->error) std::fprintf(stderr, "error: %s\n", res->error->message);
  };
  auto id = engine.submit(r);
  if (!id) {
    std::fprintf(stderr, "error: %s\n", id.error().c_str());
    std::exit(1);
  }
  engine.wait(*id);
  return run;
}

// Sequential read bandwidth of `threads` threads over a buffer far larger than the caches.
double read_bandwidth_gbs(unsigned threads) {
  const std::size_t bytes = std::size_t{1} << 30;
  std::vector<std::uint64_t> buffer(bytes / 8);
  for (std::size_t i = 0; i < buffer.size(); i += 512) buffer[i] = i;  // touch every page
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<std::uint64_t> sums(threads);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::size_t n = buffer.size() / threads;
        const std::uint64_t* p = buffer.data() + t * n;
        std::uint64_t a = 0, b = 0, c = 0, d = 0;
        for (std::size_t i = 0; i + 4 <= n; i += 4) {
          a += p[i];
          b += p[i + 1];
          c += p[i + 2];
          d += p[i + 3];
        }
        sums[t] = a + b + c + d;
      });
    }
    for (auto& t : pool) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(bytes) / s / 1e9);
    if (std::accumulate(sums.begin(), sums.end(), std::uint64_t{0}) == 42) std::puts("");
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Prompt and decode speed of LPX on one model (llama-bench's pp/tg shape)",
               "lpx-bench-decode"};
  std::string model, backend = "cpu";
  unsigned threads = 0;
  std::uint32_t pp = 64, tg = 128, repetitions = 3;
  bool bandwidth = false;
  std::vector<std::string> option_args;
  app.add_option("--model", model, "Model file")->required();
  app.add_option("--backend", backend, "Backend plugin")->capture_default_str();
  app.add_option("--threads", threads, "Backend threads (0 = its default)");
  app.add_option("--pp", pp, "Prompt tokens (0 = skip)")->capture_default_str();
  app.add_option("--tg", tg, "Generated tokens (0 = skip)")->capture_default_str();
  app.add_option("--repetitions,-r", repetitions, "Runs of each test")->capture_default_str();
  app.add_flag("--bandwidth", bandwidth, "Also measure the machine's read bandwidth");
  app.add_option("--option", option_args,
                 "Backend option KEY=VALUE, repeatable (e.g. --option activations=f32)");
  CLI11_PARSE(app, argc, argv);
  core::LogConfig log;
  log.level = "warn";
  (void)core::configure_logging(log);

  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  core::EngineInputs inputs;
  auto file = core::ModelFile::open(model, registry);
  if (!file) {
    std::fprintf(stderr, "error: %s\n", file.error().c_str());
    return 1;
  }
  inputs.file = std::move(*file);
  std::uint64_t weight_bytes = 0;  // what one decode step streams: every matrix once
  for (const lpx_tensor_view& t : inputs.file->tensors()) {
    if (t.n_dims == 2 && std::string_view(t.name) != "token_embd.weight") weight_bytes += t.size_bytes;
  }
  if (inputs.file->find_tensor("output.weight") == nullptr) {
    weight_bytes += inputs.file->find_tensor("token_embd.weight")->size_bytes;  // tied head
  }
  std::map<std::string, core::OptionValue> options;
  if (threads != 0) options["threads"] = std::int64_t{threads};
  for (const std::string& arg : option_args) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "error: --option wants KEY=VALUE, got \"%s\"\n", arg.c_str());
      return 1;
    }
    const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    // An integer is an int64 option; anything else a string.
    std::int64_t number = 0;
    const char* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, number);
    if (!value.empty() && ec == std::errc() && ptr == end) {
      options[key] = number;
    } else {
      options[key] = value;
    }
  }
  auto instance = core::default_instance(registry, backend, options);
  if (!instance) {
    std::fprintf(stderr, "error: %s\n", instance.error().c_str());
    return 1;
  }
  inputs.backend = instance->instance;
  auto greedy = core::default_instance(registry, "greedy");
  inputs.sampler_chain.push_back(std::move(*greedy));
  inputs.config.max_sequences = 1;
  inputs.config.context_size = std::max<std::uint32_t>(pp, 1) + tg + 8;
  auto engine = core::build_engine(std::move(inputs), registry);
  if (!engine) {
    std::fprintf(stderr, "error: %s\n", engine.error().c_str());
    return 1;
  }
  const core::Tokenizer& tokenizer = (*engine)->tokenizer();
  std::vector<std::int32_t> banned;
  for (std::int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.is_end_of_generation(id)) banned.push_back(id);
  }
  // Deterministic ordinary tokens, like llama-bench's random prompt.
  std::vector<std::int32_t> prompt(std::max<std::uint32_t>(pp, 1));
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    prompt[i] = static_cast<std::int32_t>((i * 7919 + 1000) % static_cast<std::size_t>(tokenizer.vocab_size()));
  }
  std::printf("model: %s (%.1f MiB streamed per decode step)\nbackend: %s\n", model.c_str(),
              static_cast<double>(weight_bytes) / (1 << 20), backend.c_str());
  run_once(**engine, {prompt[0]}, 4, banned);  // warm-up: page in the weights
  auto stats = [](std::vector<double> v) {
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    return std::pair{mean, v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0};
  };
  if (pp > 0) {
    std::vector<double> rates;
    for (std::uint32_t i = 0; i < repetitions; ++i) {
      rates.push_back(pp / (run_once(**engine, prompt, 1, banned).ttft_ms / 1000.0));
    }
    auto [mean, sd] = stats(rates);
    std::printf("pp%u: %.2f ± %.2f tokens/s\n", pp, mean, sd);
  }
  if (tg > 0) {
    std::vector<double> rates;
    for (std::uint32_t i = 0; i < repetitions; ++i) {
      rates.push_back(run_once(**engine, {prompt[0]}, tg + 1, banned).decode_tps);
    }
    auto [mean, sd] = stats(rates);
    std::printf("tg%u: %.2f ± %.2f tokens/s (%.2f GB/s of weights)\n", tg, mean, sd,
                mean * static_cast<double>(weight_bytes) / 1e9);
  }
  if (bandwidth) {
    const unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    std::printf("read bandwidth (%u threads): %.2f GB/s\n", n, read_bandwidth_gbs(n));
  }
  return 0;
}
