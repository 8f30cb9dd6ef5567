#include "metrics/metrics_registry.hpp"

#include <algorithm>
#include <sstream>

namespace lpx::core {
namespace {

bool is_valid_metric_name(const std::string& name) {
  if (name.empty() || !(name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z'))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

void atomic_add(std::atomic<double>& target, double value) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + value, std::memory_order_relaxed)) {
  }
}

const char* type_word(lpx_metric_kind kind) {
  switch (kind) {
    case LPX_METRIC_COUNTER: return "counter";
    case LPX_METRIC_GAUGE: return "gauge";
    case LPX_METRIC_HISTOGRAM: return "histogram";
  }
  return "untyped";
}

}  // namespace

Expected<lpx_metric_id> MetricsRegistry::register_metric(std::int32_t kind,
                                                          const std::string& name,
                                                          const std::string& help,
                                                          const std::vector<double>& bounds) {
  if (!is_valid_metric_name(name)) {
    return invalid_argument("metric name '" + name + "' is not [a-z_][a-z0-9_]*");
  }
  if (kind != LPX_METRIC_COUNTER && kind != LPX_METRIC_GAUGE && kind != LPX_METRIC_HISTOGRAM) {
    return invalid_argument("metric '" + name + "' has unknown kind " + std::to_string(kind));
  }
  if (!std::is_sorted(bounds.begin(), bounds.end()) ||
      std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end()) {
    return invalid_argument("metric '" + name + "': bucket bounds must be strictly ascending");
  }
  std::lock_guard lock(mutex_);
  const std::string full_name = "lpx_" + name;
  const size_t size = size_.load();
  for (size_t i = 0; i < size; ++i) {
    if (metrics_[i].name != full_name) continue;
    if (metrics_[i].kind != kind) {
      return invalid_argument("metric '" + full_name + "' is already registered as a " +
                        type_word(metrics_[i].kind));
    }
    return static_cast<lpx_metric_id>(i + 1);
  }
  if (size == kMaxMetrics) return resource_exhausted(std::string("too many metrics"));
  Metric& m = metrics_[size];
  m.kind = static_cast<lpx_metric_kind>(kind);
  m.name = full_name;
  m.help = help;
  if (kind == LPX_METRIC_HISTOGRAM) {
    m.bounds = bounds;
    m.buckets = std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1);
  }
  size_.store(size + 1, std::memory_order_release);
  return static_cast<lpx_metric_id>(size + 1);
}

void MetricsRegistry::record(lpx_metric_id id, double value) noexcept {
  if (id == 0 || id > size_.load(std::memory_order_acquire)) return;
  Metric& m = metrics_[id - 1];
  switch (m.kind) {
    case LPX_METRIC_COUNTER:
      if (value > 0) atomic_add(m.value, value);
      break;
    case LPX_METRIC_GAUGE:
      m.value.store(value, std::memory_order_relaxed);
      break;
    case LPX_METRIC_HISTOGRAM: {
      size_t bucket = std::lower_bound(m.bounds.begin(), m.bounds.end(), value) - m.bounds.begin();
      m.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
      m.count.fetch_add(1, std::memory_order_relaxed);
      atomic_add(m.value, value);
      break;
    }
  }
}

std::string MetricsRegistry::render() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  for (size_t i = 0; i < size_.load(); ++i) {
    const Metric& m = metrics_[i];
    out << "# HELP " << m.name << ' ' << m.help << '\n';
    out << "# TYPE " << m.name << ' ' << type_word(m.kind) << '\n';
    if (m.kind != LPX_METRIC_HISTOGRAM) {
      out << m.name << ' ' << m.value.load() << '\n';
      continue;
    }
    std::uint64_t cumulative = 0;
    for (size_t b = 0; b <= m.bounds.size(); ++b) {
      cumulative += m.buckets[b].load();
      out << m.name << "_bucket{le=\"";
      if (b < m.bounds.size()) {
        out << m.bounds[b];
      } else {
        out << "+Inf";
      }
      out << "\"} " << cumulative << '\n';
    }
    out << m.name << "_sum " << m.value.load() << '\n';
    out << m.name << "_count " << m.count.load() << '\n';
  }
  return out.str();
}

}  // namespace lpx::core
