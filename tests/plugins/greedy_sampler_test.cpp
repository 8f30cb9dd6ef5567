// The built-in greedy sampler, loaded as the host loads it.
#include <gtest/gtest.h>

#include <random>

#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"

namespace lpx::core {
namespace {

class GreedySampler : public ::testing::Test {
 protected:
  void SetUp() override {
    auto plugin = PluginLibrary::load(test::builtin_plugin("greedy"), services, "greedy");
    ASSERT_TRUE(plugin) << plugin.error();
    auto created = plugin.value()->create(ResolvedOptions{});
    ASSERT_TRUE(created) << created.error();
    instance = *created;
  }
  lpx_status* apply(lpx_candidates& candidates) {
    const auto& api = instance->api<lpx_sampler_api>();
    return api.apply(instance->raw(), nullptr, &candidates);
  }
  MetricsRegistry metrics;
  HostServices services{metrics};
  std::shared_ptr<PluginInstance> instance;
};

TEST_F(GreedySampler, PicksTheHighestLogitOnRandomInputs) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> logit(0.0f, 3.0f);
  for (size_t size : {1u, 2u, 7u, 1001u, 49152u}) {
    std::vector<lpx_token_candidate> data(size);
    size_t best = 0;
    for (size_t i = 0; i < size; ++i) {
      data[i] = {static_cast<int32_t>(i), logit(rng), 0.0f};
      if (data[i].logit > data[best].logit) best = i;
    }
    lpx_candidates candidates{data.data(), size, -1, 0, 0, 0};
    ASSERT_EQ(apply(candidates), nullptr);
    EXPECT_EQ(candidates.selected, static_cast<int64_t>(best)) << "size " << size;
  }
}

TEST_F(GreedySampler, TakesTheFirstOnTiesAndTrustsSortedInput) {
  std::vector<lpx_token_candidate> data = {{5, 1.0f, 0}, {9, 2.0f, 0}, {3, 2.0f, 0}};
  lpx_candidates candidates{data.data(), data.size(), -1, 0, 0, 0};
  ASSERT_EQ(apply(candidates), nullptr);
  EXPECT_EQ(candidates.selected, 1);
  std::vector<lpx_token_candidate> sorted = {{4, 9.0f, 0}, {2, 1.0f, 0}};
  lpx_candidates sorted_candidates{sorted.data(), sorted.size(), -1, 1, 0, 0};
  ASSERT_EQ(apply(sorted_candidates), nullptr);
  EXPECT_EQ(sorted_candidates.selected, 0);
}

TEST_F(GreedySampler, AnswersCapabilityQueries) {
  EXPECT_TRUE(instance->library().supports("sampler:selects"));
  EXPECT_TRUE(instance->library().supports("sampler:deterministic"));
  EXPECT_FALSE(instance->library().supports("device:cuda"));
}

TEST_F(GreedySampler, AnEmptyListIsAnErrorNotACrash) {
  lpx_candidates candidates{nullptr, 0, -1, 0, 0, 0};
  lpx_status* status = apply(candidates);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(status->message, "no candidates to pick from");
  status->release(status);
  EXPECT_EQ(candidates.selected, -1);
}

}  // namespace
}  // namespace lpx::core
