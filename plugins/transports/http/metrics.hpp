// The server's Prometheus metrics. Counters and histograms are lock-free (atomics) so the engine
// thread can record token timings without waiting; request counts by (endpoint, status) take a
// short lock. Each model has its own series, labelled model="name". render() writes the text
// exposition format 0.0.4, each family's header once.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <lpx/engine.h>

namespace lpx::http {

// One sample line of the text exposition format: `name value` (name may carry {labels}).
void append_sample(std::string& out, const std::string& name, double value);

// A label value with backslash, double quote and newline escaped, as the format requires.
std::string label_value(std::string_view value);

class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,  30};
  void observe(double seconds) noexcept;
  // The series (buckets, sum, count) without the family's header; `labels`: "" or e.g.
  // `model="x"`, put before each bucket's le.
  void render_series(std::string& out, const char* name, const std::string& labels) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // last: +Inf
  std::atomic<std::uint64_t> sum_micros_{0};
};

// One model's latency histograms and its tokens/s window. Thread-safe.
class ModelMetrics {
 public:
  void observe_queue_wait(double seconds) noexcept { queue_wait.observe(seconds); }
  void observe_time_to_first_token(double seconds) noexcept { ttft.observe(seconds); }
  void observe_inter_token(double seconds) noexcept { inter_token.observe(seconds); }
  void observe_request(double seconds) noexcept { e2e.observe(seconds); }
  // The rate of the engine's generated-token counter over the last window of at least 10 s.
  double tokens_per_second(std::uint64_t generated_now);

  Histogram ttft, inter_token, e2e, queue_wait;

 private:
  std::mutex mutex_;  // the window
  std::chrono::steady_clock::time_point window_start_ = std::chrono::steady_clock::now();
  std::uint64_t window_tokens_ = 0;
  double last_rate_ = 0;
};

// What /metrics shows of one served model now.
struct ModelSample {
  std::string name;
  ModelMetrics* metrics = nullptr;      // its histograms; null: no request has used it yet
  std::optional<lpx_engine_stats> engine;  // while it is loaded
  std::uint64_t memory_bytes = 0;       // weights + KV cache, measured or estimated
  // A LoRA adapter ("MODEL:ADAPTER"): its own request histograms, while the engine's numbers
  // (loaded, memory, tokens, KV cache) stay with its model, counted once.
  bool adapter = false;
};

class ServerMetrics {
 public:
  void count_request(const std::string& endpoint, int status);
  // The series of model `name`, made on first use; the reference stays valid with the metrics.
  ModelMetrics& model(const std::string& name);

  // Everything: the server's counters, then every model's series labelled model="name".
  std::string render(const std::vector<ModelSample>& models);

 private:
  std::mutex mutex_;  // requests_ and models_
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, std::unique_ptr<ModelMetrics>> models_;
};

}  // namespace lpx::http
