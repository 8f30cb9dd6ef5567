// Conformance with the peer (llama.cpp): tests/fixtures/greedy/*.json hold, per prompt, the
// peer's greedy tokens and its top-2 logits at each step (see docs/peers.md). Two checks:
//  - teacher-forced: feed the peer's tokens through LPX's forward pass (whole prompt in one batch,
//    then one token per step, as the peer ran) and compare the logits of the peer's top-2 tokens
//    at every step; the largest difference is printed.
//  - free-running: LPX's engine generates greedily; the tokens must equal the peer's up to the
//    first step whose recorded margin is below 1e-3 (where rounding may legitimately flip them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

#include <boost/json.hpp>

#include "engine_test_support.hpp"

namespace lpx::test {
namespace {

constexpr double kMarginFloor = 1e-3;

struct FixturePrompt {
  std::string name;
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::int32_t> generated;
  std::vector<std::int32_t> top1, top2;
  std::vector<float> top1_logit, top2_logit, margin;
};

std::vector<std::int32_t> ints(const boost::json::value& v) {
  std::vector<std::int32_t> out;
  for (const auto& x : v.as_array()) out.push_back(static_cast<std::int32_t>(x.to_number<std::int64_t>()));
  return out;
}
std::vector<float> floats(const boost::json::value& v) {
  std::vector<float> out;
  for (const auto& x : v.as_array()) out.push_back(static_cast<float>(x.to_number<double>()));
  return out;
}

std::vector<FixturePrompt> load_fixture(const std::string& file) {
  std::ifstream in(std::string(LPX_SOURCE_DIR) + "/tests/fixtures/greedy/" + file);
  std::stringstream text;
  text << in.rdbuf();
  const boost::json::value root = boost::json::parse(text.str());
  std::vector<FixturePrompt> prompts;
  for (const auto& p : root.at("prompts").as_array()) {
    FixturePrompt f;
    f.name = boost::json::value_to<std::string>(p.at("name"));
    f.prompt_ids = ints(p.at("prompt_ids"));
    f.generated = ints(p.at("generated_ids"));
    f.top1 = ints(p.at("top1_id"));
    f.top2 = ints(p.at("top2_id"));
    f.top1_logit = floats(p.at("top1_logit"));
    f.top2_logit = floats(p.at("top2_logit"));
    f.margin = floats(p.at("margin"));
    prompts.push_back(std::move(f));
  }
  return prompts;
}

struct Case {
  const char* fixture;
  std::filesystem::path (*model)();
  const char* backend;
  std::size_t max_prompts;  // the slow scalar backend checks a subset
  std::size_t max_steps;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture << " on " << c.backend; }

class GreedyFixture : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(GetParam().model())) {
      GTEST_SKIP() << GetParam().model() << " is missing (tools/setup.sh installs the default "
                   << "model; ../shared holds the tiny one)";
    }
  }
  TestHost host_;
};

TEST_P(GreedyFixture, TeacherForcedLogitsMatchThePeer) {
  const Case& c = GetParam();
  ForwardRig rig(host_, c.model(), c.backend, {}, 512);
  double max_diff = 0;
  std::size_t steps = 0;
  auto prompts = load_fixture(c.fixture);
  prompts.resize(std::min(prompts.size(), c.max_prompts));
  for (const FixturePrompt& p : prompts) {
    rig.reset();
    const std::size_t n = std::min(p.generated.size(), c.max_steps);
    const std::vector<float>* logits = &rig.feed(p.prompt_ids);
    for (std::size_t s = 0; s < n; ++s) {
      const float a = (*logits)[static_cast<std::size_t>(p.top1[s])];
      const float b = (*logits)[static_cast<std::size_t>(p.top2[s])];
      max_diff = std::max({max_diff, std::fabs(double{a} - double{p.top1_logit[s]}),
                           std::fabs(double{b} - double{p.top2_logit[s]})});
      if (double{p.margin[s]} >= kMarginFloor) {
        const auto best = static_cast<std::int32_t>(
            std::max_element(logits->begin(), logits->end()) - logits->begin());
        EXPECT_EQ(best, p.top1[s]) << p.name << " step " << s << " (peer margin " << p.margin[s]
                                   << ")";
      }
      ++steps;
      if (s + 1 < n) logits = &rig.feed({p.generated[s]});
    }
  }
  std::printf("[ %s on %s ] %zu steps; max |logit - peer logit| = %.3g\n", c.fixture, c.backend,
              steps, max_diff);
  EXPECT_LE(max_diff, 1e-4) << "logits drifted from the peer's (the kernels reproduce its arithmetic)";
}

TEST_P(GreedyFixture, GreedyTokensMatchThePeer) {
  const Case& c = GetParam();
  core::EngineConfig config;
  config.context_size = 512;
  config.max_sequences = 1;
  auto engine = host_.engine(c.model(), c.backend, {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  auto prompts = load_fixture(c.fixture);
  prompts.resize(std::min(prompts.size(), c.max_prompts));
  for (const FixturePrompt& p : prompts) {
    lpx_request request{};
    request.prompt_tokens = p.prompt_ids.data();
    request.prompt_token_count = p.prompt_ids.size();
    const std::size_t n = std::min(p.generated.size(), c.max_steps);
    request.max_tokens = static_cast<std::uint32_t>(n);
    const Generation g = generate(*engine, request);
    ASSERT_TRUE(g.error.empty()) << p.name << ": " << g.error;
    std::size_t comparable = n;
    for (std::size_t s = 0; s < n; ++s) {
      if (double{p.margin[s]} < kMarginFloor) {
        comparable = s + 1;  // this step's token may differ; nothing after it is comparable
        break;
      }
    }
    ASSERT_GE(g.tokens.size(), std::min(comparable, g.tokens.size()));
    for (std::size_t s = 0; s < comparable && s < p.generated.size(); ++s) {
      if (double{p.margin[s]} < kMarginFloor) break;
      ASSERT_LT(s, g.tokens.size()) << p.name << ": stopped early at step " << s;
      ASSERT_EQ(g.tokens[s], p.generated[s]) << p.name << ": first difference at step " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Peer, GreedyFixture,
    ::testing::Values(Case{"smollm2-135m-instruct-q4_1.json", &smollm2_path, "cpu", 100, 64},
                      Case{"llama-2-tiny-random.json", &tiny_llama_path, "cpu", 100, 64},
                      Case{"smollm2-135m-instruct-q4_1.json", &smollm2_path, "cpu-scalar", 2, 12},
                      Case{"llama-2-tiny-random.json", &tiny_llama_path, "cpu-scalar", 3, 64}),
    [](const ::testing::TestParamInfo<Case>& param_info) {
      std::string name =
          std::string(param_info.param.fixture).substr(0, 7) + "_" + param_info.param.backend;
      std::replace_if(name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
      return name;
    });

}  // namespace
}  // namespace lpx::test
