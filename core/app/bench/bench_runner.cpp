#include "bench/bench_runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <numeric>

#include <boost/json.hpp>

#include "bench/memory_bandwidth.hpp"
#include "engine/engine_builder.hpp"
#include "gpu/device_usage.hpp"
#include "host/host_cpu.hpp"
#include "synth/synthetic_model.hpp"

namespace lpx::core::bench {
namespace {

using Clock = std::chrono::steady_clock;

// B requests at once; returns each request's token times.
struct Batch {
  std::vector<std::vector<Clock::time_point>> token_times;
  Clock::time_point submitted;
  std::string error;
};

// What every request of a run carries beside its prompt: its sampling (null: greedy) and the
// resident LoRA adapter it runs with (null: none).
struct RequestExtras {
  const lpx_sampling_overrides* sampling = nullptr;
  const char* adapter = nullptr;
};

// Every request decodes exactly `generate` tokens (end-of-generation ignored, as llama-bench
// does), as `extras` say; on a GPU backend the token ids are picked on the device.
Batch run_batch(Engine& engine, const std::vector<std::vector<std::int32_t>>& prompts,
                std::uint32_t generate, const RequestExtras& extras) {
  struct Request {
    std::vector<Clock::time_point>* times;
    std::string* error;
  };
  Batch batch;
  batch.token_times.resize(prompts.size());
  std::vector<Request> users(prompts.size());
  std::vector<lpx_request> requests(prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    batch.token_times[i].reserve(generate + 1);
    users[i] = {&batch.token_times[i], &batch.error};
    lpx_request& r = requests[i];
    r.struct_size = sizeof(r);
    r.prompt_tokens = prompts[i].data();
    r.prompt_token_count = prompts[i].size();
    r.max_tokens = generate;
    r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    r.sampling = extras.sampling;
    r.adapter = extras.adapter;
    r.user = &users[i];
    r.on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
      if (e->token >= 0) static_cast<Request*>(user)->times->push_back(Clock::now());
      return 0;
    };
    r.on_done = [](void* user, const lpx_request_result* res) {
      if (res->error != nullptr) *static_cast<Request*>(user)->error = res->error->message;
    };
  }
  // Queued together, so the batch starts in one step rather than as the submissions trickle in.
  batch.submitted = Clock::now();
  auto submitted = engine.submit_together(requests);
  if (!submitted) {
    batch.error = submitted.error().message;
    return batch;
  }
  const std::vector<std::uint64_t>& ids = *submitted;
  for (std::uint64_t id : ids) engine.wait(id);
  return batch;
}

std::pair<double, double> mean_sd(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0};
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size()))) ;
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

using PromptMaker = std::function<std::vector<std::int32_t>(std::uint32_t n, std::uint32_t salt)>;

// tgN @ dD at batch B: aggregate tokens/s over the window in which all B requests decode.
Expected<BenchResult> decode_test(Engine& engine, std::uint32_t n, std::uint32_t depth,
                                  std::uint32_t batch, std::uint32_t repetitions,
                                  const PromptMaker& prompt, const RequestExtras& extras) {
  BenchResult r;
  r.test = "tg" + std::to_string(n);
  r.batch = batch;
  r.depth = depth;
  const std::string name = r.test + (depth > 0 ? " @ d" + std::to_string(depth) : "");
  std::vector<double> rates, ttfts, gaps;
  for (std::uint32_t rep = 0; rep < repetitions; ++rep) {
    std::vector<std::vector<std::int32_t>> prompts;
    for (std::uint32_t i = 0; i < batch; ++i) prompts.push_back(prompt(std::max(depth, 1u), rep * batch + i + 1));
    const Batch b = run_batch(engine, prompts, n, extras);
    if (!b.error.empty()) return invalid_argument(name + ": " + b.error);
    Clock::time_point start = Clock::time_point::min(), end = Clock::time_point::max();
    for (const auto& times : b.token_times) {
      if (times.size() < 2) return invalid_argument(name + ": a request produced fewer than 2 tokens");
      start = std::max(start, times.front());
      end = std::min(end, times.back());
      ttfts.push_back(ms(times.front() - b.submitted));
      for (std::size_t i = 1; i < times.size(); ++i) gaps.push_back(ms(times[i] - times[i - 1]));
    }
    std::uint64_t decoded = 0;
    for (const auto& times : b.token_times) {
      decoded += static_cast<std::uint64_t>(std::count_if(
          times.begin(), times.end(), [&](Clock::time_point t) { return t > start && t <= end; }));
    }
    if (end <= start || decoded < batch) {
      return invalid_argument(name + " at batch " + std::to_string(batch) +
                        ": the requests never decoded together (each one's prefill ended after "
                        "another had finished); use a longer -n or a smaller batch");
    }
    rates.push_back(static_cast<double>(decoded) / std::chrono::duration<double>(end - start).count());
  }
  std::tie(r.tokens_per_s, r.stddev) = mean_sd(rates);
  r.ttft_ms = mean_sd(ttfts).first;
  r.itl_p50_ms = percentile(gaps, 50);
  r.itl_p99_ms = percentile(gaps, 99);
  return r;
}

