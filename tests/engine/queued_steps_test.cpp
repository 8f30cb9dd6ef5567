// Queued steps (EngineConfig::overlap_steps, ABI 2.8 model_enqueue / model_wait) through the
// test-device backend: a step whose tokens are all picked on the device is queued, and the
// step after it is queued behind it with its tokens taken from those picks on the device. The
// backend runs a queued step only inside the model_wait that completes it (queue =
// "deferred"), or at once as the SDK's defaults do (queue = "sdk"); either way the tokens are
// those of steps run one at a time, a sequence that ends while its next row is queued loses
// only that row, and a failing queued step ends its requests with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine_test_support.hpp"
#include "test_device_model.hpp"

namespace lpx::test {
namespace {

// How the engine runs device-picked steps: queued (the backend's two ways) or one at a time.
struct Mode {
  const char* name;
  bool overlap;
  const char* queue;
};
constexpr Mode kModes[] = {{"deferred", true, "deferred"},
                           {"sdk-defaults", true, "sdk"},
                           {"unqueued", false, "deferred"}};

class QueuedSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tiny_llama_path())) {
      GTEST_SKIP() << tiny_llama_path() << " missing";
    }
  }
  std::unique_ptr<core::Engine> engine(const Mode& mode, core::EngineConfig config = {}) {
    if (config.context_size == 0) config.context_size = 256;
    config.overlap_steps = mode.overlap;
    return host_.engine(tiny_llama_path(), "test-device", {"greedy"}, config,
                        {{"queue", std::string(mode.queue)}});
  }
  static lpx_request request(const std::vector<std::int32_t>& prompt, std::uint32_t max_tokens) {
    lpx_request r{};
    r.struct_size = sizeof(r);
    r.prompt_tokens = prompt.data();
    r.prompt_token_count = prompt.size();
    r.max_tokens = max_tokens;
    return r;
  }
  // One turn of `session`: `prompt` to max_tokens, ending at end of generation unless
  // `ignore_eog`.
  static Generation turn(core::Engine& engine, std::uint64_t session,
                         const std::vector<std::int32_t>& prompt, std::uint32_t max_tokens,
                         bool ignore_eog) {
    lpx_request r = request(prompt, max_tokens);
    r.session = session;
    if (ignore_eog) r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    return generate(engine, r);
  }
  static void expect_cache_empty(core::Engine& engine) {
    lpx_engine_stats stats{};
    engine.stats(stats);
    EXPECT_EQ(stats.kv_blocks_used, 0u);
    EXPECT_EQ(stats.running_requests, 0u);
  }
  TestHost host_;
};

TEST_F(QueuedSteps, GiveTheTokensOfStepsRunOneAtATime) {
  core::EngineConfig config;
  config.max_sequences = 3;
  config.batch_tokens = 48;  // long prompts prefill in chunks beside decoding rows
  std::vector<std::vector<std::int32_t>> prompts;
  for (std::size_t i = 0; i < 7; ++i) {
    prompts.push_back(prompt_of(std::size_t{1} + 23 * (i % 4), static_cast<std::int32_t>(40 + i)));
  }
  const auto max_tokens = [](std::size_t i) {
    return static_cast<std::uint32_t>(3 + 11 * (i % 3));
  };
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name);
    auto e = engine(mode, config);
    ASSERT_NE(e, nullptr);
    std::vector<lpx_request> requests;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      requests.push_back(request(prompts[i], max_tokens(i)));
      requests.back().flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    }
    const std::vector<Generation> results = generate_together(*e, requests);
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      ASSERT_TRUE(results[i].error.empty()) << "request " << i << ": " << results[i].error;
      EXPECT_EQ(results[i].tokens, expected_tokens(prompts[i], max_tokens(i))) << "request " << i;
      EXPECT_EQ(results[i].finish_reason, LPX_FINISH_LENGTH);
    }
    expect_cache_empty(*e);
    // Queued behind another: every step of a lone decoding sequence but its first.
    if (mode.overlap) {
      EXPECT_GT(e->steps_queued_behind(), 0u);
    } else {
      EXPECT_EQ(e->steps_queued_behind(), 0u);
    }
  }
}

// Requests waiting for a slot cannot be admitted before the running one ends: steps go on
// being queued behind each other meanwhile (only a request that could join stops them).
TEST_F(QueuedSteps, GoOnWhileWaitingRequestsCannotBeAdmitted) {
  core::EngineConfig config;
  config.max_sequences = 1;
  auto e = engine(kModes[0], config);
  ASSERT_NE(e, nullptr);
  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<lpx_request> requests;
  for (std::int32_t i = 0; i < 3; ++i) prompts.push_back(prompt_of(4, 90 + i));
  for (const auto& p : prompts) {
    requests.push_back(request(p, 30));
    requests.back().flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  }
  const std::vector<Generation> results = generate_together(*e, requests);
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].error.empty()) << results[i].error;
    EXPECT_EQ(results[i].tokens, expected_tokens(prompts[i], 30));
  }
  // 28 of each request's 30 steps ran behind the one before (all but its prefill and its
  // first decode step), two of the three requests' while others waited.
  EXPECT_EQ(e->steps_queued_behind(), 3u * 28);
  lpx_engine_stats stats{};
  stats.struct_size = sizeof(stats);
  e->stats(stats);
  EXPECT_EQ(stats.steps_queued_behind, 3u * 28);
}

