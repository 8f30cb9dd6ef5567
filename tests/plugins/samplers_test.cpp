// The built-in sampler plugins, loaded as the host loads them, against independently computed
// expectations.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"

namespace lpx::core {
namespace {

using Candidates = std::vector<lpx_token_candidate>;

// One sampler plugin with options, plus one sequence state.
class Sampler {
 public:
  Sampler(HostServices& services, const std::string& name,
          const std::map<std::string, OptionValue>& options = {}, std::uint64_t seed = 1) {
    instance_ = test::create_builtin(services, name, options);
    api_ = &instance_->api<lpx_sampler_api>();
    if (api_->state_create != nullptr) {
      if (lpx_status* s = api_->state_create(instance_->raw(), seed, &state_)) {
        throw std::runtime_error(take_status_message(s));
      }
    }
  }
  ~Sampler() {
    if (state_ != nullptr) api_->state_destroy(state_);
  }
  // Applies the sampler; returns the candidates left (and `selected` through `out`).
  Candidates apply(Candidates data, std::int64_t* selected = nullptr, bool sorted = false) {
    lpx_candidates c{data.data(), data.size(), -1, sorted ? 1 : 0, 0, 0};
    if (lpx_status* s = api_->apply(instance_->raw(), state_, &c)) {
      throw std::runtime_error(take_status_message(s));
    }
    if (selected != nullptr) *selected = c.selected;
    data.resize(c.size);
    return data;
  }
  void accept(std::int32_t token) {
    if (api_->accept != nullptr) api_->accept(instance_->raw(), state_, token);
  }

