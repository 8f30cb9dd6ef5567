// Prefix caching in a real engine: a request whose prompt shares a prefix with one computed
// before maps those blocks (cached_tokens reports them) and answers exactly as it does with the
// cache off, greedy token for token; so do requests that share a prefix while they run
// together, prompts that end in the middle of a block, and sessions. When the pool is short,
// idle cached blocks are evicted rather than refusing requests.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_support.hpp"

namespace lpx::test {
namespace {

// About 150 tokens of a shared system-like preamble, then a question.
std::string preamble() {
  std::string text = "You are a careful assistant for a library. Rules:\n";
  for (int i = 1; i <= 12; ++i) {
    text.append(std::to_string(i)).append(". Answer briefly and cite the shelf number of book ");
    text.append(std::to_string(i * 7)).append(".\n");
  }
  return text;
}

lpx_request text(const std::string& prompt, std::uint32_t max_tokens) {
  lpx_request r{};
  r.prompt = prompt.c_str();
  r.max_tokens = max_tokens;
  return r;
}

class PrefixCacheEngine : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    model_ = std::string(GetParam()) == "smollm2" ? smollm2_path() : tiny_llama_path();
    if (!std::filesystem::exists(model_)) GTEST_SKIP() << model_ << " is missing";
  }
  std::unique_ptr<core::Engine> make(bool prefix_cache, std::uint32_t kv_tokens = 1024) {
    core::EngineConfig config;
    config.context_size = 256;
    config.kv_cache_tokens = kv_tokens;
    config.prefix_cache = prefix_cache;
    return host_.engine(model_, "cpu", {"greedy"}, config);
  }
  std::filesystem::path model_;
  TestHost host_;
};

TEST_P(PrefixCacheEngine, ACachedPrefixGivesTheSameGreedyAnswer) {
  auto cached = make(true);
  auto plain = make(false);
  const std::string shared = preamble();
  const std::string questions[] = {"Where is the atlas?", "Who wrote the oldest book here?",
                                   "Where is the atlas?"};
  bool first = true;
  for (const std::string& q : questions) {
    std::string prompt = shared;
    prompt.append(q);
    const Generation with = generate(*cached, text(prompt, 12));
    const Generation without = generate(*plain, text(prompt, 12));
    ASSERT_EQ(with.error, "");
    EXPECT_EQ(with.tokens, without.tokens) << q;
    EXPECT_EQ(without.cached_tokens, 0u);
    if (first) {
      EXPECT_EQ(with.cached_tokens, 0u) << "nothing was cached yet";
    } else {
      EXPECT_GE(with.cached_tokens, 128u) << q;
      EXPECT_LT(with.cached_tokens, with.prompt_tokens) << "the last prompt token is computed";
      EXPECT_EQ(with.cached_tokens % 16, 0u) << "whole blocks";
    }
    first = false;
  }
}

// A prompt one token past a block boundary: a run of one row would attend in another
// summation order than the rows of a prefill, so the cache leaves a block more to compute
// (17 rows) and the answer is the whole prompt's.
TEST_P(PrefixCacheEngine, APromptOneTokenPastABlockLeavesMoreThanOneRowToCompute) {
  auto cached = make(true);
  auto plain = make(false);
  core::Tokenizer::EncodeOptions options;
  options.add_eos = false;
  auto tokens = cached->tokenizer().encode(preamble(), options);
  ASSERT_TRUE(tokens.has_value());
  ASSERT_GE(tokens->size(), 65u);
  tokens->resize(65);  // four blocks of 16 and one token
  lpx_request r{};
  r.prompt_tokens = tokens->data();
  r.prompt_token_count = tokens->size();
  r.max_tokens = 12;
  generate(*cached, r);
  const Generation with = generate(*cached, r);
  EXPECT_EQ(with.cached_tokens, 48u);
  EXPECT_EQ(with.tokens, generate(*plain, r).tokens);
}

// Requests that share a prefix while they run together, and prompts that end mid-block.
TEST_P(PrefixCacheEngine, SharingWhileRunningTogetherChangesNoAnswer) {
  auto cached = make(true);
  auto plain = make(false);
  const std::string shared = preamble();
  std::vector<std::string> prompts;
  for (std::size_t i = 0; i < 4; ++i) {
    std::string prompt = shared;
    prompt.append(i * 3 + 1, 'x').append("?");  // ends in different places of a block
    prompts.push_back(prompt);
  }
  generate(*cached, text(prompts[0], 2));  // the prefix is cached before the others run
  std::vector<Generation> together(prompts.size()), alone(prompts.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    threads.emplace_back([&, i] { together[i] = generate(*cached, text(prompts[i], 10)); });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    alone[i] = generate(*plain, text(prompts[i], 10));
    EXPECT_EQ(together[i].tokens, alone[i].tokens) << i;
    EXPECT_GT(together[i].cached_tokens, 0u) << i;
  }
}

// A pool that holds one long request at a time: cached blocks nobody uses are evicted for the
// next request instead of refusing it, and answers stay the same.
TEST_P(PrefixCacheEngine, AFullPoolEvictsIdleCachedBlocks) {
  auto cached = make(true, 256);
  auto plain = make(false, 256);
  for (int i = 0; i < 3; ++i) {
    std::string prompt = std::to_string(i);
    prompt.append(preamble());
    const Generation with = generate(*cached, text(prompt, 8));
    ASSERT_EQ(with.error, "") << i;
    EXPECT_EQ(with.tokens, generate(*plain, text(prompt, 8)).tokens) << i;
  }
  lpx_engine_stats stats{};
  stats.struct_size = sizeof(stats);
  cached->stats(stats);
  EXPECT_GT(stats.prefix_cache_evictions, 0u);
  EXPECT_GT(stats.prefix_cache_misses, 0u);
  EXPECT_LE(stats.prefix_cache_blocks, stats.kv_blocks_total);
}

INSTANTIATE_TEST_SUITE_P(Models, PrefixCacheEngine, ::testing::Values("tiny_llama", "smollm2"),
                         [](const auto& param_info) { return std::string(param_info.param); });

}  // namespace
}  // namespace lpx::test