// Seeded sampling runs as programs on the device: the draws of step N + 1 are taken before
// step N's token is accepted, which changes no pick.
TEST_F(QueuedSteps, SampledTokensAreTheSameDrawForDraw) {
  core::EngineConfig config;
  config.max_sequences = 2;
  std::vector<std::vector<std::int32_t>> answers;
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name);
    auto e = engine(mode, config);
    ASSERT_NE(e, nullptr);
    std::vector<lpx_sampling_overrides> sampling(3);
    std::vector<std::vector<std::int32_t>> prompts;
    std::vector<lpx_request> requests;
    for (std::size_t i = 0; i < 3; ++i) {
      prompts.push_back(prompt_of(5 + i, static_cast<std::int32_t>(70 + i)));
    }
    for (std::size_t i = 0; i < 3; ++i) {
      sampling[i].struct_size = sizeof(lpx_sampling_overrides);
      sampling[i].set = LPX_SET_TEMPERATURE | LPX_SET_TOP_K | LPX_SET_SEED;
      sampling[i].temperature = 1.3;
      sampling[i].top_k = 20;
      sampling[i].seed = 500 + i;
      requests.push_back(request(prompts[i], 24));
      requests.back().sampling = &sampling[i];
      requests.back().flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    }
    const std::vector<Generation> results = generate_together(*e, requests);
    for (std::size_t i = 0; i < results.size(); ++i) {
      ASSERT_TRUE(results[i].error.empty()) << results[i].error;
      ASSERT_EQ(results[i].tokens.size(), 24u);
      EXPECT_NE(results[i].tokens, expected_tokens(prompts[i], 24))
          << "request " << i << " never sampled";
      if (answers.size() < results.size()) {
        answers.push_back(results[i].tokens);
      } else {
        EXPECT_EQ(results[i].tokens, answers[i]) << "request " << i;
      }
    }
  }
}

// A sequence that ends at its end-of-generation token while its next row is queued: that row
// is discarded, the sequence beside it runs on, every block comes back, and a session's next
// turn (which writes the discarded row's position again) reads the history it should.
TEST_F(QueuedSteps, ASequenceThatEndsLosesOnlyItsQueuedRow) {
  // The model answers 16001, then the tiny llama's </s> (2): the step that picks </s> is
  // decoding, with the step feeding it queued behind.
  const std::vector<std::int32_t> ending = {8000, 8000};
  const auto answer = expected_tokens(ending, 2);
  ASSERT_EQ(answer, (std::vector<std::int32_t>{16001, 2}));
  const auto long_prompt = prompt_of(9, 5);
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name);
    core::EngineConfig config;
    config.max_sequences = 2;
    auto e = engine(mode, config);
    ASSERT_NE(e, nullptr);
    std::vector<lpx_request> requests = {request(ending, 30), request(long_prompt, 30)};
    requests[1].flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    const std::vector<Generation> results = generate_together(*e, requests);
    ASSERT_TRUE(results[0].error.empty()) << results[0].error;
    EXPECT_EQ(results[0].finish_reason, LPX_FINISH_EOG);
    ASSERT_FALSE(results[0].tokens.empty());
    EXPECT_EQ(results[0].tokens.front(), answer[0]);
    ASSERT_TRUE(results[1].error.empty()) << results[1].error;
    EXPECT_EQ(results[1].tokens, expected_tokens(long_prompt, 30));
    expect_cache_empty(*e);

    const std::uint64_t session = e->session_create();
    const Generation ended = turn(*e, session, ending, 30, false);
    ASSERT_TRUE(ended.error.empty()) << ended.error;
    EXPECT_EQ(ended.finish_reason, LPX_FINISH_EOG);
    // The next turn continues from the answer with tokens of its own: position 3, where the
    // discarded row wrote </s>, now holds 517.
    std::vector<std::int32_t> next = ending;
    next.insert(next.end(), {answer[0], 517, 518, 519});
    const Generation continued = turn(*e, session, next, 12, true);
    ASSERT_TRUE(continued.error.empty()) << continued.error;
    EXPECT_EQ(continued.cached_tokens, ending.size() + 1);
    EXPECT_EQ(continued.tokens, expected_tokens(next, 12));
    e->session_destroy(session);
  }
}

