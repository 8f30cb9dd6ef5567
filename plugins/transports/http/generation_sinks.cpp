#include "generation_sinks.hpp"

#include <algorithm>

namespace lpx::http {

std::optional<ApiError> outcome_error(const ChoiceOutcome& o) {
  switch (o.reason) {
    case LPX_FINISH_LENGTH:
    case LPX_FINISH_EOG:
    case LPX_FINISH_STOP:
      return std::nullopt;
    case LPX_FINISH_CANCELLED:
      if (o.timed_out) return ApiError(504, "timeout_error", "the request passed its deadline");
      return ApiError(503, "server_error", "the request was cancelled: the server is shutting down");
    default:
      return ApiError(500, "server_error", o.error.empty() ? "generation failed" : o.error);
  }
}

namespace {

// What the access log says of a request's choices: tokens summed as `usage` sums them (each
// prompt once, though its n choices each ran it), the first choice's time to first token and
// finish reason.
void record_outcome(AccessRecord& r, std::uint32_t choice, std::uint32_t n, const ChoiceOutcome& o) {
  if (choice % n == 0) {
    r.prompt_tokens += o.prompt_tokens;
    r.cached_tokens += o.cached_tokens;
  }
  r.completion_tokens += o.completion_tokens;
  if (o.completion_tokens > 0 && !r.ttft_ms) r.ttft_ms = o.ttft_ms;
  if (choice != 0) return;
  if (o.reason == LPX_FINISH_CANCELLED) {
    r.finish_reason = o.timed_out ? "timeout" : "cancelled";
  } else if (outcome_error(o)) {
    r.finish_reason = "error";
  } else {
    r.finish_reason = openai::finish_reason_name(o.reason);
  }
}

}  // namespace

// --- collected ------------------------------------------------------------------------------------

CollectingSink::CollectingSink(std::shared_ptr<Exchange> exchange, ResponseContext context,
                               std::uint32_t choices)
    : exchange_(std::move(exchange)), access_(exchange_->access()), context_(std::move(context)), choices_(choices) {}

void CollectingSink::on_token(std::uint32_t choice, TokenOutput token) {
  CollectedChoice& c = choices_[choice];
  c.text += token.text;
  if (token.has_logprobs) c.logprob_tokens.push_back(std::move(token));
}

void CollectingSink::on_choice_done(std::uint32_t choice, const ChoiceOutcome& outcome) {
  if (access_) record_outcome(access_->record, choice, std::max<std::uint32_t>(context_.n, 1), outcome);
  CollectedChoice& c = choices_[choice];
  c.outcome = outcome;
  // The end-of-generation token is not part of the answer.
  if (outcome.reason == LPX_FINISH_EOG && !c.logprob_tokens.empty()) c.logprob_tokens.pop_back();
}

void CollectingSink::on_all_done() {
  for (const CollectedChoice& c : choices_) {
    if (auto error = outcome_error(c.outcome)) {
      exchange_->respond_error(*error);
      return;
    }
  }
  exchange_->respond(200, boost::json::serialize(full_response_json(context_, choices_)),
                     "application/json");
}

// --- streamed -------------------------------------------------------------------------------------

StreamingSink::StreamingSink(std::shared_ptr<Exchange> exchange, ResponseContext context,
                             std::uint32_t choices, bool include_usage)
    : exchange_(std::move(exchange)),
      access_(exchange_->access()),
      context_(std::move(context)),
      include_usage_(include_usage),
      choices_(choices),
      outcomes_(choices) {}

void StreamingSink::begin() {
  exchange_->begin_events();
  if (context_.endpoint == Endpoint::kChat) {
    for (std::uint32_t i = 0; i < choices_.size(); ++i) send(role_chunk_json(context_, i));
  }
}

void StreamingSink::send(const boost::json::object& event) {
  exchange_->send_event(boost::json::serialize(event));
}

void StreamingSink::send_text(std::uint32_t choice, const std::string& text) {
  Choice& c = choices_[choice];
  boost::json::value logprobs = logprobs_json(context_, c.pending_logprobs, c.text_sent);
  c.pending_logprobs.clear();
  c.text_sent += text.size();
  send(chunk_json(context_, choice, text, std::move(logprobs), nullptr));
}

void StreamingSink::on_token(std::uint32_t choice, TokenOutput token) {
  Choice& c = choices_[choice];
  if (token.has_logprobs) c.pending_logprobs.push_back(token);
  if (token.text.empty()) return;  // logprobs wait for the text they belong to
  if (!context_.tools.active()) {
    send_text(choice, token.text);
    return;
  }
  c.answer += token.text;
  // Whitespace before the answer is not content (the whole answer's content starts after it).
  const std::size_t start = openai::content_start(c.answer);
  if (start == c.answer.size()) return;
  c.text_sent = std::max(c.text_sent, start);
  const std::size_t content = openai::content_before_calls(c.answer, context_.tools);
  if (content > c.text_sent) send_text(choice, c.answer.substr(c.text_sent, content - c.text_sent));
}

void StreamingSink::on_choice_done(std::uint32_t choice, const ChoiceOutcome& outcome) {
  if (access_) record_outcome(access_->record, choice, std::max<std::uint32_t>(context_.n, 1), outcome);
  outcomes_[choice] = outcome;
  if (auto error = outcome_error(outcome)) {
    if (!error_) error_ = error;
    return;
  }
  if (context_.endpoint == Endpoint::kGenerate) return;  // its final event carries the reason
  Choice& c = choices_[choice];
  if (outcome.reason == LPX_FINISH_EOG && !c.pending_logprobs.empty()) c.pending_logprobs.pop_back();
  bool called_tools = false;
  if (context_.tools.active()) {
    // What was held back: the calls, and the content around them.
    openai::ParsedAnswer answer = openai::parse_tool_calls(c.answer, context_.tools);
    called_tools = !answer.calls.empty();
    const std::string& content = called_tools ? answer.content : c.answer;
    const std::size_t start = std::max(c.text_sent, openai::content_start(content));
    std::string rest = start < content.size() ? content.substr(start) : std::string();
    if (called_tools) rest.erase(std::min(rest.size(), rest.find_last_not_of(" \t\r\n") + 1));
    if (!rest.empty()) send_text(choice, rest);
    if (called_tools) send(openai::tool_calls_chunk_json(context_, choice, answer.calls));
  }
  boost::json::value logprobs =
      c.pending_logprobs.empty() ? boost::json::value() : logprobs_json(context_, c.pending_logprobs, c.text_sent);
  if (!context_.logprobs) logprobs = nullptr;
  send(chunk_json(context_, choice, "", std::move(logprobs), finish_reason_name(outcome.reason, called_tools)));
}

void StreamingSink::on_all_done() {
  if (error_) {
    exchange_->send_event(error_->body());
  } else if (include_usage_ || context_.endpoint == Endpoint::kGenerate) {
    send(usage_chunk_json(context_, outcomes_));
  }
  exchange_->send_event("[DONE]");
  exchange_->end_events();
}

}  // namespace lpx::http
