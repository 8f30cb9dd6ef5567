#include "metrics.hpp"

#include <unistd.h>

#include <cstdio>
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

// `labels`: "" or "{...}".
void gauge(std::string& out, const char* name, const char* help, double value,
           const std::string& labels = {}) {
  header(out, name, "gauge", help);
  append_sample(out, name + labels, value);
}

void counter(std::string& out, const char* name, const char* help, double value,
             const std::string& labels = {}) {
  header(out, name, "counter", help);
  append_sample(out, name + labels, value);
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

void Histogram::render(std::string& out, const char* name, const char* help,
                       const std::string& labels) const {
  header(out, name, "histogram", help);
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


ServerMetrics::ServerMetrics(std::string model) : model_label_("model=\"" + label_value(model) + "\"") {}

void ServerMetrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

double ServerMetrics::tokens_per_second(std::uint64_t generated_now) {
  // Called with mutex_ held. The rate over the last window of at least 10 s (or since start).
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - window_start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(generated_now - window_tokens_) / elapsed : 0;
  if (elapsed >= 10) {
    window_start_ = now;
    window_tokens_ = generated_now;
    last_rate_ = rate;
  }
  return elapsed >= 1 ? rate : last_rate_;
}

std::string ServerMetrics::render(const lpx_engine_stats& engine) {
  std::string out;
  out.reserve(8192);
  const std::string& m = model_label_;
  const std::string of_model = "{" + m + "}";
  gauge(out, "lpx_up", "1 while the server runs", 1);
  {
    std::lock_guard lock(mutex_);
    header(out, "lpx_http_requests_total", "counter", "HTTP requests answered, by endpoint and status");
    for (const auto& [key, count] : requests_) {
      append_sample(out, "lpx_http_requests_total{endpoint=\"" + key.first + "\",status=\"" +
                    std::to_string(key.second) + "\"}",
           static_cast<double>(count));
    }
    gauge(out, "lpx_generation_tokens_per_second", "Tokens generated per second (recent window)",
          tokens_per_second(engine.generated_tokens), of_model);
  }
  ttft_.render(out, "lpx_time_to_first_token_seconds", "Time from request to first token", m);
  inter_token_.render(out, "lpx_inter_token_latency_seconds", "Time between consecutive tokens", m);
  e2e_.render(out, "lpx_request_duration_seconds", "Time from request to last token", m);
  queue_wait_.render(out, "lpx_queue_wait_seconds",
                     "Time from request to a sequence slot (part of the time to first token)", m);
  counter(out, "lpx_prompt_tokens_total", "Prompt tokens computed (cache hits excluded)",
          static_cast<double>(engine.prompt_tokens), of_model);
  counter(out, "lpx_generated_tokens_total", "Tokens generated",
          static_cast<double>(engine.generated_tokens), of_model);
  counter(out, "lpx_engine_steps_total", "Forward passes of the engine",
          static_cast<double>(engine.steps), of_model);
  gauge(out, "lpx_queue_depth", "Requests waiting for a sequence slot", engine.waiting_requests, of_model);
  gauge(out, "lpx_running_sequences", "Sequences being prefilled or decoded", engine.running_requests, of_model);
  gauge(out, "lpx_kv_cache_blocks_used", "KV-cache blocks in use", engine.kv_blocks_used, of_model);
  gauge(out, "lpx_kv_cache_blocks_total", "KV-cache blocks in the pool", engine.kv_blocks_total, of_model);
  gauge(out, "lpx_kv_cache_usage_ratio", "Share of the KV-cache pool in use",
        engine.kv_blocks_total ? static_cast<double>(engine.kv_blocks_used) / engine.kv_blocks_total : 0, of_model);
  counter(out, "lpx_prefix_cache_hits_total", "Prompt KV blocks mapped from the prefix cache instead of computed",
          static_cast<double>(engine.prefix_cache_hits), of_model);
  counter(out, "lpx_prefix_cache_misses_total", "Full prompt KV blocks looked up in the prefix cache and not found",
          static_cast<double>(engine.prefix_cache_misses), of_model);
  counter(out, "lpx_prefix_cache_evictions_total", "Cached KV blocks taken back for other sequences",
          static_cast<double>(engine.prefix_cache_evictions), of_model);
  gauge(out, "lpx_prefix_cache_blocks", "KV blocks indexed by the prefix cache (held or idle)",
        engine.prefix_cache_blocks, of_model);
  counter(out, "lpx_spec_draft_tokens_total", "Speculative draft tokens verified by the model",
          static_cast<double>(engine.spec_draft_tokens), of_model);
  counter(out, "lpx_spec_accepted_tokens_total", "Speculative draft tokens the model confirmed",
          static_cast<double>(engine.spec_accepted_tokens), of_model);
  const auto [resident, virtual_size] = process_memory();
  gauge(out, "process_resident_memory_bytes", "Resident memory of the server process", resident);
  gauge(out, "process_virtual_memory_bytes", "Virtual memory of the server process", virtual_size);
  return out;
}

}  // namespace lpx::http