// A session's next turn reuses every position the queued steps of its last turn computed:
// their tokens, taken on the device, are in the session's history on the host too.
TEST_F(QueuedSteps, ASessionsNextTurnReusesWhatQueuedStepsComputed) {
  const auto prompt = prompt_of(5, 21);
  const auto answer = expected_tokens(prompt, 8);
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name);
    auto e = engine(mode);
    ASSERT_NE(e, nullptr);
    const std::uint64_t session = e->session_create();
    const Generation first = turn(*e, session, prompt, 8, true);
    ASSERT_TRUE(first.error.empty()) << first.error;
    EXPECT_EQ(first.tokens, answer);
    std::vector<std::int32_t> next = prompt;
    next.insert(next.end(), answer.begin(), answer.end());
    next.insert(next.end(), {600, 601});
    const Generation continued = turn(*e, session, next, 5, true);
    ASSERT_TRUE(continued.error.empty()) << continued.error;
    // The prompt and the seven answer tokens fed back (the eighth never was).
    EXPECT_EQ(continued.cached_tokens, prompt.size() + 7);
    EXPECT_EQ(continued.tokens, expected_tokens(next, 5));
    e->session_destroy(session);
  }
}

// A request a client cancels from its token callback: the row queued behind that token is
// discarded, and the request ends cancelled with what it was sent.
TEST_F(QueuedSteps, ACancelledRequestLosesOnlyItsQueuedRow) {
  struct Client {
    Generation g;
    std::size_t stop_after;
  };
  const auto on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
    auto& c = *static_cast<Client*>(user);
    if (e->token >= 0) c.g.tokens.push_back(e->token);
    return c.g.tokens.size() >= c.stop_after ? 1 : 0;
  };
  const auto on_done = [](void* user, const lpx_request_result* r) {
    static_cast<Client*>(user)->g.finish_reason = r->finish_reason;
  };
  const auto prompt = prompt_of(6, 9);
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name);
    auto e = engine(mode);
    ASSERT_NE(e, nullptr);
    Client client{{}, 5};
    lpx_request r = request(prompt, 40);
    r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    r.user = &client;
    r.on_token = on_token;
    r.on_done = on_done;
    auto id = e->submit(r);
    ASSERT_TRUE(id.has_value()) << id.error().message;
    e->wait(*id);
    EXPECT_EQ(client.g.finish_reason, LPX_FINISH_CANCELLED);
    EXPECT_EQ(client.g.tokens, expected_tokens(prompt, 5));
    expect_cache_empty(*e);
    const Generation after = generate(*e, request(prompt, 7));
    ASSERT_TRUE(after.error.empty()) << after.error;
    EXPECT_EQ(after.tokens, expected_tokens(prompt, 7));
  }
}

// The test model fails a step fed n_vocab - 1 (INTERNAL) or n_vocab - 2 (a lost device,
// UNAVAILABLE). Two prompts that pick such a token: {15998, 16000} first (the step feeding it
// is the first queued one), {7999, 7999} second (15999, then 31998: the step feeding it is
// queued behind the one that picked it, and fails in its model_wait; with the SDK's defaults
// it fails in model_enqueue, so the step before is collected and the row runs again, alone).
// Either way the failing step ends both sequences of its batch with the backend's reason,
// after the picks of the steps before, and the engine serves the next request.
TEST_F(QueuedSteps, AQueuedStepThatFailsEndsItsRequestsWithTheReason) {
  struct Poison {
    std::vector<std::int32_t> prompt;
    std::size_t fails_after;  // picks delivered first
    const char* reason;
    lpx_status_code code;
  };
  const Poison poisons[] = {
      {{15998, 16000}, 1, "test-device: the failing token", LPX_ERR_INTERNAL},
      {{7999, 7999}, 2, "test-device: the device was lost", LPX_ERR_UNAVAILABLE}};
  const auto healthy = prompt_of(2, 12);
  for (const Poison& poison : poisons) {
    const auto picks = expected_tokens(poison.prompt, poison.fails_after);
    ASSERT_GE(picks.back(), kTestDeviceVocab - 2);
    for (std::int32_t t : expected_tokens(healthy, poison.fails_after)) ASSERT_LT(t, 31990);
    for (const Mode& mode : kModes) {
      SCOPED_TRACE(std::string(mode.name) + ", failing after " +
                   std::to_string(poison.fails_after));
      core::EngineConfig config;
      config.max_sequences = 2;
      auto e = engine(mode, config);
      ASSERT_NE(e, nullptr);
      std::vector<lpx_request> requests = {request(poison.prompt, 6), request(healthy, 6)};
      for (auto& r : requests) r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
      const std::vector<Generation> results = generate_together(*e, requests);
      for (const Generation& g : results) {
        EXPECT_NE(g.error.find(poison.reason), std::string::npos) << g.error;
        EXPECT_EQ(g.error_code, poison.code);
      }
      EXPECT_EQ(results[0].tokens, picks);
      EXPECT_EQ(results[1].tokens, expected_tokens(healthy, poison.fails_after));
      expect_cache_empty(*e);
      const Generation next = generate(*e, request(healthy, 6));
      ASSERT_TRUE(next.error.empty()) << next.error;
      EXPECT_EQ(next.tokens, expected_tokens(healthy, 6));
    }
  }
}

}  // namespace
}  // namespace lpx::test
