// Speculative decoding, drafts from the text itself (n-gram) or from a draft model: the model
// verifies each draft in the step that feeds it, and a token is picked from a row exactly as
// without drafts (the same chain, the same draws, one-row runs), so answers are identical to
// plain decoding, greedy and sampled with a seed alike, alone or batched with requests that
// draft nothing, under a grammar, and when a request is cancelled in the middle of a run of
// drafts. The draft model here is the default model drafting for itself: it must then guess
// every greedy token right.
#include "engine/ngram_draft.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
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
  // The drafted run may reach the end of the text: "2 3" last seen before "7 8 4 1 2 3".
  core::ngram_draft(context, 3, 2, 8, draft);
  EXPECT_EQ(draft, (std::vector<std::int32_t>{7, 8, 4, 1, 2, 3}));
  // Only the full length counts: "2 5" never occurred, so no draft, though "5" did.
  core::ngram_draft(context, 5, 2, 3, draft);
  EXPECT_TRUE(draft.empty());
  core::ngram_draft(context, 5, 1, 3, draft);
  EXPECT_EQ(draft, (std::vector<std::int32_t>{1, 2, 3}));
  // A text no longer than the n-gram has nothing earlier to match.
  core::ngram_draft({1, 2}, 1, 3, 4, draft);
  EXPECT_TRUE(draft.empty());
  core::ngram_draft({}, 1, 3, 4, draft);
  EXPECT_TRUE(draft.empty());
}

// A text that repeats: drafts from it are often right.
const char* kCopy =
    "Copy this list exactly: apples, pears, plums, cherries, apples, pears, plums, cherries, "
    "apples, pears, plums, cherries, apples, pears";

// Engines on the default model, with drafts from `mode_`: "ngram", or "draft" (the model
// drafting for itself).
class SpeculativeFixture : public ::testing::Test {
 protected:
  explicit SpeculativeFixture(std::string mode) : mode_(std::move(mode)) {}
  void SetUp() override {
    model_ = smollm2_path();
    if (!std::filesystem::exists(model_)) GTEST_SKIP() << model_ << " is missing";
  }
  bool draft_model() const { return mode_ == "draft"; }
  std::unique_ptr<core::Engine> make(bool speculate, std::vector<std::string> chain = {"greedy"},
                                     core::EngineConfig config = {}) {
    if (config.context_size == 0) config.context_size = 512;
    config.max_draft = speculate ? 4 : 0;
    const bool drafted = speculate && draft_model();
    return host_.engine(model_, "cpu", chain, config, {}, {}, drafted ? model_ : std::filesystem::path());
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
  std::string mode_;
  std::filesystem::path model_;
  TestHost host_;
};

// Each test for both kinds of draft.
class Speculative : public SpeculativeFixture, public ::testing::WithParamInterface<const char*> {
 protected:
  Speculative() : SpeculativeFixture(GetParam()) {}
};
class NgramSpeculative : public SpeculativeFixture {
 protected:
  NgramSpeculative() : SpeculativeFixture("ngram") {}
};
class DraftModelSpeculative : public SpeculativeFixture {
 protected:
  DraftModelSpeculative() : SpeculativeFixture("draft") {}
};

TEST_P(Speculative, GreedyAnswersAreThoseOfPlainDecoding) {
  auto fast = make(true);
  auto plain = make(false);
  for (const char* prompt : {kCopy, "The capital of France is", "1, 2, 3, 4, 5, 6,"}) {
    const Generation with = generate(*fast, text(prompt, 48));
    ASSERT_EQ(with.error, "");
    EXPECT_EQ(with.tokens, generate(*plain, text(prompt, 48)).tokens) << prompt;
    // max_tokens holds with drafts: 48 tokens, or fewer where the model ended its answer.
    EXPECT_TRUE(with.tokens.size() == 48u || (with.tokens.size() < 48u && with.finish_reason == LPX_FINISH_EOG))
        << with.tokens.size() << " tokens, finish " << with.finish_reason;
  }
  const auto [drafted, accepted] = drafts(*fast);
  EXPECT_GT(drafted, 0u);
  EXPECT_GT(accepted, 0u) << "repeating text should confirm some drafts";
  EXPECT_LE(accepted, drafted);
  if (draft_model()) {
    // It computes its cache as the model does (prefill runs, then a row at a time), so its
    // greedy guesses are the model's greedy picks; and no draft runs past the end of an answer
    // (an answer here ends early, where the guesses after its end were once counted as missed).
    EXPECT_EQ(accepted, drafted) << "a model drafting for itself guesses every greedy token";
  }
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
  const auto [drafted, accepted] = drafts(*fast);
  EXPECT_GT(drafted, 0u) << "rows were verified";
  EXPECT_GT(accepted, 0u);
  // Greedy guesses against sampled picks: some are refused, and the answers still hold.
  if (draft_model()) {
    EXPECT_LT(accepted, drafted);
  }
}

// Upper tail of the chi-square distribution with `df` degrees of freedom at `x`: the
// regularized gamma Q(df/2, x/2), by its series or its continued fraction.
double chi_square_tail(double x, double df) {
  const double a = df / 2, z = x / 2;
  if (z <= 0) return 1;
  const double log_front = a * std::log(z) - z - std::lgamma(a);
  if (z < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 500; ++n) sum += term *= z / (a + n);
    return 1 - sum * std::exp(log_front);
  }
  double b = z + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 500; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = 1 / (an * d + b);
    c = b + an / c;
    h *= d * c;
  }
  return h * std::exp(log_front);
}

