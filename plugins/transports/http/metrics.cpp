#include "metrics.hpp"

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <fstream>

namespace lpx::http {

void append_sample(std::string& out, const std::string& name, double value) {
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", value);
  out += name;
  out += ' ';
  out += number;
  out += '\n';
}

std::string label_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

namespace {

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void gauge(std::string& out, const char* name, const char* help, double value) {
  header(out, name, "gauge", help);
  append_sample(out, name, value);
}

// Resident and virtual size from /proc/self/statm (pages).
std::pair<double, double> process_memory() {
  std::ifstream statm("/proc/self/statm");
  double size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return {resident_pages * page, size_pages * page};
}

}  // namespace

void Histogram::observe(double seconds) noexcept {
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<std::uint64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::render_series(std::string& out, const char* name, const std::string& labels) const {
  std::uint64_t cumulative = 0;
  const std::string prefix = labels.empty() ? "" : labels + ",";
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  char bound[32];
  for (std::size_t i = 0; i <= kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    if (i < kBounds.size()) {
      std::snprintf(bound, sizeof bound, "%g", kBounds[i]);
    } else {
      std::snprintf(bound, sizeof bound, "+Inf");
    }
    append_sample(out, std::string(name) + "_bucket{" + prefix + "le=\"" + bound + "\"}",
         static_cast<double>(cumulative));
  }
  append_sample(out, std::string(name) + "_sum" + braces,
       static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6);
  append_sample(out, std::string(name) + "_count" + braces, static_cast<double>(cumulative));
}

double ModelMetrics::tokens_per_second(std::uint64_t generated_now) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (generated_now < window_tokens_) {  // the model was loaded again: its counter restarted
    window_start_ = now;
    window_tokens_ = generated_now;
  }
  const double elapsed = std::chrono::duration<double>(now - window_start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(generated_now - window_tokens_) / elapsed : 0;
  if (elapsed >= 10) {
    window_start_ = now;
    window_tokens_ = generated_now;
    last_rate_ = rate;
  }
  return elapsed >= 1 ? rate : last_rate_;
}

void ServerMetrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

ModelMetrics& ServerMetrics::model(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& slot = models_[name];
  if (!slot) slot = std::make_unique<ModelMetrics>();
  return *slot;
}

namespace {

std::string model_label(const ModelSample& m) { return "model=\"" + label_value(m.name) + "\""; }

// One family with a sample per model that `value` gives one for.
template <class Value>
void per_model(std::string& out, const char* name, const char* type, const char* help,
               const std::vector<ModelSample>& models, Value value) {
  header(out, name, type, help);
  for (const ModelSample& m : models) {
    if (const std::optional<double> v = value(m)) append_sample(out, std::string(name) + "{" + model_label(m) + "}", *v);
  }
}

template <class Member>
void engine_family(std::string& out, const char* name, const char* type, const char* help,
                   const std::vector<ModelSample>& models, Member member) {
  per_model(out, name, type, help, models, [&](const ModelSample& m) -> std::optional<double> {
    if (!m.engine) return std::nullopt;
    return static_cast<double>((*m.engine).*member);
  });
}

void histogram_family(std::string& out, const char* name, const char* help,
                      const std::vector<ModelSample>& models, Histogram ModelMetrics::*member) {
  header(out, name, "histogram", help);
  for (const ModelSample& m : models) {
    if (m.metrics != nullptr) (m.metrics->*member).render_series(out, name, model_label(m));
  }
}

}  // namespace

std::string ServerMetrics::render(const std::vector<ModelSample>& models) {
  std::string out;
  out.reserve(8192);
  gauge(out, "lpx_up", "1 while the server runs", 1);
  {
    std::lock_guard lock(mutex_);
    header(out, "lpx_http_requests_total", "counter", "HTTP requests answered, by endpoint and status");
    for (const auto& [key, count] : requests_) {
      append_sample(out, "lpx_http_requests_total{endpoint=\"" + key.first + "\",status=\"" +
                    std::to_string(key.second) + "\"}",
           static_cast<double>(count));
    }
  }
  per_model(out, "lpx_model_loaded", "gauge", "1 while the model is loaded, else 0", models,
            [](const ModelSample& m) -> std::optional<double> {
              if (m.adapter) return std::nullopt;
              return m.engine ? 1 : 0;
            });
  per_model(out, "lpx_model_memory_bytes", "gauge",
            "Weights and KV cache of the model: measured when loaded, else estimated", models,
            [](const ModelSample& m) -> std::optional<double> {
              if (m.adapter) return std::nullopt;
              return static_cast<double>(m.memory_bytes);
            });
  per_model(out, "lpx_generation_tokens_per_second", "gauge", "Tokens generated per second (recent window)",
            models, [](const ModelSample& m) -> std::optional<double> {
              if (m.adapter) return std::nullopt;
              if (!m.engine || m.metrics == nullptr) return m.engine ? std::optional<double>(0) : std::nullopt;
              return m.metrics->tokens_per_second(m.engine->generated_tokens);
            });
  histogram_family(out, "lpx_time_to_first_token_seconds", "Time from request to first token", models,
                   &ModelMetrics::ttft);
  histogram_family(out, "lpx_inter_token_latency_seconds", "Time between consecutive tokens", models,
                   &ModelMetrics::inter_token);
  histogram_family(out, "lpx_request_duration_seconds", "Time from request to last token", models,
                   &ModelMetrics::e2e);
  histogram_family(out, "lpx_queue_wait_seconds",
                   "Time from request to a sequence slot (part of the time to first token)", models,
                   &ModelMetrics::queue_wait);
  using S = lpx_engine_stats;
  engine_family(out, "lpx_prompt_tokens_total", "counter", "Prompt tokens computed (cache hits excluded)",
                models, &S::prompt_tokens);
  engine_family(out, "lpx_generated_tokens_total", "counter", "Tokens generated", models, &S::generated_tokens);
  engine_family(out, "lpx_engine_steps_total", "counter", "Forward passes of the engine", models, &S::steps);
  engine_family(out, "lpx_queue_depth", "gauge", "Requests waiting for a sequence slot", models, &S::waiting_requests);
  engine_family(out, "lpx_running_sequences", "gauge", "Sequences being prefilled or decoded", models,
                &S::running_requests);
  engine_family(out, "lpx_kv_cache_blocks_used", "gauge", "KV-cache blocks in use", models, &S::kv_blocks_used);
  engine_family(out, "lpx_kv_cache_blocks_total", "gauge", "KV-cache blocks in the pool", models, &S::kv_blocks_total);
  per_model(out, "lpx_kv_cache_usage_ratio", "gauge", "Share of the KV-cache pool in use", models,
            [](const ModelSample& m) -> std::optional<double> {
              if (!m.engine) return std::nullopt;
              return m.engine->kv_blocks_total ? static_cast<double>(m.engine->kv_blocks_used) / m.engine->kv_blocks_total : 0;
            });
  engine_family(out, "lpx_prefix_cache_hits_total", "counter",
                "Prompt KV blocks mapped from the prefix cache instead of computed", models, &S::prefix_cache_hits);
  engine_family(out, "lpx_prefix_cache_misses_total", "counter",
                "Full prompt KV blocks looked up in the prefix cache and not found", models, &S::prefix_cache_misses);
  engine_family(out, "lpx_prefix_cache_evictions_total", "counter",
                "Cached KV blocks taken back for other sequences", models, &S::prefix_cache_evictions);
  engine_family(out, "lpx_prefix_cache_blocks", "gauge", "KV blocks indexed by the prefix cache (held or idle)",
                models, &S::prefix_cache_blocks);
  engine_family(out, "lpx_spec_draft_tokens_total", "counter", "Speculative draft tokens verified by the model",
                models, &S::spec_draft_tokens);
  engine_family(out, "lpx_engine_steps_queued_behind_total", "counter",
                "Steps the device ran queued behind the one before, without waiting for the host",
                models, &S::steps_queued_behind);
  engine_family(out, "lpx_spec_accepted_tokens_total", "counter", "Speculative draft tokens the model confirmed",
                models, &S::spec_accepted_tokens);
  const auto [resident, virtual_size] = process_memory();
  gauge(out, "process_resident_memory_bytes", "Resident memory of the server process", resident);
  gauge(out, "process_virtual_memory_bytes", "Virtual memory of the server process", virtual_size);
  return out;
}

}  // namespace lpx::http
