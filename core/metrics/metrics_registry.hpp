// Process-wide metrics that plugins and the core record, rendered in Prometheus text format.
//
// Thread-safety: register() takes a lock; record() is lock-free (atomics) so it may sit on the
// decode hot path; render() takes the lock and reads atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lpx/host_api.h"
#include "util/expected.hpp"

namespace lpx::core {

class MetricsRegistry {
 public:
  // The id of the metric `lpx_<name>`; the existing one when registered before with the same
  // kind. Fails on a bad name, a kind conflict, or unsorted histogram bounds.
  Expected<lpx_metric_id> register_metric(std::int32_t kind, const std::string& name,
                                          const std::string& help,
                                          const std::vector<double>& bucket_bounds);
  // Counter: add; gauge: set; histogram: observe. Unknown ids are ignored.
  void record(lpx_metric_id id, double value) noexcept;
  // Prometheus text exposition format, metrics in registration order.
  std::string render() const;

 private:
  struct Metric {
    lpx_metric_kind kind;
    std::string name;
    std::string help;
    std::vector<double> bounds;
    std::atomic<double> value{0};  // counter/gauge value, histogram sum
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets;  // histogram: bounds.size() + 1 (+Inf)
    std::atomic<std::uint64_t> count{0};
  };
  static constexpr size_t kMaxMetrics = 1024;

  mutable std::mutex mutex_;
  // Fixed capacity so that record() can index without a lock while register() appends.
  std::unique_ptr<Metric[]> metrics_ = std::make_unique<Metric[]>(kMaxMetrics);
  std::atomic<size_t> size_{0};
};

}  // namespace lpx::core