// The statistical check of the acceptance rule: the token a step takes from a draft row (the
// third token, after two the model may confirm from drafts) is distributed as the model's own
// distribution at that point, by a chi-square test over many seeds against the log-softmax
// the engine reports for that context without drafts. (Drafts from a draft model go through
// the same verification; the seeded test above shows their draws are plain decoding's.)
TEST_F(NgramSpeculative, DraftedRowsSampleTheModelsDistribution) {
  auto fast = make(true, {"dist"});
  core::Tokenizer::EncodeOptions options;
  options.add_eos = false;
  // Digits that repeat: drafts propose the repeat, which the model, sampling at temperature 1,
  // follows often but not always.
  const auto prompt = fast->tokenizer().encode("Random digits: 4, 7, 1, 9, 3, 8, 4, 7, 1, 9, 3, 8, 4, 7,", options);
  ASSERT_TRUE(prompt.has_value());
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::int32_t>> thirds;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (std::uint64_t lane = 0; lane < 4; ++lane) {  // four requests decode together
    threads.emplace_back([&, lane] {
      for (std::uint64_t seed = lane; seed < 240; seed += 4) {
        lpx_sampling_overrides s{};
        s.struct_size = sizeof(s);
        s.set = LPX_SET_SEED;
        s.seed = seed;
        lpx_request r{};
        r.prompt_tokens = prompt->data();
        r.prompt_token_count = prompt->size();
        r.max_tokens = 3;
        r.sampling = &s;
        const Generation g = generate(*fast, r);
        if (g.tokens.size() < 3) continue;  // the answer ended before (end of generation)
        std::lock_guard lock(mutex);
        thirds[{g.tokens[0], g.tokens[1]}].push_back(g.tokens[2]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_GT(drafts(*fast).second, 0u) << "drafts were confirmed";
  const auto& [start, observed] = *std::max_element(
      thirds.begin(), thirds.end(), [](const auto& x, const auto& y) { return x.second.size() < y.second.size(); });
  ASSERT_GE(observed.size(), 60u);
  // The model's distribution after the most frequent start, without drafts.
  std::vector<std::int32_t> context = *prompt;
  context.push_back(start.first);
  context.push_back(start.second);
  auto plain = make(false, {"greedy"});
  struct Top {
    std::vector<lpx_token_logprob> entries;
  } top;
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt_tokens = context.data();
  r.prompt_token_count = context.size();
  r.max_tokens = 1;
  r.logprobs = 1;
  r.top_logprobs = LPX_MAX_TOP_LOGPROBS;
  r.user = &top;
  r.on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
    auto& t = *static_cast<Top*>(user);
    if (e->token >= 0 && t.entries.empty()) t.entries.assign(e->top, e->top + e->top_count);
    return 0;
  };
  r.on_done = [](void*, const lpx_request_result*) {};
  auto id = plain->submit(r);
  ASSERT_TRUE(id.has_value());
  plain->wait(*id);
  ASSERT_FALSE(top.entries.empty());
  // Categories: the likely tokens (expected count at least 5), and the rest together.
  const double n = static_cast<double>(observed.size());
  double chi2 = 0, rest_p = 1;
  std::size_t categories = 0, counted = 0;
  for (const lpx_token_logprob& t : top.entries) {
    const double p = std::exp(static_cast<double>(t.logprob));
    if (n * p < 5) continue;
    const auto k = static_cast<double>(std::count(observed.begin(), observed.end(), t.token));
    chi2 += (k - n * p) * (k - n * p) / (n * p);
    rest_p -= p;
    counted += static_cast<std::size_t>(k);
    ++categories;
  }
  const double rest = n - static_cast<double>(counted);
  if (n * rest_p >= 1) {
    chi2 += (rest - n * rest_p) * (rest - n * rest_p) / (n * rest_p);
    ++categories;
  } else {
    EXPECT_LE(rest, 3) << "tokens the model gives almost no chance were drawn";
  }
  ASSERT_GE(categories, 2u) << "the model is too sure here for a test of its distribution";
  const double p_value = chi_square_tail(chi2, static_cast<double>(categories - 1));
  std::printf("[ chi-square ] %.2f over %zu categories, %.0f draws of the third token, p = %.3f\n", chi2, categories, n, p_value);
  EXPECT_GT(p_value, 1e-3) << "chi2 " << chi2 << " over " << categories << " categories, " << n << " draws";
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
  EXPECT_GT(s.spec_accepted_tokens, 0u) << "the ten tokens came in runs of confirmed drafts";
}

// The draft model's own cache: each request takes blocks as it grows and gives them all back
// when it ends, finished or cancelled. A pool that holds one request at a time would be empty
// for the next one (which would then draft nothing) if any were kept.
TEST_F(DraftModelSpeculative, TheDraftCacheIsGivenBackByEveryRequest) {
  core::EngineConfig config;
  config.context_size = 128;
  config.kv_cache_tokens = 128;  // the draft model's pool too
  auto fast = make(true, {"greedy"}, config);
  std::uint64_t before = 0;
  for (int i = 0; i < 4; ++i) {
    struct Count {
      int tokens = 0;
      bool stop_early;
    } count{0, i % 2 == 1};
    lpx_request r = text(kCopy, 60);
    r.struct_size = sizeof(r);
    r.user = &count;
    r.on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
      auto& c = *static_cast<Count*>(user);
      if (e->token >= 0) ++c.tokens;
      return c.stop_early && c.tokens >= 9 ? 1 : 0;  // cancelled in a run of drafts
    };
    r.on_done = [](void*, const lpx_request_result*) {};
    auto id = fast->submit(r);
    ASSERT_TRUE(id.has_value());
    fast->wait(*id);
    const std::uint64_t drafted = drafts(*fast).first;
    EXPECT_GT(drafted, before) << "request " << i << " drafted nothing: the draft cache was not given back";
    before = drafted;
  }
}

// p_min: a draft stops at a guess the draft model is unsure of. The answers stay the same;
// fewer tokens are drafted.
TEST_F(DraftModelSpeculative, PMinStopsDraftsAtUnsureGuesses) {
  core::EngineConfig sure;
  sure.draft_p_min = 0.99f;
  auto careful = make(true, {"greedy"}, sure);
  core::EngineConfig unsure;
  unsure.draft_p_min = 0;  // every guess drafted
  auto eager = make(true, {"greedy"}, unsure);
  auto plain = make(false);
  for (const char* prompt : {kCopy, "Once upon a time"}) {
    const Generation g = generate(*careful, text(prompt, 32));
    EXPECT_EQ(g.tokens, generate(*plain, text(prompt, 32)).tokens) << prompt;
    generate(*eager, text(prompt, 32));
  }
  EXPECT_LT(drafts(*careful).first, drafts(*eager).first);
  EXPECT_GT(drafts(*careful).first, 0u) << "the copied list has sure guesses";
}

// The engine build_engine makes of `model` (and `draft`, when not empty) on the cpu backend,
// greedy, speculating: or why it refuses.
core::Expected<std::unique_ptr<core::Engine>> speculating_engine(TestHost& host, const std::filesystem::path& model,
                                                                 const std::filesystem::path& draft) {
  core::EngineInputs inputs;
  auto file = core::ModelFile::open(model.string(), host.registry());
  if (!file) return core::unexpected(file.error());
  inputs.file = std::move(*file);
  if (!draft.empty()) {
    auto draft_file = core::ModelFile::open(draft.string(), host.registry());
    if (!draft_file) return core::unexpected(draft_file.error());
    inputs.draft_file = std::move(*draft_file);
  }
  auto backend = core::default_instance(host.registry(), "cpu", {});
  if (!backend) return core::unexpected(backend.error());
  inputs.backend = backend->instance;
  auto greedy = core::default_instance(host.registry(), "greedy");
  if (!greedy) return core::unexpected(greedy.error());
  inputs.sampler_chain.push_back(std::move(*greedy));
  inputs.config.context_size = 256;
  inputs.config.max_draft = 4;
  return core::build_engine(std::move(inputs), host.registry());
}

// A draft model must mean the same text by every id: another vocabulary is refused, naming
// the difference.
TEST(SpeculativeRefusal, ADraftModelWithAnotherVocabularyIsRefused) {
  if (!std::filesystem::exists(tiny_llama_path()) || !std::filesystem::exists(smollm2_path())) {
    GTEST_SKIP() << "the shared tiny model or the default model is missing";
  }
  TestHost host;
  auto engine = speculating_engine(host, smollm2_path(), tiny_llama_path());
  ASSERT_FALSE(engine.has_value());
  EXPECT_EQ(engine.error().code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_NE(engine.error().message.find("must have the model's vocabulary; it has 32000 tokens, the model 49152"),
            std::string::npos)
      << engine.error().message;
}

// A model that multiplies by float weights is refused: rows of drafts would change the
// summation order of every row of the step (llama.cpp's GEMM order for several rows).
TEST(SpeculativeRefusal, FloatWeightModelsAreRefusedSayingWhy) {
  if (!std::filesystem::exists(tiny_llama_path())) GTEST_SKIP() << "the shared tiny model is missing";
  TestHost host;
  auto engine = speculating_engine(host, tiny_llama_path(), {});
  ASSERT_FALSE(engine.has_value());
  EXPECT_EQ(engine.error().code, LPX_ERR_UNSUPPORTED);
  EXPECT_NE(engine.error().message.find("quantized matrix weights"), std::string::npos) << engine.error().message;
}

INSTANTIATE_TEST_SUITE_P(Drafts, Speculative, ::testing::Values("ngram", "draft"),
                         [](const auto& param_info) { return std::string(param_info.param); });

}  // namespace
}  // namespace lpx::test
