// Sampler chains as sampling programs (ABI 1.5): a chain of standard links describes itself as
// one program, and the program, run by the reference (the ground truth of device samplers),
// picks exactly the tokens the chain's own sample() picks, draw for draw, over many steps and
// seeds. Chains that are not programs (penalties, logit bias, a selecting link mid-chain) say
// so, so the engine samples them on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "engine/sampler_chain.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"
#include "reference/sampling_program.hpp"

namespace lpx::core {
namespace {

using Link = std::pair<std::string, std::map<std::string, OptionValue>>;

class SamplingPrograms : public ::testing::Test {
 protected:
  std::vector<std::shared_ptr<PluginInstance>> links(const std::vector<Link>& chain) {
    std::vector<std::shared_ptr<PluginInstance>> out;
    for (const auto& [name, options] : chain) out.push_back(test::create_builtin(services, name, options));
    return out;
  }

  // Steps of random logits (peaked, with ties): the chain's sample() and its program must
  // agree on every token. Returns how many distinct tokens were picked.
  std::size_t expect_program_matches_chain(const std::vector<Link>& chain, std::uint64_t seed) {
    constexpr std::uint32_t kVocab = 600;
    SamplerChain sampled(links(chain), seed, kVocab, {});
    SamplerChain programmed(links(chain), seed, kVocab, {});
    EXPECT_TRUE(programmed.has_program());
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    std::normal_distribution<float> normal(0, 2.5f);
    std::vector<float> logits(kVocab);
    std::vector<lpx_token_candidate> scratch(kVocab);
    std::set<std::int32_t> distinct;
    for (int step = 0; step < 200; ++step) {
      for (float& l : logits) l = normal(rng);
      for (std::size_t i = 0; i < 40; ++i) logits[i * 15] = std::round(logits[i * 15]);  // ties
      lpx_sampling_program program{};
      programmed.next_program(program);
      EXPECT_EQ(reference::check_sampling_program(program), "");
      const std::int32_t expected = sampled.sample(logits.data());
      EXPECT_EQ(reference::run_sampling_program(program, logits.data(), kVocab, scratch.data()),
                expected)
          << "step " << step;
      sampled.accept(expected);
      programmed.accept(expected);
      distinct.insert(expected);
    }
    return distinct.size();
  }

  MetricsRegistry metrics;
  HostServices services{metrics};
};

TEST_F(SamplingPrograms, GreedyIsAOneOperationProgram) {
  SamplerChain chain(links({{"greedy", {}}}), 1, 10, {});
  ASSERT_TRUE(chain.has_program());
  EXPECT_TRUE(chain.is_plain_greedy());
  lpx_sampling_program program{};
  chain.next_program(program);
  ASSERT_EQ(program.n_ops, 1u);
  EXPECT_EQ(program.ops[0].kind, static_cast<std::uint32_t>(LPX_SAMPLING_GREEDY));
  expect_program_matches_chain({{"greedy", {}}}, 3);
}

TEST_F(SamplingPrograms, TheServersChainPicksWhatItsPluginsPick) {
  // What an HTTP request with temperature and top_p builds (sampler_chain_factory.cpp).
  const std::vector<Link> chain = {{"top-p", {{"p", 0.9}}},
                                   {"temperature", {{"temperature", 0.7}}},
                                   {"dist", {}}};
  for (std::uint64_t seed : {1u, 2u, 77u}) {
    EXPECT_GT(expect_program_matches_chain(chain, seed), 20u) << "the chain should sample";
  }
}

TEST_F(SamplingPrograms, EveryStandardLinkPicksWhatItsPluginPicks) {
  const std::vector<std::vector<Link>> chains = {
      {{"temperature", {{"temperature", 1.3}}}, {"dist", {}}},
      {{"temperature", {{"temperature", 0.0}}}, {"dist", {}}},
      {{"top-k", {{"k", std::int64_t{40}}}},
       {"top-p", {{"p", 0.95}}},
       {"min-p", {{"p", 0.05}}},
       {"temperature", {{"temperature", 0.8}}},
       {"dist", {}}},
      {{"top-k", {{"k", std::int64_t{5000}}}}, {"dist", {}}},
      {{"top-p", {{"p", 0.3}, {"min_keep", std::int64_t{4}}}}, {"dist", {}}},
      {{"min-p", {{"p", 0.5}, {"min_keep", std::int64_t{2}}}}, {"greedy", {}}},
      {{"top-k", {{"k", std::int64_t{1}}}}, {"dist", {}}},
  };
  for (const auto& chain : chains) expect_program_matches_chain(chain, 5);
}

TEST_F(SamplingPrograms, ChainsThatAreNotProgramsSaySo) {
  // Penalties depend on the sequence's history: no standard operation.
  EXPECT_FALSE(SamplerChain(links({{"penalties", {{"repeat", 1.1}}}, {"greedy", {}}}), 1, 10, {})
                   .has_program());
  // A logit bias is applied before the links.
  EXPECT_FALSE(SamplerChain(links({{"greedy", {}}}), 1, 10, {{3, 1.0f}}).has_program());
  EXPECT_FALSE(SamplerChain(links({{"greedy", {}}}), 1, 10, {{3, 1.0f}}).is_plain_greedy());
  // Only the last link may select.
  EXPECT_FALSE(SamplerChain(links({{"dist", {}}, {"greedy", {}}}), 1, 10, {}).has_program());
  // No selecting link at all.
  EXPECT_FALSE(SamplerChain(links({{"top-k", {}}}), 1, 10, {}).has_program());
}

}  // namespace
}  // namespace lpx::core
