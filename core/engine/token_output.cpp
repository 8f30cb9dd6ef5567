// The engine's third stage: tokens and results out. Each picked token is checked against the
// end of generation, stop strings and limits, its text decoded and repaired, its
// log-probabilities computed, and streamed to the request's callback; an ending flushes the
// text held back and reports the result.
#include "engine/token_output.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <string_view>

#include "lpx/cpp/status.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::core {

TokenOutput::TokenOutput(const Tokenizer& tokenizer, std::uint32_t context_size, std::uint32_t n_vocab)
    : tokenizer_(tokenizer), context_size_(context_size), n_vocab_(n_vocab) {}

void TokenOutput::compute_logprobs(Request& r, std::int32_t token, const float* logits) {
  // log p(i) = l(i) - log(sum_j exp(l(j))), summed from the maximum for range.
  const std::uint32_t n = n_vocab_;
  float max = logits[0];
  for (std::uint32_t i = 1; i < n; ++i) max = std::max(max, logits[i]);
  double sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i] - max));
  const double log_z = static_cast<double>(max) + std::log(sum);
  const auto entry = [&](std::int32_t id) {
    auto piece = tokenizer_.piece(id, true);
    const std::string_view text = piece ? *piece : std::string_view{};
    return lpx_token_logprob{id, static_cast<float>(static_cast<double>(logits[id]) - log_z),
                             text.data(), text.size()};
  };
  r.chosen_logprob = entry(token);
  // The k most likely by insertion into a short sorted list (k <= 20, no allocation).
  const std::size_t k = r.top.size();
  std::size_t filled = 0;
  for (std::uint32_t i = 0; i < n && k > 0; ++i) {
    const float l = logits[i];
    if (filled == k && l <= logits[r.top[k - 1].token]) continue;
    std::size_t at = std::min(filled, k - 1);
    while (at > 0 && logits[r.top[at - 1].token] < l) {
      r.top[at] = r.top[at - 1];
      --at;
    }
    r.top[at].token = static_cast<std::int32_t>(i);
    filled = std::min(filled + 1, k);
  }
  for (lpx_token_logprob& t : r.top) t = entry(t.token);
}

std::optional<Ending> TokenOutput::deliver(Request& r, std::int32_t token, const float* logits) {
  const auto now = Clock::now();
  if (r.generated == 0) r.first_token = now;
  r.last_token = now;
  const std::uint32_t index = r.generated++;
  if (r.logprobs) compute_logprobs(r, token, logits);
  auto emit = [&](std::string_view text) {
    if (r.on_token == nullptr) return;
    lpx_token_event event{};
    event.struct_size = sizeof(lpx_token_event);
    event.text = text.data();
    event.text_length = text.size();
    event.token = token;
    event.index = index;
    if (r.logprobs) {
      event.chosen = &r.chosen_logprob;
      event.top = r.top.data();
      event.top_count = static_cast<std::uint32_t>(r.top.size());
    }
    if (r.on_token(r.user, &event) != 0) r.cancel = true;
  };
  if (tokenizer_.is_end_of_generation(token) && !r.ignore_end_of_generation) {
    emit({});
    return Ending{LPX_FINISH_EOG};
  }
  auto piece = r.decoder->push(token);
  if (!piece) {
    // The model picked it: a fault of the model or the engine, not of the request.
    return Ending{LPX_FINISH_ERROR, "token " + std::to_string(token) + ": " + piece.error().message,
                  LPX_ERR_INTERNAL};
  }
  std::string_view text = *piece;
  if (!utf8::is_well_formed(text)) {  // stray bytes the model chose: shown as U+FFFD
    r.repaired.clear();
    utf8::append_repaired(r.repaired, text);
    text = r.repaired;
  }
  StopMatcher::Result out = r.stops.push(text);
  emit(out.text);
  if (out.stopped) return Ending{LPX_FINISH_STOP};
  if (r.max_tokens != 0 && r.generated >= r.max_tokens) return Ending{LPX_FINISH_LENGTH};
  if (r.sequence->tokens.size() + 1 > context_size_) {
    if (r.context_end_is_length) return Ending{LPX_FINISH_LENGTH};
    return Ending{LPX_FINISH_ERROR,
                  "the context is full (" + std::to_string(context_size_) +
                      " tokens); the answer was cut off here",
                  LPX_ERR_RESOURCE_EXHAUSTED};
  }
  r.next_token = token;
  return std::nullopt;
}

void TokenOutput::report(Request& r, const Ending& ending) const {
  const std::int32_t reason = ending.reason;
  if (reason != LPX_FINISH_STOP && reason != LPX_FINISH_ERROR && r.decoder) {
    // Text held back for a possible stop string (or an incomplete character) is still answer.
    // An unfinished character ends as one U+FFFD.
    const std::string tail = utf8::repair(r.decoder->flush());
    StopMatcher::Result out = r.stops.push(tail);
    std::string rest(out.text);
    rest += r.stops.finish();
    if (!rest.empty() && r.on_token != nullptr && reason != LPX_FINISH_CANCELLED) {
      lpx_token_event event{};
      event.struct_size = sizeof(lpx_token_event);
      event.text = rest.data();
      event.text_length = rest.size();
      event.token = -1;
      event.index = r.generated ? r.generated - 1 : 0;
      r.on_token(r.user, &event);
    }
  }
  lpx_request_result result{};
  result.struct_size = sizeof(lpx_request_result);
  result.finish_reason = reason;
  lpx_status* status = nullptr;
  if (reason == LPX_FINISH_ERROR) {
    status = make_status(ending.code, ending.error.c_str());
    result.error = status;
  }
  result.prompt_tokens = static_cast<std::uint32_t>(r.prompt.size());
  result.cached_tokens = r.cached;
  result.completion_tokens = r.generated;
  result.context_size = context_size_;
  result.draft_tokens = r.drafts_verified;
  result.accepted_draft_tokens = r.drafts_accepted;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto end = Clock::now();
  result.total_ms = ms(end - r.submitted);
  result.queue_ms = ms((r.admitted != Clock::time_point{} ? r.admitted : end) - r.submitted);
  if (r.generated > 0) {
    result.time_to_first_token_ms = ms(r.first_token - r.submitted);
    const double decode_ms = ms(r.last_token - r.first_token);
    result.decode_tokens_per_second = r.generated > 1 && decode_ms > 0
                                          ? (r.generated - 1) / (decode_ms / 1000.0)
                                          : 0.0;
  }
  r.on_done(r.user, &result);
  if (status != nullptr) status->release(status);
}

}  // namespace lpx::core
