// What ABI 1.3 added to the engine: token log-probabilities, the context end as "length",
// load statistics, tokenize/detokenize through the C table, and older (1.2-sized) requests.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_c_api.hpp"
#include "engine_test_support.hpp"

namespace lpx::test {
namespace {

class EngineApi13 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  }
  std::unique_ptr<core::Engine> make(core::EngineConfig config = {}) {
    if (config.context_size == 0) config.context_size = 256;
    return host_.engine(smollm2_path(), "cpu", {"greedy"}, config);
  }
  TestHost host_;
};

struct LogprobEvents {
  std::vector<lpx_token_logprob> chosen;
  std::vector<std::vector<lpx_token_logprob>> top;
  std::vector<std::string> chosen_pieces;
  int events_without = 0;
  int32_t reason = 0;
};

LogprobEvents run_with_logprobs(core::Engine& engine, const char* prompt, uint32_t top_logprobs) {
  LogprobEvents out;
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt = prompt;
  r.max_tokens = 6;
  r.logprobs = 1;
  r.top_logprobs = top_logprobs;
  r.user = &out;
  r.on_token = [](void* u, const lpx_token_event* e) -> int32_t {
    auto& o = *static_cast<LogprobEvents*>(u);
    if (e->chosen == nullptr) {
      ++o.events_without;
      return 0;
    }
    o.chosen.push_back(*e->chosen);
    o.chosen_pieces.emplace_back(e->chosen->piece, e->chosen->piece_length);
    o.top.emplace_back(e->top, e->top + e->top_count);
    return 0;
  };
  r.on_done = [](void* u, const lpx_request_result* res) {
    static_cast<LogprobEvents*>(u)->reason = res->finish_reason;
  };
  auto id = engine.submit(r);
  EXPECT_TRUE(id.has_value()) << id.error();
  if (id) engine.wait(*id);
  return out;
}

TEST_F(EngineApi13, LogprobsDescribeTheModelsDistribution) {
  auto engine = make();
  const LogprobEvents e = run_with_logprobs(*engine, "The capital of France is", 5);
  ASSERT_EQ(e.chosen.size(), 6u);
  for (std::size_t i = 0; i < e.chosen.size(); ++i) {
    ASSERT_EQ(e.top[i].size(), 5u);
    // Greedy picks the most likely token, so it heads the list with the same log-probability.
    EXPECT_EQ(e.chosen[i].token, e.top[i][0].token);
    EXPECT_FLOAT_EQ(e.chosen[i].logprob, e.top[i][0].logprob);
    double mass = 0;
    for (std::size_t k = 0; k < 5; ++k) {
      EXPECT_LE(e.top[i][k].logprob, 0.0f);
      if (k > 0) {
        EXPECT_LE(e.top[i][k].logprob, e.top[i][k - 1].logprob);
      }
      mass += std::exp(static_cast<double>(e.top[i][k].logprob));
    }
    EXPECT_LE(mass, 1.0 + 1e-5);
    EXPECT_GT(mass, 0.0);
    auto piece = engine->tokenizer().piece(e.chosen[i].token, true);
    ASSERT_TRUE(piece.has_value());
    EXPECT_EQ(e.chosen_pieces[i], std::string(*piece));
  }
}

TEST_F(EngineApi13, WithoutLogprobsEventsCarryNone) {
  auto engine = make();
  lpx_request r{};
  r.prompt = "Hello";
  r.max_tokens = 3;
  const Generation g = generate(*engine, r);  // its callback ignores the new fields
  EXPECT_EQ(g.tokens.size(), 3u);
  LogprobEvents none;
  lpx_request plain{};
  plain.struct_size = sizeof(plain);
  plain.prompt = "Hello";
  plain.max_tokens = 3;
  plain.user = &none;
  plain.on_token = [](void* u, const lpx_token_event* ev) -> int32_t {
    if (ev->chosen == nullptr && ev->top == nullptr && ev->top_count == 0) {
      ++static_cast<LogprobEvents*>(u)->events_without;
    }
    return 0;
  };
  plain.on_done = [](void*, const lpx_request_result*) {};
  auto id = engine->submit(plain);
  ASSERT_TRUE(id.has_value()) << id.error();
  engine->wait(*id);
  EXPECT_EQ(none.events_without, 3);
}

