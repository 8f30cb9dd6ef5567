// The engine's private state types, shared by the files that implement it (engine.cpp: the
// thread and lifecycle; engine_intake.cpp: requests in; engine_scheduler.cpp: admission and
// each step's batch; engine_output.cpp: tokens and results out). Not for use outside.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/sampler_chain.hpp"
#include "engine/stop_matcher.hpp"

namespace lpx::core {

using Clock = std::chrono::steady_clock;

// A sequence of positions in the KV cache: the tokens whose K/V it holds, in order.
struct Engine::Sequence {
  BlockTable blocks;
  std::vector<std::int32_t> tokens;
};

struct Engine::Session {
  Sequence sequence;
  bool busy = false;
};

struct Engine::Request {
  std::uint64_t id = 0;
  std::vector<std::int32_t> prompt;
  std::uint32_t max_tokens = 0;
  std::uint32_t positions_needed = 0;  // cache positions reserved at admission
  std::unique_ptr<SamplerChain> sampler;
  StopMatcher stops;
  std::optional<IncrementalDecoder> decoder;
  void* user = nullptr;
  int32_t (*on_token)(void*, const lpx_token_event*) = nullptr;
  void (*on_done)(void*, const lpx_request_result*) = nullptr;
  std::uint64_t session = 0;

  std::unique_ptr<Sequence> own_sequence;
  Sequence* sequence = nullptr;
  std::uint32_t prompt_done = 0;  // prompt tokens whose K/V are in the cache
  std::uint32_t cached = 0;       // of those, reused from the session
  std::uint32_t generated = 0;
  std::int32_t next_token = -1;   // sampled, to be fed in the next step
  std::atomic<bool> cancel{false};
  bool context_end_is_length = false;
  bool ignore_end_of_generation = false;  // LPX_REQUEST_IGNORE_END_OF_GENERATION
  bool logprobs = false;
  std::vector<lpx_token_logprob> top;  // top_logprobs entries, sized at submit
  lpx_token_logprob chosen_logprob{};
  std::string repaired;  // a piece with ill-formed UTF-8, repaired (capacity kept between tokens)
  std::string admission_error;  // set when the request can never fit; it ends at the next step
  Clock::time_point submitted, first_token, last_token;
};

}  // namespace lpx::core