 private:
  std::shared_ptr<PluginInstance> instance_;
  const lpx_sampler_api* api_ = nullptr;
  lpx_sampler_state* state_ = nullptr;
};

Candidates from_logits(const std::vector<float>& logits) {
  Candidates c;
  for (std::size_t i = 0; i < logits.size(); ++i) c.push_back({static_cast<std::int32_t>(i), logits[i], 0});
  return c;
}

// Logits whose softmax is exactly `probabilities`.
Candidates from_probabilities(const std::vector<double>& probabilities) {
  std::vector<float> logits;
  for (double p : probabilities) logits.push_back(static_cast<float>(std::log(p)));
  return from_logits(logits);
}

std::vector<std::int32_t> ids(const Candidates& c) {
  std::vector<std::int32_t> out;
  for (const auto& t : c) out.push_back(t.id);
  return out;
}

class Samplers : public ::testing::Test {
 protected:
  MetricsRegistry metrics;
  HostServices services{metrics};
};

TEST_F(Samplers, TemperatureScalesLogitsAndZeroIsGreedy) {
  Sampler half(services, "temperature", {{"temperature", 0.5}});
  Candidates out = half.apply(from_logits({1.0f, -2.0f, 0.25f}));
  EXPECT_FLOAT_EQ(out[0].logit, 2.0f);
  EXPECT_FLOAT_EQ(out[1].logit, -4.0f);
  EXPECT_FLOAT_EQ(out[2].logit, 0.5f);
  Sampler zero(services, "temperature", {{"temperature", 0.0}});
  EXPECT_EQ(ids(zero.apply(from_logits({1.0f, 3.0f, 2.0f}))), std::vector<std::int32_t>{1});
}

TEST_F(Samplers, TopKKeepsTheKBestInOrder) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 2);
  std::vector<float> logits(1000);
  for (float& l : logits) l = normal(rng);
  std::vector<std::int32_t> expected(logits.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<std::int32_t>(i);
  std::sort(expected.begin(), expected.end(), [&](auto a, auto b) { return logits[a] > logits[b]; });
  expected.resize(5);
  Sampler top5(services, "top-k", {{"k", std::int64_t{5}}});
  EXPECT_EQ(ids(top5.apply(from_logits(logits))), expected);
  Sampler off(services, "top-k", {{"k", std::int64_t{0}}});
  EXPECT_EQ(off.apply(from_logits(logits)).size(), 1000u);
}

TEST_F(Samplers, TopPKeepsTheSmallestSetReachingP) {
  const Candidates c = from_probabilities({0.2, 0.5, 0.3});
  EXPECT_EQ(ids(Sampler(services, "top-p", {{"p", 0.75}}).apply(c)), (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(ids(Sampler(services, "top-p", {{"p", 0.9}}).apply(c)), (std::vector<std::int32_t>{1, 2, 0}));
  EXPECT_EQ(ids(Sampler(services, "top-p", {{"p", 0.1}}).apply(c)), (std::vector<std::int32_t>{1}));
  EXPECT_EQ(Sampler(services, "top-p", {{"p", 0.1}, {"min_keep", std::int64_t{3}}}).apply(c).size(), 3u);
}

TEST_F(Samplers, MinPKeepsTokensNearTheBest) {
  const Candidates c = from_probabilities({0.02, 0.5, 0.3, 0.18});
  // 0.05 * 0.5 = 0.025: everything but the 0.02 token stays.
  EXPECT_EQ(ids(Sampler(services, "min-p", {{"p", 0.05}}).apply(c)), (std::vector<std::int32_t>{1, 2, 3}));
  // 0.5 * 0.5 = 0.25: the two best stay.
  EXPECT_EQ(ids(Sampler(services, "min-p", {{"p", 0.5}}).apply(c)), (std::vector<std::int32_t>{1, 2}));
}

TEST_F(Samplers, PenaltiesFollowTheHistoryWindow) {
  Sampler penalties(services, "penalties",
                    {{"last_n", std::int64_t{3}}, {"repeat", 2.0}, {"frequency", 0.5}, {"presence", 1.0}});
  for (std::int32_t t : {9, 5, 5, 7}) penalties.accept(t);  // window of 3 keeps 5, 5, 7
  Candidates out = penalties.apply(from_logits({0, 0, 0, 0, 0, 4.0f, 0, -1.0f, 0, 3.0f}));
  EXPECT_FLOAT_EQ(out[5].logit, 4.0f / 2 - (2 * 0.5f + 1));  // positive: divided, twice seen
  EXPECT_FLOAT_EQ(out[7].logit, -1.0f * 2 - (1 * 0.5f + 1));  // negative: multiplied, once seen
  EXPECT_FLOAT_EQ(out[9].logit, 3.0f) << "slid out of the window";
}

TEST_F(Samplers, PenaltiesCountTokensAcceptedBeforeTheFirstStepAndAcrossGrowth) {
  Sampler penalties(services, "penalties", {{"last_n", std::int64_t{2}}, {"presence", 1.0}});
  penalties.accept(3);  // e.g. the prompt, before any candidates were seen
  Candidates out = penalties.apply(from_logits({0, 0, 0, 0, 0}));
  EXPECT_FLOAT_EQ(out[3].logit, -1.0f);
  penalties.accept(8);  // beyond the ids seen so far; slides 3 out of the window later
  penalties.accept(1);
  out = penalties.apply(from_logits({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_FLOAT_EQ(out[3].logit, 0.0f) << "3 left the window";
  EXPECT_FLOAT_EQ(out[8].logit, -1.0f);
  EXPECT_FLOAT_EQ(out[1].logit, -1.0f);
  penalties.accept(2);  // 8 slides out: its count must drop, not wrap around
  out = penalties.apply(from_logits({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_FLOAT_EQ(out[8].logit, 0.0f);
  EXPECT_FLOAT_EQ(out[2].logit, -1.0f);
}

TEST_F(Samplers, DistIsSeededAndProportional) {
  const Candidates c = from_probabilities({0.7, 0.2, 0.1});
  auto draws = [&](std::uint64_t seed, int n) {
    Sampler dist(services, "dist", {}, seed);
    std::vector<std::int64_t> out;
    for (int i = 0; i < n; ++i) {
      std::int64_t selected = -1;
      Candidates left = dist.apply(c, &selected);
      out.push_back(left.at(static_cast<std::size_t>(selected)).id);
    }
    return out;
  };
  EXPECT_EQ(draws(42, 50), draws(42, 50)) << "same seed, same choices";
  EXPECT_NE(draws(42, 50), draws(43, 50));
  const auto many = draws(1, 20000);
  std::map<std::int64_t, int> counts;
  for (auto id : many) ++counts[id];
  EXPECT_NEAR(counts[0] / 20000.0, 0.7, 0.02);
  EXPECT_NEAR(counts[1] / 20000.0, 0.2, 0.02);
  EXPECT_NEAR(counts[2] / 20000.0, 0.1, 0.02);
}

TEST_F(Samplers, AChainFiltersThenChooses) {
  Sampler top1(services, "top-k", {{"k", std::int64_t{1}}});
  Sampler dist(services, "dist", {}, 5);
  Candidates left = top1.apply(from_logits({0.1f, 2.0f, 1.9f}));
  std::int64_t selected = -1;
  left = dist.apply(left, &selected, /*sorted=*/true);
  ASSERT_EQ(selected, 0);
  EXPECT_EQ(left[0].id, 1);
}

TEST_F(Samplers, LogitBiasShiftsOnlyTheListedTokensAndBansByDefault) {
  const Candidates c = {{0, 1.0f, 0}, {1, 2.0f, 0}, {2, 3.0f, 0}, {3, 0.5f, 0}};
  Sampler boost(services, "logit-bias",
                {{"tokens", std::vector<std::int64_t>{0, 3, 99}}, {"bias", 2.5}});
  const Candidates boosted = boost.apply(c, nullptr, true);
  ASSERT_EQ(boosted.size(), 4u);
  EXPECT_FLOAT_EQ(boosted[0].logit, 3.5f);
  EXPECT_FLOAT_EQ(boosted[1].logit, 2.0f);
  EXPECT_FLOAT_EQ(boosted[2].logit, 3.0f);
  EXPECT_FLOAT_EQ(boosted[3].logit, 3.0f);

  Sampler ban(services, "logit-bias", {{"tokens", std::vector<std::int64_t>{2}}});  // default: ban
  std::int64_t selected = 0;
  const Candidates banned = ban.apply(c, &selected);
  EXPECT_LT(banned[2].logit, -1e29f);
  Sampler greedy(services, "greedy");
  EXPECT_EQ(greedy.apply(banned, &selected)[static_cast<std::size_t>(selected)].id, 1);
}

}  // namespace
}  // namespace lpx::core