TEST_F(EngineApi13, TooManyTopLogprobsAreRefused) {
  auto engine = make();
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt = "Hello";
  r.max_tokens = 1;
  r.top_logprobs = LPX_MAX_TOP_LOGPROBS + 1;
  r.on_done = [](void*, const lpx_request_result*) {};
  auto id = engine->submit(r);
  ASSERT_FALSE(id.has_value());
  EXPECT_NE(id.error().message.find("top_logprobs"), std::string::npos) << id.error().message;
  EXPECT_EQ(id.error().code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(id.error().field, "top_logprobs");
}

TEST_F(EngineApi13, TheContextEndCanBeALengthFinish) {
  core::EngineConfig config;
  config.context_size = 24;
  auto engine = make(config);
  lpx_request r{};
  r.prompt = "1, 2, 3,";
  r.max_tokens = 0;
  r.flags = LPX_REQUEST_CONTEXT_END_IS_LENGTH;
  const Generation g = generate(*engine, r);
  EXPECT_EQ(g.finish_reason, LPX_FINISH_LENGTH) << g.error;
  EXPECT_EQ(g.prompt_tokens + g.tokens.size(), 24u + 1u);
}

TEST_F(EngineApi13, AnOlderSmallerRequestIsStillAccepted) {
  auto engine = make();
  struct State {
    int32_t reason = 0;
    int with_logprobs = 0;
  } state;
  lpx_request r{};
  r.struct_size = offsetof(lpx_request, logprobs);  // what a 1.2 plugin passes
  r.prompt = "Hello";
  r.max_tokens = 2;
  r.logprobs = 1;  // beyond its struct_size: must be ignored
  r.user = &state;
  r.on_token = [](void* u, const lpx_token_event* e) -> int32_t {
    if (e->chosen != nullptr) ++static_cast<State*>(u)->with_logprobs;
    return 0;
  };
  r.on_done = [](void* u, const lpx_request_result* res) { static_cast<State*>(u)->reason = res->finish_reason; };
  auto id = engine->submit(r);
  ASSERT_TRUE(id.has_value()) << id.error();
  engine->wait(*id);
  EXPECT_EQ(state.reason, LPX_FINISH_LENGTH);
  EXPECT_EQ(state.with_logprobs, 0);
}

TEST_F(EngineApi13, StatsCountWorkAndShowTheCacheFreeAgain) {
  core::EngineConfig config;
  config.kv_cache_tokens = 512;
  auto engine = make(config);
  lpx_engine_stats before{};
  engine->stats(before);
  EXPECT_EQ(before.kv_blocks_total, 512u / 16u);
  EXPECT_EQ(before.kv_block_size, 16u);
  EXPECT_EQ(before.kv_blocks_used, 0u);
  lpx_request r{};
  r.prompt = "The history of the Roman Empire began when";
  r.max_tokens = 5;
  const Generation g = generate(*engine, r);
  lpx_engine_stats after{};
  engine->stats(after);
  EXPECT_EQ(after.generated_tokens - before.generated_tokens, 5u);
  EXPECT_EQ(after.prompt_tokens - before.prompt_tokens, g.prompt_tokens);
  EXPECT_GE(after.steps - before.steps, 5u);
  EXPECT_EQ(after.kv_blocks_used, 0u);
  EXPECT_EQ(after.running_requests, 0u);
  EXPECT_EQ(after.waiting_requests, 0u);
}

TEST_F(EngineApi13, TokenizeAndDetokenizeThroughTheCTable) {
  auto engine = make();
  const lpx_engine_api& api = core::engine_c_api();
  lpx_engine* e = core::to_c(*engine);
  const std::string text = "Hello world, 你好 🙂";
  std::size_t count = 0;
  // Too small a buffer: nothing is lost, the count says how much room is needed.
  int32_t one = -1;
  lpx_status* status = api.tokenize(e, text.data(), text.size(), 0, &one, 1, &count);
  ASSERT_EQ(status, nullptr);
  std::vector<int32_t> tokens(count);
  status = api.tokenize(e, text.data(), text.size(), 0, tokens.data(), tokens.size(), &count);
  ASSERT_EQ(status, nullptr);
  ASSERT_EQ(count, tokens.size());
  EXPECT_EQ(one, tokens[0]);
  core::Tokenizer::EncodeOptions options;
  options.add_bos = options.add_eos = false;
  EXPECT_EQ(tokens, *engine->tokenizer().encode(text, options));

  std::size_t length = 0;
  status = api.detokenize(e, tokens.data(), tokens.size(), 0, nullptr, 0, &length);
  ASSERT_EQ(status, nullptr);
  std::string back(length, '\0');
  status = api.detokenize(e, tokens.data(), tokens.size(), 0, back.data(), back.size(), &length);
  ASSERT_EQ(status, nullptr);
  EXPECT_EQ(back, text);

  const int32_t outside = 1 << 30;
  status = api.detokenize(e, &outside, 1, 0, nullptr, 0, &length);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->code, LPX_ERR_INVALID_ARGUMENT);
  status->release(status);
  const std::string broken = "ab\xff";
  status = api.tokenize(e, broken.data(), broken.size(), 0, nullptr, 0, &count);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(status->message).find("UTF-8"), std::string::npos) << status->message;
  status->release(status);
}

