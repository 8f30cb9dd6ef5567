// The engine's device path (ABI 1.4: model_load / model_forward, DeviceForward) without a
// GPU, through the test-device backend (tests/test_plugins/test_device_backend.cpp): its model
// reads each sequence's history back through the block tables the engine sends and predicts
// next = (sum of the history + 1) mod n_vocab, so any wrong table, position or row mapping
// changes the tokens. Plain greedy requests take the device-argmax path and chains of standard
// links run as sampling programs on the device (only ids cross); other chains, and requests
// that want log-probabilities, get the logits and sample on the host.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "engine_test_support.hpp"
#include "test_device_model.hpp"

namespace lpx::test {
namespace {

constexpr std::int64_t kVocab = kTestDeviceVocab;

class DeviceForwardEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tiny_llama_path())) GTEST_SKIP() << tiny_llama_path() << " missing";
  }
  Generation run(core::Engine& engine, const std::vector<std::int32_t>& prompt,
                 std::uint32_t max_tokens) {
    lpx_request request{};
    request.prompt_tokens = prompt.data();
    request.prompt_token_count = prompt.size();
    request.max_tokens = max_tokens;
    return generate(engine, request);
  }
  TestHost host_;
};

TEST_F(DeviceForwardEngine, GreedyTokensComeFromTheDeviceThroughTheBlockTables) {
  core::EngineConfig config;
  config.context_size = 256;
  config.block_size = 16;
  auto engine = host_.engine(tiny_llama_path(), "test-device", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  // 40 prompt tokens + 30 generated: several blocks per sequence.
  const auto prompt = prompt_of(40, 1);
  const auto expected = expected_tokens(prompt, 30);
  ASSERT_TRUE(std::none_of(expected.begin(), expected.end(), [](std::int32_t t) { return t < 3; }))
      << "pick another prompt: an expected token is a special one";
  const Generation g = run(*engine, prompt, 30);
  ASSERT_TRUE(g.error.empty()) << g.error;
  EXPECT_EQ(g.tokens, expected);
}

TEST_F(DeviceForwardEngine, ChainsOfStandardLinksPickOnTheDevice) {
  core::EngineConfig config;
  config.context_size = 256;
  auto engine = host_.engine(tiny_llama_path(), "test-device", {"top-k", "greedy"}, config);
  ASSERT_NE(engine, nullptr);
  const auto prompt = prompt_of(7, 2);
  const Generation g = run(*engine, prompt, 20);
  ASSERT_TRUE(g.error.empty()) << g.error;
  EXPECT_EQ(g.tokens, expected_tokens(prompt, 20));
}

// A seeded request with temperature, top_k and top_p: the device runs the chain as a program
// with the draws of the chain's own generator, so it picks exactly what the host picks from
// the same logits (a request for log-probabilities needs the logits: it samples on the host).
TEST_F(DeviceForwardEngine, SampledTokensFromTheDeviceEqualTheHostsDrawForDraw) {
  core::EngineConfig config;
  config.context_size = 256;
  config.max_sequences = 3;
  auto engine = host_.engine(tiny_llama_path(), "test-device", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  const auto sample = [&](std::uint64_t seed, bool on_host) {
    const auto prompt = prompt_of(9, static_cast<std::int32_t>(seed));
    lpx_sampling_overrides sampling{};
    sampling.struct_size = sizeof(sampling);
    sampling.set = LPX_SET_TEMPERATURE | LPX_SET_TOP_K | LPX_SET_TOP_P | LPX_SET_SEED;
    sampling.temperature = 1.2;
    sampling.top_k = 30;
    sampling.top_p = 0.95;
    sampling.seed = seed;
    lpx_request request{};
    request.struct_size = sizeof(request);
    request.prompt_tokens = prompt.data();
    request.prompt_token_count = prompt.size();
    request.max_tokens = 25;
    request.sampling = &sampling;
    request.logprobs = on_host ? 1 : 0;
    request.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    return generate(*engine, request);
  };
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    const Generation device = sample(seed, false);
    const Generation host = sample(seed, true);
    ASSERT_TRUE(device.error.empty()) << device.error;
    ASSERT_TRUE(host.error.empty()) << host.error;
    ASSERT_EQ(device.tokens.size(), 25u);
    EXPECT_EQ(device.tokens, host.tokens) << "seed " << seed;
    // The logits fall off by 0.5 per token of distance from the model's prediction: at T = 1.2
    // the prediction itself has about a fifth of the mass, so sampling leaves it often.
    const auto prompt = prompt_of(9, static_cast<std::int32_t>(seed));
    EXPECT_NE(device.tokens, expected_tokens(prompt, 25)) << "seed " << seed << " never sampled";
  }
}

TEST_F(DeviceForwardEngine, ChainsThatAreNotProgramsGetTheLogits) {
  core::EngineConfig config;
  config.context_size = 256;
  auto engine =
      host_.engine(tiny_llama_path(), "test-device", {"penalties", "greedy"}, config);
  ASSERT_NE(engine, nullptr);
  // Penalties on repeats only; the model's predictions do not repeat in 20 tokens here.
  const auto prompt = prompt_of(7, 3);
  const auto expected = expected_tokens(prompt, 20);
  ASSERT_EQ(std::set<std::int32_t>(expected.begin(), expected.end()).size(), expected.size());
  const Generation g = run(*engine, prompt, 20);
  ASSERT_TRUE(g.error.empty()) << g.error;
  EXPECT_EQ(g.tokens, expected);
}

// Eight requests on three slots with chunked prefill: sequences join and leave, share the
// pool, and each still reads back exactly its own history; every block is returned.
TEST_F(DeviceForwardEngine, SequencesJoiningAndLeavingKeepTheirOwnCache) {
  core::EngineConfig config;
  config.context_size = 256;
  config.max_sequences = 3;
  config.kv_cache_tokens = 3 * 256;
  config.batch_tokens = 48;  // long prompts are prefilled in chunks beside decoding rows
  auto engine = host_.engine(tiny_llama_path(), "test-device", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<std::uint32_t> lengths = {5, 120, 17, 64, 1, 90, 33, 8};
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    prompts.push_back(prompt_of(lengths[i], static_cast<std::int32_t>(10 + i)));
  }
  std::vector<Generation> results(prompts.size());
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      results[i] = run(*engine, prompts[i], static_cast<std::uint32_t>(5 + 7 * (i % 4)));
    });
  }
  for (auto& c : clients) c.join();
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(results[i].error.empty()) << "request " << i << ": " << results[i].error;
    const auto expected = expected_tokens(prompts[i], 5 + 7 * (i % 4));
    // A special token ends a generation early; compare what was generated.
    ASSERT_LE(results[i].tokens.size(), expected.size());
    EXPECT_TRUE(std::equal(results[i].tokens.begin(), results[i].tokens.end(), expected.begin()))
        << "request " << i;
  }
  lpx_engine_stats stats{};
  engine->stats(stats);
  EXPECT_EQ(stats.kv_blocks_used, 0u);
  EXPECT_EQ(stats.running_requests, 0u);
}