// A GGUF file or synth:NAME:TYPE, opened.
Expected<std::unique_ptr<ModelFile>> open_model_spec(const std::string& spec, PluginRegistry& registry) {
  auto path = synth::resolve_model_spec(spec);
  if (!path) return unexpected(path.error());
  return ModelFile::open(*path, registry);
}

}  // namespace

Expected<BenchReport> run_bench(const BenchConfig& config, PluginRegistry& registry) {
  EngineInputs inputs;
  auto file = open_model_spec(config.model, registry);
  if (!file) return unexpected(file.error());
  inputs.file = std::move(*file);
  if (!config.draft_model.empty()) {
    auto draft = open_model_spec(config.draft_model, registry);
    if (!draft) return unexpected(draft.error());
    inputs.draft_file = std::move(*draft);
  }
  BenchReport report;
  report.model = config.model;
  report.backend = config.backend;
  report.sampling = config.sampling_text;
  RequestExtras extras;
  extras.sampling = config.sampling.set != 0 ? &config.sampling : nullptr;
  if (!config.adapter.empty()) {
    auto spec = parse_lora_spec(config.adapter);
    if (!spec) return unexpected(spec.error());
    inputs.adapters.push_back({"bench", *spec});
    extras.adapter = "bench";
  }
  auto name = inputs.file->get_string("general.name");
  report.model_name = name ? *name : std::filesystem::path(inputs.file->path()).stem().string();
  for (const lpx_tensor_view& t : inputs.file->tensors()) {  // what one decode step streams
    if (t.n_dims == 2 && std::string_view(t.name) != "token_embd.weight") report.weight_bytes += t.size_bytes;
  }
  if (inputs.file->find_tensor("output.weight") == nullptr) {
    if (const lpx_tensor_view* embd = inputs.file->find_tensor("token_embd.weight")) {
      report.weight_bytes += embd->size_bytes;  // the tied output head reads the embedding
    }
  }
  auto backend = default_instance(registry, config.backend, config.backend_options);
  if (!backend) return unexpected(backend.error());
  report.backend_options = host::describe_backend_options(config.backend, backend->options.values);
  report.host_cpu = host::cpu_model_name() + " (" + host::cpu_isa() + ")";
  const auto& capabilities = backend->library->description().capabilities;
  report.on_device = std::find(capabilities.begin(), capabilities.end(), "device-models") !=
                     capabilities.end();
  inputs.backend = backend->instance;
  auto greedy = default_instance(registry, "greedy");
  if (!greedy) return unexpected(greedy.error());
  inputs.sampler_chain.push_back(std::move(*greedy));
  const std::uint32_t max_batch = *std::max_element(config.batches.begin(), config.batches.end());
  const std::uint32_t max_pp = config.prompt_lengths.empty() ? 1 : *std::max_element(config.prompt_lengths.begin(), config.prompt_lengths.end());
  const std::uint32_t max_tg = config.generate_lengths.empty() ? 1 : *std::max_element(config.generate_lengths.begin(), config.generate_lengths.end());
  const std::uint32_t max_depth = config.depths.empty() ? 0 : *std::max_element(config.depths.begin(), config.depths.end());
  inputs.config.max_sequences = std::max(1u, max_batch);
  inputs.config.context_size = std::max<std::uint32_t>({max_pp, max_depth, 1}) + max_tg + 16;
  inputs.config.kv_cache_tokens = inputs.config.context_size * inputs.config.max_sequences;
  // Tests share prompt starts (the prompts differ by salt only): each prefill is measured whole.
  inputs.config.prefix_cache = false;
  inputs.config.overlap_steps = config.overlap_steps;
  inputs.config.max_draft = config.max_draft;
  inputs.config.batch_tokens = std::max<std::uint32_t>(512, max_batch);
  inputs.config.prefill_tokens_while_decoding = inputs.config.batch_tokens;
  auto built = build_engine(std::move(inputs), registry);
  if (!built) return unexpected(built.error());
  Engine& engine = **built;

  const Tokenizer& tokenizer = engine.tokenizer();
  // Deterministic ordinary tokens, like llama-bench's random prompt.
  const auto prompt = [&](std::uint32_t n, std::uint32_t salt) {
    std::vector<std::int32_t> p(std::max<std::uint32_t>(n, 1));
    for (std::size_t i = 0; i < p.size(); ++i) {
      p[i] = static_cast<std::int32_t>((i * 7919 + 1000 + salt * 104729) % static_cast<std::size_t>(tokenizer.vocab_size()));
    }
    return p;
  };
  // Warm-up: page the weights in; a failing sampling setting shows here.
  if (const Batch b = run_batch(engine, {prompt(1, 0)}, 4, extras); !b.error.empty()) {
    return invalid_argument(b.error);
  }

  for (std::uint32_t n : config.prompt_lengths) {
    if (n == 0) continue;
    std::vector<double> rates, ttfts;
    for (std::uint32_t rep = 0; rep < config.repetitions; ++rep) {
      const Batch b = run_batch(engine, {prompt(n, rep + 1)}, 1, extras);
      if (!b.error.empty()) return invalid_argument("pp" + std::to_string(n) + ": " + b.error);
      const double ttft = ms(b.token_times[0].front() - b.submitted);
      ttfts.push_back(ttft);
      rates.push_back(n / (ttft / 1000.0));
    }
    BenchResult r;
    r.test = "pp" + std::to_string(n);
    std::tie(r.tokens_per_s, r.stddev) = mean_sd(rates);
    r.ttft_ms = mean_sd(ttfts).first;
    report.results.push_back(r);
  }
  for (std::uint32_t n : config.generate_lengths) {
    if (n < 2) continue;
    for (std::uint32_t depth : config.depths) {
      for (std::uint32_t batch : config.batches) {
        lpx_engine_stats before{};
        before.struct_size = sizeof(before);
        engine.stats(before);
        auto result = decode_test(engine, n, depth, batch, config.repetitions, prompt, extras);
        if (!result) return unexpected(result.error());
        if (config.max_draft > 0) {
          lpx_engine_stats after{};
          after.struct_size = sizeof(after);
          engine.stats(after);
          const auto drafted = after.spec_draft_tokens - before.spec_draft_tokens;
          result->draft_acceptance =
              drafted ? static_cast<double>(after.spec_accepted_tokens - before.spec_accepted_tokens) / drafted : 0;
        }
        report.results.push_back(*result);
      }
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);  // before the bandwidth buffers
  report.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  report.read_bandwidth_gbs = read_bandwidth_gbs(config.bandwidth_threads);
  report.copy_bandwidth_gbs = copy_bandwidth_gbs(config.bandwidth_threads);
  double roofline_gbs = report.read_bandwidth_gbs;
  if (report.on_device) {
    auto gpu_option = config.backend_options.find("gpu");
    const int ordinal = gpu_option == config.backend_options.end()
                            ? 0
                            : static_cast<int>(std::get<std::int64_t>(gpu_option->second));
    auto device = gpu::measure_device_usage(ordinal);
    if (!device) return unexpected(device.error().prefixed("measuring the GPU's bandwidth: "));
    report.device_name = device->name;
    report.device_bandwidth_gbs = device->copy_bandwidth_gbs;
    report.device_memory_used_bytes = device->used_bytes;
    roofline_gbs = device->copy_bandwidth_gbs;
  }
  for (BenchResult& r : report.results) {
    if (r.test.rfind("tg", 0) != 0) continue;
    // One step streams the weights once for all `batch` sequences.
    r.achieved_gbs = static_cast<double>(report.weight_bytes) * (r.tokens_per_s / r.batch) / 1e9;
    r.roofline_percent = 100.0 * r.achieved_gbs / roofline_gbs;
  }
  return report;
}

std::string report_markdown(const BenchReport& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "model: %s (%s), %.1f MiB of weights per decode step\nbackend: %s (%s); tokens: %s\n"
                "cpu: %s; memory bandwidth: read %.1f GB/s, copy %.1f GB/s; peak RSS %.0f MiB\n\n",
                r.model.c_str(), r.model_name.c_str(), static_cast<double>(r.weight_bytes) / (1 << 20),
                r.backend.c_str(), r.backend_options.c_str(), r.sampling.c_str(), r.host_cpu.c_str(),
                r.read_bandwidth_gbs, r.copy_bandwidth_gbs,
                static_cast<double>(r.peak_rss_bytes) / (1 << 20));
  out += line;
  if (r.on_device) {
    std::snprintf(line, sizeof line,
                  "device: %s; copy bandwidth %.0f GB/s (the roofline below); device memory in "
                  "use %.0f MiB\n\n",
                  r.device_name.c_str(), r.device_bandwidth_gbs,
                  static_cast<double>(r.device_memory_used_bytes) / (1 << 20));
    out += line;
  }
  out += r.on_device
             ? "| test | batch | tokens/s | TTFT ms | ITL p50 ms | ITL p99 ms | % of GPU roofline | weights GB/s |\n"
             : "| test | batch | tokens/s | TTFT ms | ITL p50 ms | ITL p99 ms | % of read roofline | weights GB/s |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const BenchResult& x : r.results) {
    const bool tg = x.test.rfind("tg", 0) == 0;
    const std::string test = x.depth > 0 ? x.test + " @ d" + std::to_string(x.depth) : x.test;
    char achieved[32] = "";
    if (tg) std::snprintf(achieved, sizeof achieved, "%.1f", x.achieved_gbs);
    std::snprintf(line, sizeof line, "| %s | %u | %.2f ± %.2f | %.1f | %s | %s | %s | %s |\n", test.c_str(),
                  x.batch, x.tokens_per_s, x.stddev, x.ttft_ms,
                  tg ? std::to_string(x.itl_p50_ms).substr(0, 6).c_str() : "",
                  tg ? std::to_string(x.itl_p99_ms).substr(0, 6).c_str() : "",
                  tg ? (std::to_string(static_cast<int>(x.roofline_percent + 0.5)) + " %").c_str() : "", achieved);
    out += line;
  }
  return out;
}

