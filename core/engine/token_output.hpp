// The engine's third stage: a request's picked tokens become text events on its callback, and
// its ending becomes its result. Knows nothing of scheduling or the cache: deliver() says when a
// request ends, and the engine releases it.
//
// Threading: engine thread only. Allocation-free per token, except what the callbacks and the
// decoder do.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/request.hpp"
#include "tokenizer/tokenizer.hpp"

namespace lpx::core {

class TokenOutput {
 public:
  // `tokenizer` must outlive the output stage.
  TokenOutput(const Tokenizer& tokenizer, std::uint32_t context_size, std::uint32_t n_vocab);

  // Streams `token` (picked from `logits`, NULL when it was picked on the device; logprobs
  // requests always have them). Returns how the request ends when this token ends it; otherwise
  // the token is the request's next input.
  std::optional<Ending> deliver(Request& request, std::int32_t token, const float* logits);

  // Flushes what the request's text held back (unless it stopped or failed) and calls on_done
  // with its result: finish reason, error, token counts and timings.
  void report(Request& request, const Ending& ending) const;

 private:
  void compute_logprobs(Request& request, std::int32_t token, const float* logits);

  const Tokenizer& tokenizer_;
  std::uint32_t context_size_;
  std::uint32_t n_vocab_;
};

}  // namespace lpx::core