// A step the device fails ends its requests with the backend's reason, frees their cache, and
// the engine serves the next request.
TEST_F(DeviceForwardEngine, AFailingStepEndsItsRequestsWithTheReason) {
  core::EngineConfig config;
  config.context_size = 128;
  auto engine = host_.engine(tiny_llama_path(), "test-device", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  auto poisoned = prompt_of(20, 3);
  poisoned[7] = static_cast<std::int32_t>(kVocab - 1);
  const Generation failed = run(*engine, poisoned, 4);
  EXPECT_NE(failed.error.find("test-device: the failing token"), std::string::npos) << failed.error;
  EXPECT_EQ(failed.error_code, LPX_ERR_INTERNAL);
  EXPECT_TRUE(failed.tokens.empty());
  // The backend's own code reaches the client: a lost device is UNAVAILABLE.
  poisoned[7] = static_cast<std::int32_t>(kVocab - 2);
  const Generation lost = run(*engine, poisoned, 4);
  EXPECT_NE(lost.error.find("test-device: the device was lost"), std::string::npos) << lost.error;
  EXPECT_EQ(lost.error_code, LPX_ERR_UNAVAILABLE);
  const auto prompt = prompt_of(9, 4);
  const Generation next = run(*engine, prompt, 6);
  ASSERT_TRUE(next.error.empty()) << next.error;
  EXPECT_EQ(next.tokens, expected_tokens(prompt, 6));
  lpx_engine_stats stats{};
  engine->stats(stats);
  EXPECT_EQ(stats.kv_blocks_used, 0u);
}

// LPX_REQUEST_IGNORE_END_OF_GENERATION: the end-of-generation token is a token like another
// (benchmarks decode exactly max_tokens). The prompt [1] makes the test model answer 2, the
// tiny llama's </s>.
TEST_F(DeviceForwardEngine, IgnoringEndOfGenerationRunsToMaxTokens) {
  core::EngineConfig config;
  config.context_size = 64;
  auto engine = host_.engine(tiny_llama_path(), "test-device", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  const std::vector<std::int32_t> prompt = {1};
  const auto expected = expected_tokens(prompt, 5);
  ASSERT_EQ(expected[0], 2);
  lpx_request stops{};
  stops.prompt_tokens = prompt.data();
  stops.prompt_token_count = 1;
  stops.max_tokens = 5;
  const Generation stopped = generate(*engine, stops);
  EXPECT_EQ(stopped.finish_reason, LPX_FINISH_EOG);
  EXPECT_LE(stopped.tokens.size(), 1u);
  lpx_request runs = stops;
  runs.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  const Generation ran = generate(*engine, runs);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.finish_reason, LPX_FINISH_LENGTH);
  EXPECT_EQ(ran.tokens, expected);
}

}  // namespace
}  // namespace lpx::test