std::string report_json(const BenchReport& r) {
  boost::json::array items;
  for (const BenchResult& x : r.results) {
    boost::json::object o{{"test", x.test},
                          {"batch", x.batch},
                          {"tokens_per_s", x.tokens_per_s},
                          {"stddev", x.stddev},
                          {"ttft_ms", x.ttft_ms},
                          {"model", r.model},
                          {"model_name", r.model_name},
                          {"backend", r.backend},
                          {"backend_options", r.backend_options},
                          {"cpu", r.host_cpu},
                          {"sampling", r.sampling},
                          {"weight_bytes", r.weight_bytes},
                          {"read_bandwidth_gbs", r.read_bandwidth_gbs},
                          {"copy_bandwidth_gbs", r.copy_bandwidth_gbs},
                          {"peak_rss_bytes", r.peak_rss_bytes}};
    if (r.on_device) {
      o["device"] = r.device_name;
      o["device_bandwidth_gbs"] = r.device_bandwidth_gbs;
      o["device_memory_used_bytes"] = r.device_memory_used_bytes;
    }
    if (x.test.rfind("tg", 0) == 0) {
      o["depth"] = x.depth;
      o["itl_p50_ms"] = x.itl_p50_ms;
      o["itl_p99_ms"] = x.itl_p99_ms;
      o["roofline_percent"] = x.roofline_percent;
      o["achieved_gbs"] = x.achieved_gbs;
      if (x.draft_acceptance >= 0) o["draft_acceptance"] = x.draft_acceptance;
    }
    items.push_back(std::move(o));
  }
  return boost::json::serialize(items) + "\n";
}

}  // namespace lpx::core::bench
