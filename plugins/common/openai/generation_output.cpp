#include "generation_output.hpp"

namespace lpx::openai {

TokenOutput token_output(const lpx_token_event& event) {
  TokenOutput out;
  out.text.assign(event.text, event.text_length);
  if (event.chosen != nullptr) {
    const auto copy = [](const lpx_token_logprob& t) {
      return TokenLogprob{t.token, t.logprob, std::string(t.piece, t.piece_length)};
    };
    out.has_logprobs = true;
    out.chosen = copy(*event.chosen);
    out.top.reserve(event.top_count);
    for (std::uint32_t i = 0; i < event.top_count; ++i) out.top.push_back(copy(event.top[i]));
  }
  return out;
}

ChoiceOutcome choice_outcome(const lpx_request_result& r, bool timed_out) {
  ChoiceOutcome o;
  o.reason = static_cast<lpx_finish_reason>(r.finish_reason);
  o.timed_out = o.reason == LPX_FINISH_CANCELLED && timed_out;
  if (r.error != nullptr) {
    o.error = r.error->message ? r.error->message : "";
    o.error_code = static_cast<lpx_status_code>(r.error->code);
  }
  o.prompt_tokens = r.prompt_tokens;
  o.cached_tokens = r.cached_tokens;
  o.completion_tokens = r.completion_tokens;
  o.ttft_ms = r.time_to_first_token_ms;
  o.tokens_per_second = r.decode_tokens_per_second;
  o.total_ms = r.total_ms;
  return o;
}

}  // namespace lpx::openai
