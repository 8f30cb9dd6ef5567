// A request as the engine carries it from intake to its result, and the KV-cache sequences and
// sessions it runs on. Shared by the engine's three stages (request_intake: made and checked;
// scheduler: queued, admitted, batched, released; token_output: tokens and result out).
//
// Threading: a Request is built by the submitting thread, then owned by the scheduler. Once
// admitted, only the engine thread touches it, except `cancel`, which any thread may set.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/draft_sequence.hpp"
#include "engine/kv_cache.hpp"
#include "engine/sampler_chain.hpp"
#include "engine/stop_matcher.hpp"
#include "lpx/engine.h"
#include "model/resident_adapter.hpp"
#include "tokenizer/tokenizer.hpp"

namespace lpx::core {

using Clock = std::chrono::steady_clock;

// A sequence of positions in the KV cache: the tokens whose K/V it holds, in order.
struct Sequence {
  BlockTable blocks;
  std::vector<std::int32_t> tokens;
  // The adapter the K/V was computed with (NULL: the base model), and the root of its chain of
  // prefix keys: cached prefixes are shared only between requests of the same adapter.
  const ResidentAdapter* adapter = nullptr;
  std::uint64_t root = PrefixIndex::kRoot;
  // Prefix caching: the first `published` full blocks are indexed (or were mapped from the
  // index); `key` is the last one's (KvCache::publish).
  std::uint32_t published = 0;
  std::uint64_t key = PrefixIndex::kRoot;
  // The first position computed a row at a time (decoding), never published.
  std::size_t decoded_from = SIZE_MAX;
  // The tokens are cut back to `n`: what is published must be walked again from the start.
  void rewind(std::size_t n) {
    tokens.resize(n);
    published = 0;
    key = root;
    if (n <= decoded_from) decoded_from = SIZE_MAX;  // what follows is computed again
  }
};

// A conversation whose cached prefix outlives its requests (lpx_engine_api.session_create).
struct Session {
  Sequence sequence;
  bool busy = false;  // a request of this session is queued or running
};

struct Request {
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
  const ResidentAdapter* adapter = nullptr;  // lpx_request.adapter; NULL: the base model

  std::unique_ptr<Sequence> own_sequence;
  Sequence* sequence = nullptr;   // set at admission; NULL again once finished
  std::uint32_t prompt_done = 0;  // prompt tokens whose K/V are in the cache
  std::uint32_t cached = 0;       // of those, reused from the session
  std::uint32_t generated = 0;
  std::uint32_t drafts_verified = 0;  // speculative: draft tokens the model ran for it
  std::uint32_t drafts_accepted = 0;  // of those, confirmed
  std::int32_t next_token = -1;   // sampled, to be fed in the next step
  std::vector<std::int32_t> draft;  // speculative: guessed to follow next_token, verified beside it
  DraftSequence draft_state;        // speculative with a draft model: its state there
  // Sampling programs: a draw taken for a queued step that never ran, for its next step.
  std::optional<lpx_sampling_program> drawn_program;
  std::atomic<bool> cancel{false};
  bool context_end_is_length = false;
  bool ignore_end_of_generation = false;  // LPX_REQUEST_IGNORE_END_OF_GENERATION
  bool logprobs = false;
  std::vector<lpx_token_logprob> top;  // top_logprobs entries, sized at submit
  lpx_token_logprob chosen_logprob{};
  std::string repaired;  // a piece with ill-formed UTF-8, repaired (capacity kept between tokens)
  std::string admission_error;  // set when the request can never fit; it ends at the next step
  Clock::time_point submitted, first_token, last_token;
  Clock::time_point admitted{};  // given a sequence slot (epoch: never)

  bool decoding() const noexcept { return prompt_done == prompt.size(); }
  // What it may still generate, the next token included: the positions it reserved (prompt +
  // max_tokens, or the context) less those already used; at least 1.
  std::uint32_t tokens_left() const noexcept {
    const std::uint64_t used = std::uint64_t{prompt.size()} + generated;
    return positions_needed > used ? static_cast<std::uint32_t>(positions_needed - used) : 1;
  }
};

// How a request ends: an lpx_finish_reason, and for LPX_FINISH_ERROR the failure.
struct Ending {
  std::int32_t reason = LPX_FINISH_STOP;
  std::string error;
  lpx_status_code code = LPX_ERR_INTERNAL;

  Ending(std::int32_t r) : reason(r) {}  // NOLINT: implicit, {LPX_FINISH_EOG} reads well
  Ending(std::int32_t r, std::string e, lpx_status_code c = LPX_ERR_INTERNAL)
      : reason(r), error(std::move(e)), code(c) {}
};

}  // namespace lpx::core
