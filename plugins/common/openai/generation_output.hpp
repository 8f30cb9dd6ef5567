// What a generation produces, per token and per choice, as plain values: copied out of the
// engine's callbacks (lpx/engine.h) so they can cross threads and outlive the callback.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <lpx/engine.h>
#include <lpx/status.h>

namespace lpx::openai {

struct TokenLogprob {
  std::int32_t token = 0;
  float logprob = 0;
  std::string piece;  // raw bytes of the token (may be part of a character)
};

struct TokenOutput {
  std::string text;  // whole UTF-8 characters that became showable (may be empty)
  bool has_logprobs = false;
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};

// Copies an engine token event.
TokenOutput token_output(const lpx_token_event& event);

struct ChoiceOutcome {
  lpx_finish_reason reason = LPX_FINISH_ERROR;
  bool timed_out = false;  // cancelled because the request passed its deadline
  std::string error;       // FINISH_ERROR
  lpx_status_code error_code = LPX_OK;
  std::uint32_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  double ttft_ms = 0, tokens_per_second = 0, total_ms = 0;
};

// Copies an engine result; `timed_out` is the caller's knowledge of why it was cancelled.
ChoiceOutcome choice_outcome(const lpx_request_result& result, bool timed_out);

}  // namespace lpx::openai