TEST_F(EngineApi13, DetokenizingACutCharacterGivesOneReplacementCharacter) {
  auto engine = make();
  // The tiny Llama has SentencePiece byte tokens: the first two bytes of U+4F60 (E4 BD A0).
  auto byte_token = [&](unsigned char byte) {
    for (std::int32_t id = 0; id < engine->tokenizer().vocab_size(); ++id) {
      auto piece = engine->tokenizer().piece(id);
      if (piece && *piece == std::string(1, static_cast<char>(byte))) return id;
    }
    return -1;
  };
  const std::vector<int32_t> tokens = {byte_token('a'), byte_token(0xE4), byte_token(0xBD)};
  ASSERT_GE(*std::min_element(tokens.begin(), tokens.end()), 0) << "no byte tokens";
  std::string text(16, '\0');
  std::size_t length = 0;
  lpx_status* status = core::engine_c_api().detokenize(
      core::to_c(*engine), tokens.data(), tokens.size(), 0, text.data(), text.size(), &length);
  ASSERT_EQ(status, nullptr);
  text.resize(length);
  EXPECT_EQ(text, "a\xEF\xBF\xBD");  // one U+FFFD for the maximal subpart E4 BD, as Unicode asks
}

TEST(EngineUtf8, BytesThatFormNoCharacterAreShownAsReplacementCharacters) {
  if (!std::filesystem::exists(tiny_llama_path())) GTEST_SKIP() << "no ../shared/models";
  TestHost host;
  auto engine = host.engine(tiny_llama_path(), "cpu", {"greedy"});
  // The tiny Llama's vocabulary has SentencePiece byte tokens; force a lone continuation byte.
  std::int32_t stray = -1;
  for (std::int32_t id = 0; id < engine->tokenizer().vocab_size(); ++id) {
    auto piece = engine->tokenizer().piece(id);
    if (piece && *piece == std::string_view("\xB9", 1)) stray = id;
  }
  ASSERT_GE(stray, 0) << "no byte token 0xB9";
  const float bias = 1e9f;
  lpx_sampling_overrides sampling{};
  sampling.struct_size = sizeof(sampling);
  sampling.logit_bias_tokens = &stray;
  sampling.logit_bias_values = &bias;
  sampling.logit_bias_count = 1;
  lpx_request r{};
  r.prompt = "Hello";
  r.max_tokens = 3;
  r.sampling = &sampling;
  const Generation g = generate(*engine, r);
  ASSERT_EQ(g.tokens, (std::vector<std::int32_t>{stray, stray, stray}));
  EXPECT_EQ(g.text, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

// Steps a long prompt needs before its first token while another sequence decodes.
std::uint64_t prefill_steps_beside_a_stream(core::Engine& engine) {
  std::atomic<int> streamed{0};
  lpx_request stream{};
  stream.struct_size = sizeof(stream);
  stream.prompt = "Count: 1, 2, 3,";
  stream.max_tokens = 60;
  stream.user = &streamed;
  stream.on_token = [](void* u, const lpx_token_event*) -> int32_t {
    ++*static_cast<std::atomic<int>*>(u);
    return 0;
  };
  stream.on_done = [](void*, const lpx_request_result*) {};
  auto a = engine.submit(stream);
  EXPECT_TRUE(a.has_value());
  while (streamed.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::string long_prompt;
  for (int i = 0; i < 60; ++i) long_prompt += "the quick brown fox ";
  struct First {
    std::atomic<std::uint64_t> steps{0};
    core::Engine* engine;
  } first{{0}, &engine};
  lpx_engine_stats at_submit{};
  engine.stats(at_submit);
  lpx_request prompt{};
  prompt.struct_size = sizeof(prompt);
  prompt.prompt = long_prompt.c_str();
  prompt.max_tokens = 1;
  prompt.user = &first;
  prompt.on_token = [](void* u, const lpx_token_event*) -> int32_t {
    auto& f = *static_cast<First*>(u);
    lpx_engine_stats now{};
    f.engine->stats(now);
    f.steps = now.steps;
    return 0;
  };
  prompt.on_done = [](void*, const lpx_request_result*) {};
  auto b = engine.submit(prompt);
  EXPECT_TRUE(b.has_value());
  engine.wait(*b);
  engine.cancel(*a);
  engine.wait(*a);
  return first.steps - at_submit.steps;
}

TEST_F(EngineApi13, LatencyModePrefillsInSmallChunksBesideRunningStreams) {
  core::EngineConfig latency_config;  // prefill_tokens_while_decoding = 64
  latency_config.kv_cache_tokens = 1024;  // room for both requests at once
  auto latency = make(latency_config);
  core::EngineConfig throughput_config = latency_config;
  throughput_config.prefill_tokens_while_decoding = throughput_config.batch_tokens;
  auto throughput = make(throughput_config);
  // ~240 prompt tokens: at most 64 per step beside a stream, or all in one step.
  EXPECT_GE(prefill_steps_beside_a_stream(*latency), 4u);
  EXPECT_LE(prefill_steps_beside_a_stream(*throughput), 2u);
}

}  // namespace
}  // namespace lpx::test
