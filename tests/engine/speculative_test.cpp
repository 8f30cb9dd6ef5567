// Speculative decoding from the text itself (n-gram drafts): the model verifies each draft in
// the step that feeds it, and a token is picked from a row exactly as without drafts (the same
// chain, the same draws, one-row runs), so answers are identical to plain decoding, greedy and
// sampled with a seed alike, alone or batched with requests that draft nothing, under a
// grammar, and when a request is cancelled in the middle of a run of drafts.
#include "engine/ngram_draft.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_support.hpp"

namespace lpx::test {
namespace {

TEST(NgramDraft, ProposesWhatFollowedTheLatestEarlierMatch) {
  std::vector<std::int32_t> draft;
  // ... 1 2 3 9 9 ... 1 2 3 7 8 ... 1 2 | next 3: the latest "1 2 3" was followed by 7 8.
  const std::vector<std::int32_t> context = {5, 1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 4, 1, 2};
  core::ngram_draft(context, 3, 3, 4, draft);
  EXPECT_EQ(draft, (std::vector<std::int32_t>{7, 8, 4, 1}));
  core::ngram_draft(context, 3, 3, 2, draft);
  EXPECT_EQ(draft, (std::vector<std::int32_t>{7, 8}));
  // No 3-gram "4 1 6": the 2-gram "1 6" neither; the 1-gram "6" neither: no draft.
  core::ngram_draft(context, 6, 3, 4, draft);
  EXPECT_TRUE(draft.empty());
  // A shorter match where the longer has none: "2 5" no, "5" yes (at the start).
  core::ngram_draft(context, 5, 2, 3, draft);
  EXPECT_EQ(draft, (std::vector<std::int32_t>{1, 2, 3}));
  core::ngram_draft({}, 1, 3, 4, draft);
  EXPECT_TRUE(draft.empty());
}

// A text that repeats: drafts from it are often right.
const char* kCopy =
    "Copy this list exactly: apples, pears, plums, cherries, apples, pears, plums, cherries, "
    "apples, pears, plums, cherries, apples, pears";

class Speculative : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    model_ = std::string(GetParam()) == "smollm2" ? smollm2_path() : tiny_llama_path();
    if (!std::filesystem::exists(model_)) GTEST_SKIP() << model_ << " is missing";
  }
  std::unique_ptr<core::Engine> make(bool speculate, std::vector<std::string> chain = {"greedy"}) {
    core::EngineConfig config;
    config.context_size = 512;
    config.max_draft = speculate ? 4 : 0;
    return host_.engine(model_, "cpu", chain, config);
  }
  static lpx_request text(const char* prompt, std::uint32_t max_tokens) {
    lpx_request r{};
    r.prompt = prompt;
    r.max_tokens = max_tokens;
    return r;
  }
  static std::pair<std::uint64_t, std::uint64_t> drafts(core::Engine& engine) {
    lpx_engine_stats s{};
    s.struct_size = sizeof(s);
    engine.stats(s);
    return {s.spec_draft_tokens, s.spec_accepted_tokens};
  }
  std::filesystem::path model_;
  TestHost host_;
};

TEST_P(Speculative, GreedyAnswersAreThoseOfPlainDecoding) {
  auto fast = make(true);
  auto plain = make(false);
  for (const char* prompt : {kCopy, "The capital of France is", "1, 2, 3, 4, 5, 6,"}) {
    const Generation with = generate(*fast, text(prompt, 48));
    ASSERT_EQ(with.error, "");
    EXPECT_EQ(with.tokens, generate(*plain, text(prompt, 48)).tokens) << prompt;
    EXPECT_EQ(with.tokens.size(), 48u) << "max_tokens holds with drafts";
  }
  const auto [drafted, accepted] = drafts(*fast);
  EXPECT_GT(drafted, 0u);
  EXPECT_GT(accepted, 0u) << "repeating text should confirm some drafts";
  EXPECT_LE(accepted, drafted);
  EXPECT_EQ(drafts(*plain).first, 0u);
}

