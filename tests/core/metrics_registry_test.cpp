#include "metrics/metrics_registry.hpp"

#include <thread>

#include <gtest/gtest.h>

namespace lpx::core {
namespace {

TEST(MetricsRegistry, CountersAddAndGaugesSet) {
  MetricsRegistry registry;
  auto requests = registry.register_metric(LPX_METRIC_COUNTER, "requests_total", "Requests", {});
  auto depth = registry.register_metric(LPX_METRIC_GAUGE, "queue_depth", "Queue depth", {});
  ASSERT_TRUE(requests && depth);
  registry.record(*requests, 2);
  registry.record(*requests, 3);
  registry.record(*requests, -7);  // counters never go down
  registry.record(*depth, 4);
  registry.record(*depth, 1);
  const std::string text = registry.render();
  EXPECT_NE(text.find("# TYPE lpx_requests_total counter\nlpx_requests_total 5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE lpx_queue_depth gauge\nlpx_queue_depth 1\n"), std::string::npos);
}

TEST(MetricsRegistry, HistogramsAreCumulative) {
  MetricsRegistry registry;
  auto ttft = registry.register_metric(LPX_METRIC_HISTOGRAM, "ttft_seconds", "TTFT", {0.1, 1});
  ASSERT_TRUE(ttft);
  for (double v : {0.05, 0.1, 0.5, 3.0}) registry.record(*ttft, v);
  const std::string text = registry.render();
  EXPECT_NE(text.find("lpx_ttft_seconds_bucket{le=\"0.1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lpx_ttft_seconds_bucket{le=\"1\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("lpx_ttft_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("lpx_ttft_seconds_sum 3.65\n"), std::string::npos);
  EXPECT_NE(text.find("lpx_ttft_seconds_count 4\n"), std::string::npos);
}

TEST(MetricsRegistry, ReRegisteringReturnsTheSameIdAndConflictsFail) {
  MetricsRegistry registry;
  auto first = registry.register_metric(LPX_METRIC_COUNTER, "tokens", "Tokens", {});
  auto again = registry.register_metric(LPX_METRIC_COUNTER, "tokens", "Tokens", {});
  ASSERT_TRUE(first && again);
  EXPECT_EQ(*first, *again);
  auto conflict = registry.register_metric(LPX_METRIC_GAUGE, "tokens", "Tokens", {});
  ASSERT_FALSE(conflict);
  EXPECT_NE(conflict.error().message.find("already registered as a counter"), std::string::npos);
}

TEST(MetricsRegistry, RejectsBadNamesAndBounds) {
  MetricsRegistry registry;
  EXPECT_FALSE(registry.register_metric(LPX_METRIC_COUNTER, "Bad-Name", "", {}));
  EXPECT_FALSE(registry.register_metric(LPX_METRIC_HISTOGRAM, "h", "", {1, 0.5}));
  EXPECT_FALSE(registry.register_metric(LPX_METRIC_HISTOGRAM, "h", "", {1, 1}));
}

TEST(MetricsRegistry, ConcurrentRecordsAreNotLost) {
  MetricsRegistry registry;
  auto id = registry.register_metric(LPX_METRIC_COUNTER, "hits", "Hits", {});
  ASSERT_TRUE(id);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) registry.record(*id, 1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_NE(registry.render().find("lpx_hits 40000\n"), std::string::npos);
}

}  // namespace
}  // namespace lpx::core
