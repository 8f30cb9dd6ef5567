// The server's Prometheus metrics. Counters and histograms are lock-free (atomics) so the engine
// thread can record token timings without waiting; request counts by (endpoint, status) take a
// short lock. render() writes the text exposition format 0.0.4.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

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
  // `labels`: "" or e.g. `model="x"`, put before each bucket's le.
  void render(std::string& out, const char* name, const char* help, const std::string& labels) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // last: +Inf
  std::atomic<std::uint64_t> sum_micros_{0};
};

class ServerMetrics {
 public:
  // `model`: the id the model's series are labelled with (model="...").
  explicit ServerMetrics(std::string model);

  void count_request(const std::string& endpoint, int status);
  void observe_queue_wait(double seconds) noexcept { queue_wait_.observe(seconds); }
  void observe_time_to_first_token(double seconds) noexcept { ttft_.observe(seconds); }
  void observe_inter_token(double seconds) noexcept { inter_token_.observe(seconds); }
  void observe_request(double seconds) noexcept { e2e_.observe(seconds); }

  // Everything, with the engine's live numbers (its token counters feed the tokens/s gauge).
  std::string render(const lpx_engine_stats& engine);

 private:
  double tokens_per_second(std::uint64_t generated_now);

  std::mutex mutex_;  // requests_ and the tokens/s window
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  // A sample of the engine's generated-token counter about 10 s ago, for the rate gauge.
  std::chrono::steady_clock::time_point window_start_ = std::chrono::steady_clock::now();
  std::uint64_t window_tokens_ = 0;
  double last_rate_ = 0;
  std::string model_label_;  // model="id", escaped
  Histogram ttft_, inter_token_, e2e_, queue_wait_;
};

}  // namespace lpx::http