// Sampling: each row's token is drawn from the same chain with the same generator as without
// drafts, so a seed gives the same answer. (Token for token, this is stronger than comparing
// distributions: the draws are those of plain decoding.)
TEST_P(Speculative, SampledAnswersWithASeedAreThoseOfPlainDecoding) {
  const std::vector<std::string> chain = {"top-k", "top-p", "temperature", "dist"};
  auto fast = make(true, chain);
  auto plain = make(false, chain);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    lpx_sampling_overrides s{};
    s.struct_size = sizeof(s);
    s.set = LPX_SET_SEED | LPX_SET_TEMPERATURE;
    s.seed = seed;
    s.temperature = 0.7;
    lpx_request r = text(kCopy, 40);
    r.sampling = &s;
    EXPECT_EQ(generate(*fast, r).tokens, generate(*plain, r).tokens) << seed;
  }
  EXPECT_GT(drafts(*fast).first, 0u) << "rows were verified";
  // The random tiny model samples noise, which no draft foresees; SmolLM2 copies.
  if (std::string(GetParam()) == "smollm2") {
    EXPECT_GT(drafts(*fast).second, 0u);
  }
}

// Requests that draft and requests that do not, in the same steps.
TEST_P(Speculative, BatchedWithOtherRequestsEveryAnswerStaysTheSame) {
  auto fast = make(true);
  auto plain = make(false);
  const char* prompts[] = {kCopy, "Once upon a time", "1, 2, 3, 4, 5, 6,", "The sky is"};
  std::vector<Generation> together(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { together[i] = generate(*fast, text(prompts[i], 32)); });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(together[i].tokens, generate(*plain, text(prompts[i], 32)).tokens) << i;
}

// Under a grammar, a draft the grammar refuses is never confirmed: the answer is the grammar's.
TEST_P(Speculative, AGrammarHoldsTheDraftsToo) {
  auto fast = make(true);
  auto plain = make(false);
  lpx_sampling_overrides s{};
  s.struct_size = sizeof(s);
  s.set = LPX_SET_GRAMMAR;
  const std::string grammar = R"(root ::= (" apples," | " pears," | " plums,"){3,12})";
  s.grammar = grammar.c_str();
  s.grammar_kind = LPX_GRAMMAR_GBNF;
  lpx_request r = text(kCopy, 40);
  r.sampling = &s;
  const Generation with = generate(*fast, r);
  ASSERT_EQ(with.error, "");
  EXPECT_EQ(with.tokens, generate(*plain, r).tokens);
  EXPECT_EQ(with.text.find("cherries"), std::string::npos) << with.text;
}

// Cancelled from on_token in the middle of a run of confirmed drafts: the request ends at once
// (no token after the cancelling one is delivered) and gives back every block.
TEST_P(Speculative, CancellingInARunOfDraftsStopsThereAndLeaksNothing) {
  auto fast = make(true);
  struct Seen {
    std::vector<std::int32_t> tokens;
  } seen;
  lpx_request r = text(kCopy, 64);
  r.struct_size = sizeof(r);
  r.user = &seen;
  r.on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
    auto& s = *static_cast<Seen*>(user);
    if (e->token >= 0) s.tokens.push_back(e->token);
    return s.tokens.size() >= 10 ? 1 : 0;
  };
  r.on_done = [](void*, const lpx_request_result*) {};
  auto id = fast->submit(r);
  ASSERT_TRUE(id.has_value());
  fast->wait(*id);
  EXPECT_EQ(seen.tokens.size(), 10u);
  lpx_engine_stats s{};
  s.struct_size = sizeof(s);
  fast->stats(s);
  EXPECT_EQ(s.running_requests, 0u);
  EXPECT_EQ(s.kv_blocks_used, 0u) << "its blocks are free or idle in the prefix cache";
}

INSTANTIATE_TEST_SUITE_P(Models, Speculative, ::testing::Values("tiny_llama", "smollm2"),
                         [](const auto& param_info) { return std::string(param_info.param); });

}  // namespace
}  // namespace lpx::test
